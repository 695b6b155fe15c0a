// An independent Groth16 verifier for the tests: @noble/curves' BLS12-381 (pure JavaScript, no
// code shared with coprove) checks proofs from their bellman bytes against a bellman `vk` file.
//
//   node noble_groth16_verify.mjs VK_FILE CASES_JSON
//
// CASES_JSON is [{"name", "proof": hex of the 192 bytes (A, B, C compressed), "public": [decimal
// strings, without the constant one]}, ...]. Prints {"noble_version", "results": [{"name",
// "accepted", "reason"}]} on one line. A proof is accepted when its points decode (on the curve,
// in the subgroup, not the identity), the input count matches the vk's ic (bellman's rule
// public.length + 1 == ic.length), every input is below r, and
//   e(-A, B) e(alpha, beta) e(IC(x), gamma) e(C, delta) == 1.
// Exit status 2 when the files cannot be read. parseVk and verify are exported for the other test
// scripts (tests/app/noble_verify_report.mjs); importing the module runs nothing.
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const { G1, G2 } = bls12_381;
const { Fp12, Fr } = bls12_381.fields;

export function parseVk(bytes) {
  let offset = 0;
  const take = (n) => {
    if (offset + n > bytes.length) throw new Error('vk truncated at offset ' + offset);
    const out = bytes.subarray(offset, offset + n);
    offset += n;
    return out;
  };
  const g1 = () => G1.Point.fromBytes(take(96));
  const g2 = () => G2.Point.fromBytes(take(192));
  const vk = { alpha: g1(), beta1: g1(), beta: g2(), gamma: g2(), delta1: g1(), delta: g2() };
  const c = take(4);
  const count = ((c[0] << 24) | (c[1] << 16) | (c[2] << 8) | c[3]) >>> 0;
  vk.ic = [];
  for (let i = 0; i < count; i++) vk.ic.push(g1());
  if (offset !== bytes.length) throw new Error('vk has ' + (bytes.length - offset) + ' trailing bytes');
  return vk;
}

export function verify(vk, proofHex, publicInputs) {
  if (typeof proofHex !== 'string' || proofHex.length !== 384) return [false, 'proof is not 192 bytes'];
  let A, B, C;
  try {
    const bytes = Buffer.from(proofHex, 'hex');
    A = G1.Point.fromBytes(bytes.subarray(0, 48));
    B = G2.Point.fromBytes(bytes.subarray(48, 144));
    C = G1.Point.fromBytes(bytes.subarray(144, 192));
    for (const p of [A, B, C]) p.assertValidity();
  } catch (e) {
    return [false, 'proof does not decode: ' + e.message];
  }
  if (A.is0() || B.is0() || C.is0()) return [false, 'a proof point is the identity'];
  if (publicInputs.length + 1 !== vk.ic.length)
    return [false, 'vk takes ' + (vk.ic.length - 1) + ' inputs, got ' + publicInputs.length];
  let x = vk.ic[0];
  for (let i = 0; i < publicInputs.length; i++) {
    const s = BigInt(publicInputs[i]);
    if (s < 0n || s >= Fr.ORDER) return [false, 'input ' + i + ' is not below r'];
    if (s !== 0n) x = x.add(vk.ic[i + 1].multiply(s));
  }
  // noble refuses identity terms in a pairing product; they contribute one.
  const pairs = [
    { g1: A.negate(), g2: B },
    { g1: vk.alpha, g2: vk.beta },
    { g1: x, g2: vk.gamma },
    { g1: C, g2: vk.delta },
  ].filter((p) => !p.g1.is0() && !p.g2.is0());
  const ok = Fp12.eql(bls12_381.pairingBatch(pairs), Fp12.ONE);
  return [ok, ok ? '' : 'the pairing equation does not hold'];
}

export function nobleVersion() {
  // The package's exports do not include package.json: read it from node_modules at the root.
  try {
    const file = new URL('../../node_modules/@noble/curves/package.json', import.meta.url);
    return JSON.parse(readFileSync(file, 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

function main() {
  let vk, cases;
  try {
    vk = parseVk(new Uint8Array(readFileSync(process.argv[2])));
    cases = JSON.parse(readFileSync(process.argv[3], 'utf8'));
  } catch (e) {
    console.error('noble_groth16_verify: ' + e.message);
    process.exit(2);
  }
  const results = cases.map((c) => {
    const [accepted, reason] = verify(vk, c.proof, c.public);
    return { name: c.name, accepted, reason };
  });
  console.log(JSON.stringify({ noble_version: nobleVersion(), results }));
}

if (process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) main();
