#!/usr/bin/env bash
# Makes the circom fixtures in tests/data/circom from the .circom sources there, with the npm
# packages of package.json (circom2, circomlib, snarkjs): each circuit compiled for BLS12-381
# (--prime bls12381), witnesses from circom's wasm witness calculator (snarkjs wtns calculate),
# development Groth16 keys from a fresh powers of tau, and the keys' verification_key.json.
# The files it writes are committed, so tests need none of this; rerun it after changing a circuit.
# The powers of tau are the slow part: on two shared cores, about 7 minutes for 2^12 and 47 for 2^15
# (the SHA-256 block; 43 of them preparing phase 2), growing a little faster than n. They are kept
# in $PTAU_DIR (default build/circom-fixtures, outside the committed tree) and reused. Entropy is fixed (-e), so these
# keys are for tests only.
#
# usage: scripts/make_circom_fixtures.sh [SET...]
#   small    the Poseidon chain (2^12) and the cube (refusal cases): committed
#   sha256   SHA-256 of a 32-byte message, one block (2^15): committed
#   sha256x2 SHA-256 of a 64-byte message, two blocks (2^16): build/circom-fixtures/sha256_2block*,
#            for bench_circom only (its zkey is too large to commit)
#   sha256_2eK (K = 16..20) SHA-256 of as many blocks as fit a 2^K domain, keyed by `coprove setup
#            --r1cs` (build/release/coprove, no powers of tau): build/circom-fixtures/sha256_2eK*,
#            for bench_circom only; sha256big makes all five
# With no SET: small and sha256.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
data=tests/data/circom
work=build/circom-fixtures
ptau_dir="${PTAU_DIR:-$work}"
mkdir -p "$work" "$ptau_dir"
snarkjs() { node node_modules/snarkjs/cli.js "$@"; }

# circom2 runs under WASI with the working directory as its root: paths must be relative, and
# symbolic links out of the tree (a shared node_modules) are not followed, so circomlib is copied.
rm -rf "$work/circomlib"
cp -RL node_modules/circomlib/circuits "$work/circomlib"
compile() {  # name prime [source dir]
  node node_modules/circom2/cli.js "${3:-$data}/$1.circom" --r1cs --wasm --prime "$2" \
    -l "$work/circomlib" -o "$work" >/dev/null
}

ptau() {  # curve power -> $ptau_dir/pot_<curve>_<power>.ptau, prepared for phase 2
  local out="$ptau_dir/pot_$1_$2.ptau"
  if [ ! -f "$out" ]; then
    snarkjs powersoftau new "$1" "$2" "$ptau_dir/pot_$1_$2_0.ptau" >/dev/null
    snarkjs powersoftau contribute "$ptau_dir/pot_$1_$2_0.ptau" "$ptau_dir/pot_$1_$2_1.ptau" \
      --name=fixtures -e="coprove circom fixtures $1 $2" >/dev/null
    snarkjs powersoftau prepare phase2 "$ptau_dir/pot_$1_$2_1.ptau" "$out" >/dev/null
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

# SHA-256 inputs: a message's bits, most significant bit of each byte first, as circomlib takes them.
message_bits() {  # text -> {"in": [...]}
  node -e 'const b = Buffer.from(process.argv[1]); const bits = [];
    for (const x of b) for (let i = 7; i >= 0; --i) bits.push((x >> i) & 1);
    console.log(JSON.stringify({in: bits}));' "$1"
}

small() {
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
}

# A SHA-256 circuit: its zkey, vk.json and two witnesses (messages of the length it hashes) in DIR.
sha256() {  # name power dir message1 message2
  compile "$1" bls12381
  groth16_key "$work/$1.r1cs" "$(ptau bls12381 "$2")" "$3/$1.zkey"
  snarkjs zkey export verificationkey "$3/$1.zkey" "$3/$1.vk.json" >/dev/null
  witness "$1" "$(message_bits "$4")" "$3/$1_1.wtns"
  witness "$1" "$(message_bits "$5")" "$3/$1_2.wtns"
  snarkjs groth16 prove "$3/$1.zkey" "$3/$1_1.wtns" "$work/proof.json" "$work/public.json"
  snarkjs groth16 verify "$3/$1.vk.json" "$work/public.json" "$work/proof.json"
}

# SHA-256 filling a 2^K domain, keyed by coprove itself. circomlib's Sha256(nBits) hashes
# floor((nBits + 64) / 512) + 1 blocks of 31264 constraints each (circom2 --O1, bls12381), and the
# 256 digest bits are public: snarkjs's domain is the smallest power of two above constraints + 256,
# so the most blocks that fit 2^K are floor((2^K - 257) / 31264), and the longest message of that
# many blocks has 64 blocks - 9 bytes.
sha256_domain() {  # K
  local k="$1" name="sha256_2e$1"
  local blocks=$(( ((1 << k) - 257) / 31264 ))
  local bytes=$(( 64 * blocks - 9 ))
  local coprove=build/release/coprove
  [ -x "$coprove" ] || { echo "make_circom_fixtures.sh: $name needs $coprove (cmake --build build/release --target coprove)" >&2; exit 2; }
  printf '%s\n' 'pragma circom 2.0.0;' \
    "// circomlib's SHA-256 of a $bytes-byte message: $blocks blocks, a 2^$k domain (scripts/make_circom_fixtures.sh)." \
    'include "sha256/sha256.circom";' "component main = Sha256($(( 8 * bytes )));" > "$work/$name.circom"
  compile "$name" bls12381 "$work"
  rm -f "$work/$name.zkey" "$work/$name.vk.json"
  "$coprove" setup --r1cs "$work/$name.r1cs" --zkey "$work/$name.zkey" --vk "$work/$name.vk.json"
  for i in 1 2; do
    local text
    text="$(node -e 'const [n, i] = process.argv.slice(1).map(Number); const part = `coprove: SHA-256 benchmark message ${i}, `;
      console.log(part.repeat(Math.ceil(n / part.length)).slice(0, n));' "$bytes" "$i")"
    witness "$name" "$(message_bits "$text")" "$work/${name}_$i.wtns"
  done
  # The key proves with coprove, and snarkjs accepts the proof.
  "$coprove" prove --zkey "$work/$name.zkey" --witness "$work/${name}_1.wtns" --out "$work/$name.proofs" \
    --backend host --progress none --log-level warning >/dev/null
  snarkjs groth16 verify "$work/$name.vk.json" "$work/$name.proofs/${name}_1.public.json" \
    "$work/$name.proofs/${name}_1.proof.json"
  ls -l "$work/$name".{r1cs,zkey,vk.json} "$work/${name}"_[12].wtns
}

[ $# -gt 0 ] || set -- small sha256
for set in "$@"; do
  case "$set" in
    small) small ;;
    # 32-byte messages: the message and its padding fill one block.
    sha256) sha256 sha256_block 15 "$data" "coprove: SHA-256 of one block #1" "coprove: SHA-256 of one block #2" ;;
    # 64-byte messages: the padding takes a second block.
    sha256x2) sha256 sha256_2block 16 "$work" \
      "coprove: SHA-256 of a 64-byte message, two blocks with padding 1" \
      "coprove: SHA-256 of a 64-byte message, two blocks with padding 2" ;;
    sha256_2e1[6-9] | sha256_2e20) sha256_domain "${set#sha256_2e}" ;;
    sha256big) for k in 16 17 18 19 20; do sha256_domain "$k"; done ;;
    *) echo "make_circom_fixtures.sh: unknown set '$set' (small, sha256, sha256x2, sha256_2e16..sha256_2e20 or sha256big)" >&2; exit 2 ;;
  esac
done
ls -l "$data"
