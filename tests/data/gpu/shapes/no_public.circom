pragma circom 2.0.0;
// Two constraints and no public signal at all: the inputs are private and nothing is output.
template Hidden() {
  signal input a;
  signal input b;
  signal c;
  signal d;
  c <== a * b;
  d <== c * a;
}
component main = Hidden();
