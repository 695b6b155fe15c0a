pragma circom 2.0.0;
// More wires than the domain has rows: 60 private inputs squared and one output, 61 constraints and
// one public signal in a 2^6 domain, 122 wires.
template Squares(n) {
  signal input x[n];
  signal sq[n];
  signal output o;
  for (var i = 0; i < n; i++) sq[i] <== x[i] * x[i];
  o <== sq[0] * sq[1];
}
component main = Squares(60);
