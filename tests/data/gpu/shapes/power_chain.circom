pragma circom 2.0.0;
// y = x^(n + 2) by a chain of n + 1 products, x public: n + 1 constraints and two public signals,
// which with the row of the constant one take n + 4 rows of the domain (snarkjs's rule).
template PowerChain(n) {
  signal input x;
  signal output y;
  signal t[n];
  t[0] <== x * x;
  for (var i = 1; i < n; i++) t[i] <== t[i - 1] * x;
  y <== t[n - 1] * x;
}
