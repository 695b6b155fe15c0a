pragma circom 2.0.0;
// Hundreds of public signals, wires past the constraints: 128 public inputs and their fourth powers
// as 128 outputs, 384 constraints, 513 wires and 256 public signals in a 2^10 domain.
template Fourth(n) {
  signal input in[n];
  signal output out[n];
  signal sq[n];
  signal cube[n];
  for (var i = 0; i < n; i++) {
    sq[i] <== in[i] * in[i];
    cube[i] <== sq[i] * in[i];
    out[i] <== cube[i] * in[i];
  }
}
component main {public [in]} = Fourth(128);
