pragma circom 2.0.0;
// y = x^3 + x + 5 with y public: the smallest circuit with a private input, for the refusal tests
// (a witness of another circuit, a key of another curve or protocol).
template Cube() {
  signal input x;
  signal output y;
  signal x2;
  x2 <== x * x;
  y <== x2 * x + x + 5;
}

component main = Cube();
