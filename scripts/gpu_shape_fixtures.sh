#!/usr/bin/env bash
# Makes the circuit-shape fixtures of the CUDA backend's tests in tests/data/gpu/shapes from the
# .circom sources there, with the npm packages of package.json (circom2, snarkjs): each circuit
# compiled for BLS12-381, a Groth16 zkey from one powers of tau of 2^10 (fixed entropy: for tests
# only), its verification_key.json and two witnesses from circom's wasm witness calculator; snarkjs
# proves and verifies each before it is kept. The files are committed, so the tests need none of
# this; rerun it after changing a circuit. The powers of tau (a few minutes on two shared cores) are
# kept in $PTAU_DIR (default build/shapes) and reused.
#
#   one_constraint  1 constraint, 1 public signal, 4 wires (2^2 domain)
#   no_public       2 constraints, no public signal (2^2)
#   wide_wires      61 constraints, 1 public, 122 wires: more wires than the 2^6 domain has rows
#   many_public     384 constraints, 513 wires, 256 public (128 inputs, 128 outputs; 2^10)
#   domain_full     61 constraints + 2 public + the one: 64 rows, 2^6 exactly full
#   past_power      62 constraints + 2 public + the one: 65 rows, one past 2^6 (2^7)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
data=tests/data/gpu/shapes
work=build/shapes
ptau_dir="${PTAU_DIR:-$work}"
mkdir -p "$work/out" "$ptau_dir"
snarkjs() { node node_modules/snarkjs/cli.js "$@"; }

ptau="$ptau_dir/pot_bls12381_10.ptau"
if [ ! -f "$ptau" ]; then
  snarkjs powersoftau new bls12381 10 "$ptau_dir/pot_0.ptau" >/dev/null
  snarkjs powersoftau contribute "$ptau_dir/pot_0.ptau" "$ptau_dir/pot_1.ptau" --name=shapes \
    -e="coprove gpu shapes" >/dev/null
  snarkjs powersoftau prepare phase2 "$ptau_dir/pot_1.ptau" "$ptau" >/dev/null
fi

shape() {  # name input1-json input2-json
  local name="$1"
  node node_modules/circom2/cli.js "$data/$name.circom" --r1cs --wasm --prime bls12381 -o "$work/out" >/dev/null
  snarkjs groth16 setup "$work/out/$name.r1cs" "$ptau" "$work/out/${name}_0.zkey" >/dev/null
  snarkjs zkey contribute "$work/out/${name}_0.zkey" "$data/$name.zkey" --name=shapes \
    -e="coprove gpu shape $name" >/dev/null
  snarkjs zkey export verificationkey "$data/$name.zkey" "$data/$name.vk.json" >/dev/null
  local i=1
  for input in "$2" "$3"; do
    echo "$input" >"$work/input.json"
    snarkjs wtns calculate "$work/out/${name}_js/$name.wasm" "$work/input.json" "$data/${name}_$i.wtns" >/dev/null
    snarkjs groth16 prove "$data/$name.zkey" "$data/${name}_$i.wtns" "$work/proof.json" "$work/public.json"
    snarkjs groth16 verify "$data/$name.vk.json" "$work/public.json" "$work/proof.json" >/dev/null
    i=$((i + 1))
  done
}

# A JSON array of n values from node: f(i) for i = 0 .. n - 1.
values() { node -e "console.log(JSON.stringify(Array.from({length: $1}, (_, i) => String($2))))"; }

shape one_constraint '{"a": "3", "b": "5"}' '{"a": "123456789", "b": "987654321"}'
shape no_public '{"a": "7", "b": "11"}' '{"a": "1", "b": "0"}'
shape wide_wires "{\"x\": $(values 60 'i + 2')}" "{\"x\": $(values 60 '1000003 * i + 17')}"
shape many_public "{\"in\": $(values 128 'i + 1')}" "{\"in\": $(values 128 '7919 * i * i + 3')}"
shape domain_full '{"x": "3"}' '{"x": "65537"}'
shape past_power '{"x": "5"}' '{"x": "4294967297"}'
ls -l "$data"
