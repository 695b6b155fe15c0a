#!/usr/bin/env bash
# Proves the example's witnesses with coprove and checks the proofs with snarkjs and with
# `coprove verify`; a proof with a changed public signal must be refused by both.
#
# usage: examples/circom/prove.sh COPROVE [OUT [FLAGS...]]   (OUT as given to build.sh; FLAGS go to
#        coprove prove, e.g. --backend host)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
coprove="$1"
out="${2:-$repo/build/examples/circom}"
shift $(( $# < 2 ? $# : 2 ))
snarkjs() { node "$repo/node_modules/snarkjs/cli.js" "$@"; }

"$coprove" prove --zkey "$out/range_proof.zkey" --r1cs "$out/range_proof.r1cs" \
  --witness "$out/witness_a.wtns" "$out/witness_b.wtns" --out "$out/proofs" --progress none "$@"

for w in witness_a witness_b; do
  snarkjs groth16 verify "$out/verification_key.json" "$out/proofs/$w.public.json" "$out/proofs/$w.proof.json"
  "$coprove" verify --vk "$out/verification_key.json" --proof "$out/proofs/$w.proof.json" \
    --public "$out/proofs/$w.public.json"
done

# The public output y plus one: both verifiers must refuse it.
node -e 'const fs = require("fs"); const p = JSON.parse(fs.readFileSync(process.argv[1]));
  p[0] = (BigInt(p[0]) + 1n).toString(); fs.writeFileSync(process.argv[2], JSON.stringify(p));' \
  "$out/proofs/witness_a.public.json" "$out/proofs/tampered.public.json"
if snarkjs groth16 verify "$out/verification_key.json" "$out/proofs/tampered.public.json" \
    "$out/proofs/witness_a.proof.json" | grep -q "OK"; then
  echo "prove.sh: snarkjs accepted a tampered public signal" >&2; exit 1
fi
if "$coprove" verify --vk "$out/verification_key.json" --proof "$out/proofs/witness_a.proof.json" \
    --public "$out/proofs/tampered.public.json"; then
  echo "prove.sh: coprove verify accepted a tampered public signal" >&2; exit 1
fi
echo "prove.sh: both proofs verified by snarkjs and coprove verify; the tampered one refused by both"
