pragma circom 2.0.0;
// Proves knowledge of a secret x below 2^32 whose square plus a public offset is the public
// output y: a small circuit (about 35 constraints) with circomlib's Num2Bits.
include "bitify.circom";

template RangeSquare(bits) {
  signal input x;       // private
  signal input offset;  // public
  signal output y;
  component range = Num2Bits(bits);
  range.in <== x;
  y <== x * x + offset;
}

component main {public [offset]} = RangeSquare(32);
