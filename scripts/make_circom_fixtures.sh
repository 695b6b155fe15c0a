#!/usr/bin/env bash
# Makes the circom fixtures in tests/data/circom from the .circom sources there, with the npm
# packages of package.json (circom2, circomlib, snarkjs): each circuit compiled for BLS12-381
# (--prime bls12381), witnesses from circom's wasm witness calculator (snarkjs wtns calculate),
# development Groth16 keys from a fresh powers of tau, and the keys' verification_key.json.
# The files it writes are committed, so tests need none of this; rerun it after changing a circuit.
# The powers of tau (the slow part: about 7 minutes for 2^12 on two cores) are kept in
# build/circom-fixtures and reused. Entropy is fixed (-e), so these keys are for tests only.
#
# usage: scripts/make_circom_fixtures.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
data=tests/data/circom
work=build/circom-fixtures
mkdir -p "$work"
snarkjs() { node node_modules/snarkjs/cli.js "$@"; }

# circom2 runs under WASI with the working directory as its root: paths must be relative.
compile() {  # name prime
  node node_modules/circom2/cli.js "$data/$1.circom" --r1cs --wasm --prime "$2" \
    -l node_modules/circomlib/circuits -o "$work" >/dev/null
}

ptau() {  # curve power -> $work/pot_<curve>_<power>.ptau, prepared for phase 2
  local out="$work/pot_$1_$2.ptau"
  if [ ! -f "$out" ]; then
    snarkjs powersoftau new "$1" "$2" "$work/pot_$1_$2_0.ptau" >/dev/null
    snarkjs powersoftau contribute "$work/pot_$1_$2_0.ptau" "$work/pot_$1_$2_1.ptau" \
      --name=fixtures -e="coprove circom fixtures $1 $2" >/dev/null
    snarkjs powersoftau prepare phase2 "$work/pot_$1_$2_1.ptau" "$out" >/dev/null
  fi
  echo "$out"
}

groth16_key() {  # r1cs ptau out.zkey
  snarkjs groth16 setup "$1" "$2" "$work/key_0.zkey" >/dev/null
  snarkjs zkey contribute "$work/key_0.zkey" "$3" --name=fixtures -e="coprove circom fixture key" >/dev/null
}

witness() {  # circuit input-json out.wtns
  echo "$2" > "$work/input.json"
  snarkjs wtns calculate "$work/$1_js/$1.wasm" "$work/input.json" "$3" >/dev/null
}

# The Poseidon chain: the circuit the prover tests and the example prove.
compile poseidon_chain bls12381
cp "$work/poseidon_chain.r1cs" "$data/"
groth16_key "$data/poseidon_chain.r1cs" "$(ptau bls12381 12)" "$data/poseidon_chain.zkey"
snarkjs zkey export verificationkey "$data/poseidon_chain.zkey" "$data/poseidon_chain.vk.json" >/dev/null
witness poseidon_chain '{"x": "1", "k": "2"}' "$data/poseidon_chain_1.wtns"
witness poseidon_chain '{"x": "12345678901234567890", "k": "987654321"}' "$data/poseidon_chain_2.wtns"

# The cube: another circuit's witness, and its keys for another protocol (plonk) and another
# curve (bn128).
compile cube bls12381
cp "$work/cube.r1cs" "$data/"
witness cube '{"x": "3"}' "$data/cube.wtns"
snarkjs plonk setup "$data/cube.r1cs" "$(ptau bls12381 5)" "$data/cube.plonk.zkey" >/dev/null
mkdir -p "$work/bn128"
node node_modules/circom2/cli.js "$data/cube.circom" --r1cs --prime bn128 -o "$work/bn128" >/dev/null
groth16_key "$work/bn128/cube.r1cs" "$(ptau bn128 5)" "$data/cube.bn128.zkey"

# Each fixture must prove and verify with snarkjs itself.
snarkjs groth16 prove "$data/poseidon_chain.zkey" "$data/poseidon_chain_1.wtns" "$work/proof.json" "$work/public.json"
snarkjs groth16 verify "$data/poseidon_chain.vk.json" "$work/public.json" "$work/proof.json"
ls -l "$data"
