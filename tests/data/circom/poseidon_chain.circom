pragma circom 2.0.0;
// Four Poseidon(2) hashes in a chain, out = H(H(H(H(x, k), k), k), k), with x public: a real
// circomlib circuit of about 2000 constraints (a 2^12 domain) for the zkey, wtns and r1cs tests.
// circomlib's Poseidon constants are BN254's; compiled with --prime bls12381 they are taken mod
// BLS12-381's r, which gives a valid circuit over that field (not a standard hash).
include "poseidon.circom";

template PoseidonChain(n) {
  signal input x;
  signal input k;
  signal output out;
  component h[n];
  for (var i = 0; i < n; i++) {
    h[i] = Poseidon(2);
    h[i].inputs[0] <== i == 0 ? x : h[i - 1].out;
    h[i].inputs[1] <== k;
  }
  out <== h[n - 1].out;
}

component main {public [x]} = PoseidonChain(4);
