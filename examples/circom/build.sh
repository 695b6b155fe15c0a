#!/usr/bin/env bash
# Builds the example's circuit, its development key and two witnesses into OUT (default
# build/examples/circom), with the npm packages of the repository's package.json (circom2,
# circomlib, snarkjs): circom compiles for BLS12-381, snarkjs runs a fresh powers of tau and
# Groth16 setup (fixed entropy: an example key, not a production one), circom's wasm computes the
# witnesses. prove.sh then proves and verifies them.
#
# usage: examples/circom/build.sh [OUT]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:-$repo/build/examples/circom}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$repo"
snarkjs() { node node_modules/snarkjs/cli.js "$@"; }

# circom2 runs under WASI with the working directory as its root: relative paths only.
rel_out="$(realpath --relative-to="$repo" "$out")"
node node_modules/circom2/cli.js examples/circom/range_proof.circom --r1cs --wasm --prime bls12381 \
  -l node_modules/circomlib/circuits -o "$rel_out" >/dev/null

snarkjs powersoftau new bls12381 6 "$out/pot_0.ptau" >/dev/null
snarkjs powersoftau contribute "$out/pot_0.ptau" "$out/pot_1.ptau" --name=example -e="coprove example" >/dev/null
snarkjs powersoftau prepare phase2 "$out/pot_1.ptau" "$out/pot.ptau" >/dev/null
snarkjs groth16 setup "$out/range_proof.r1cs" "$out/pot.ptau" "$out/range_proof_0.zkey" >/dev/null
snarkjs zkey contribute "$out/range_proof_0.zkey" "$out/range_proof.zkey" --name=example -e="coprove example key" >/dev/null
snarkjs zkey export verificationkey "$out/range_proof.zkey" "$out/verification_key.json" >/dev/null

echo '{"x": "123456789", "offset": "7"}' > "$out/input_a.json"
echo '{"x": "4000000000", "offset": "11"}' > "$out/input_b.json"
for w in a b; do
  snarkjs wtns calculate "$out/range_proof_js/range_proof.wasm" "$out/input_$w.json" "$out/witness_$w.wtns" >/dev/null
done
echo "build.sh: range_proof.r1cs, range_proof.zkey, verification_key.json and witness_a/b.wtns in $out"
