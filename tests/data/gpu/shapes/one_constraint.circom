pragma circom 2.0.0;
// One constraint and one public signal: a 2^2 domain (scripts/gpu_shape_fixtures.sh).
template Product() {
  signal input a;
  signal input b;
  signal output c;
  c <== a * b;
}
component main = Product();
