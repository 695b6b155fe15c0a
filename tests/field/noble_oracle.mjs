// An independent BLS12-381 implementation for the field tests to compare against: @noble/curves
// 2.x (pure JavaScript, audited, no code shared with coprove) answers requests about G1, G2,
// encodings and pairings. The C++ side (noble_oracle.hpp) starts `node noble_oracle.mjs` once per
// test process and talks to it over pipes.
//
// Protocol: one JSON object per line on stdin, one JSON object per line on stdout, in order.
// Every request has "op" and may have "id" (echoed back). A request the oracle cannot serve gets
// {"id", "error": "<message>"}; every other answer has the fields listed below.
//
// Points are hex strings of their zcash/bellman encodings (compressed or uncompressed, noble
// accepts both; G1 48/96 bytes, G2 96/192). Scalars are decimal or 0x-hex strings, 0 <= s < r.
// Field elements are 0x-less big-endian hex of their canonical value, 96 digits.
//
//   g1_mul  {scalar, point?}  -> {compressed, uncompressed, x, y}    [scalar] point (default G1)
//   g2_mul  {scalar, point?}  -> {compressed, uncompressed, x: [c0, c1], y: [c0, c1]}
//   g1_add / g2_add {a, b}    -> the same fields as *_mul, for a + b
//   g1_decode / g2_decode {bytes} -> {valid: true, compressed, uncompressed} when noble accepts
//                                the bytes (length, flags, canonical, on curve, in the subgroup),
//                                else {valid: false, reason: noble's message}
//   g1_check {x, y} / g2_check {x: [c0, c1], y: [c0, c1]}
//                             -> {on_curve, torsion_free} for an affine point given by
//                                coordinates (used for points outside the subgroup, which no
//                                encoding can carry); torsion_free is null when not on the curve
//   pairing {g1, g2}          -> {fq12: [12 hex]}: e(g1, g2) after the final exponentiation
//                                (the identity in either argument gives one)
//   pairing_check {pairs: [{g1, g2}, ...]} -> {one: bool}: whether the product of the pairings is 1
//   final_exponentiation {fq12: [12 hex]} -> {fq12: [12 hex]}: f^((p^12 - 1) / r)
//   fq12_mul {a: [12 hex], b: [12 hex]} -> {fq12: [12 hex]}
//
// Fq12 order. noble builds the tower exactly as coprove does: Fp2 = Fp[u]/(u^2 + 1) with
// {c0, c1} = c0 + c1 u; Fp6 = Fp2[v]/(v^3 - (u + 1)) with {c0, c1, c2} = c0 + c1 v + c2 v^2;
// Fp12 = Fp6[w]/(w^2 - v) with {c0, c1} = c0 + c1 w. The 12 coefficients are listed with the Fp2
// index fastest, then Fp6, then Fp12:
//   [c0.c0.c0, c0.c0.c1, c0.c1.c0, c0.c1.c1, c0.c2.c0, c0.c2.c1,
//    c1.c0.c0, c1.c0.c1, c1.c1.c0, c1.c1.c1, c1.c2.c0, c1.c2.c1]
// so index i is fq12.c{i/6}.c{(i/2)%3}.c{i%2} in coprove's fq12 { fq6 c0, c1 } layout.
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { createInterface } from 'node:readline';

const { G1, G2 } = bls12_381;
const { Fp, Fp2, Fp12 } = bls12_381.fields;

const fp_hex = (v) => v.toString(16).padStart(96, '0');
const hex_fp = (h) => {
  if (typeof h !== 'string' || !/^[0-9a-fA-F]{1,96}$/.test(h)) throw new Error('bad Fp hex: ' + h);
  const v = BigInt('0x' + h);
  if (v >= Fp.ORDER) throw new Error('Fp value not below p');
  return v;
};
const hex_fp2 = (pair) => {
  if (!Array.isArray(pair) || pair.length !== 2) throw new Error('Fp2 must be [c0, c1]');
  return Fp2.create({ c0: hex_fp(pair[0]), c1: hex_fp(pair[1]) });
};
const fp2_hex = (v) => [fp_hex(v.c0), fp_hex(v.c1)];

function fq12_to_list(f) {
  const out = [];
  for (const c6 of [f.c0, f.c1])
    for (const c2 of [c6.c0, c6.c1, c6.c2]) out.push(fp_hex(c2.c0), fp_hex(c2.c1));
  return out;
}
function list_to_fq12(list) {
  if (!Array.isArray(list) || list.length !== 12) throw new Error('Fq12 must be 12 hex strings');
  const v = list.map(hex_fp);
  const fp2 = (i) => Fp2.create({ c0: v[i], c1: v[i + 1] });
  const fp6 = (i) => ({ c0: fp2(i), c1: fp2(i + 2), c2: fp2(i + 4) });
  return Fp12.create({ c0: fp6(0), c1: fp6(6) });
}

function parse_scalar(s) {
  if (typeof s !== 'string' || !/^(0x[0-9a-fA-F]+|[0-9]+)$/.test(s)) throw new Error('bad scalar: ' + s);
  const v = BigInt(s);
  if (v >= bls12_381.fields.Fr.ORDER) throw new Error('scalar not below r');
  return v;
}

// Decodes with every check noble has (fromHex validates the point, subgroup included).
const decode = (group, hex) => {
  if (typeof hex !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(hex)) throw new Error('bad hex bytes');
  const point = group.Point.fromHex(hex);
  point.assertValidity();
  return point;
};

function describe(point, is_g2) {
  const out = { compressed: point.toHex(true), uncompressed: point.toHex(false) };
  if (point.is0()) return { ...out, infinity: true };
  const a = point.toAffine();
  return is_g2 ? { ...out, x: fp2_hex(a.x), y: fp2_hex(a.y) } : { ...out, x: fp_hex(a.x), y: fp_hex(a.y) };
}

function check_affine(group, x, y, is_g2) {
  const F = is_g2 ? Fp2 : Fp;
  const b = is_g2 ? Fp2.create({ c0: 4n, c1: 4n }) : 4n; // 4 and 4(u + 1)
  const on_curve = F.eql(F.sqr(y), F.add(F.mul(F.sqr(x), x), b));
  if (!on_curve) return { on_curve: false, torsion_free: null };
  const point = group.Point.fromAffine({ x, y });
  return { on_curve: true, torsion_free: point.isTorsionFree() };
}

function pair_value(g1_hex, g2_hex) {
  const p = decode(G1, g1_hex);
  const q = decode(G2, g2_hex);
  return { p, q, trivial: p.is0() || q.is0() };
}

const ops = {
  g1_mul: (r) => describe((r.point ? decode(G1, r.point) : G1.Point.BASE).multiplyUnsafe(parse_scalar(r.scalar)), false),
  g2_mul: (r) => describe((r.point ? decode(G2, r.point) : G2.Point.BASE).multiplyUnsafe(parse_scalar(r.scalar)), true),
  g1_add: (r) => describe(decode(G1, r.a).add(decode(G1, r.b)), false),
  g2_add: (r) => describe(decode(G2, r.a).add(decode(G2, r.b)), true),
  g1_decode: (r) => decode_answer(G1, r.bytes, false),
  g2_decode: (r) => decode_answer(G2, r.bytes, true),
  g1_check: (r) => check_affine(G1, hex_fp(r.x), hex_fp(r.y), false),
  g2_check: (r) => check_affine(G2, hex_fp2(r.x), hex_fp2(r.y), true),
  pairing: (r) => {
    const { p, q, trivial } = pair_value(r.g1, r.g2);
    return { fq12: fq12_to_list(trivial ? Fp12.ONE : bls12_381.pairing(p, q)) };
  },
  pairing_check: (r) => {
    if (!Array.isArray(r.pairs)) throw new Error('pairs must be an array');
    // noble refuses identity terms; each contributes one to the product, so leave them out.
    const terms = r.pairs.map((t) => pair_value(t.g1, t.g2)).filter((t) => !t.trivial);
    const product = terms.length === 0 ? Fp12.ONE : bls12_381.pairingBatch(terms.map((t) => ({ g1: t.p, g2: t.q })));
    return { one: Fp12.eql(product, Fp12.ONE) };
  },
  final_exponentiation: (r) => ({ fq12: fq12_to_list(Fp12.finalExponentiate(list_to_fq12(r.fq12))) }),
  fq12_mul: (r) => ({ fq12: fq12_to_list(Fp12.mul(list_to_fq12(r.a), list_to_fq12(r.b))) }),
};

function decode_answer(group, hex, is_g2) {
  let point;
  try {
    point = decode(group, hex);
  } catch (e) {
    return { valid: false, reason: String(e.message ?? e) };
  }
  return { valid: true, ...describe(point, is_g2) };
}

const lines = createInterface({ input: process.stdin, terminal: false });
lines.on('line', (line) => {
  if (line.trim() === '') return;
  let id = null;
  let answer;
  try {
    const request = JSON.parse(line);
    id = request.id ?? null;
    const op = ops[request.op];
    if (!op) throw new Error('unknown op: ' + request.op);
    answer = { id, ...op(request) };
  } catch (e) {
    answer = { id, error: String(e.message ?? e) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
});
