// The floor bench_curve compares against: @noble/curves 2.x (pure JavaScript) on the same machine,
// one thread under node. Times one pairing, a two-pairing product, and G1 and G2 scalar
// multiplications by random scalars (noble's multiply, constant time, and multiplyUnsafe, variable
// time), and prints one JSON object: {"noble_version", "pairing_ms", "pairing2_ms",
// "g1_mul_us", "g1_mul_vartime_us", "g2_mul_us", "g2_mul_vartime_us"} (medians).
// Usage: node bench/noble_curve_floor.mjs [reps]   (node_modules at the repository root)
import { readFileSync } from 'node:fs';

let bls12_381;
try {
  ({ bls12_381 } = await import('@noble/curves/bls12-381.js'));
} catch (e) {
  console.error('noble_curve_floor: @noble/curves is not installed (run scripts/setup.sh): ' + e.message);
  process.exit(2);
}
let version = 'unknown';
try {
  // bls12-381.js sits at the package root, next to its package.json
  const manifest = new URL('./package.json', import.meta.resolve('@noble/curves/bls12-381.js'));
  version = JSON.parse(readFileSync(manifest, 'utf8')).version;
} catch {
  // the version is informational only
}

const reps = Number(process.argv[2] ?? 15);
const { G1, G2 } = bls12_381;
const r = bls12_381.fields.Fr.ORDER;
let seed = 0x9e3779b97f4a7c15n;
const random_scalar = () => {
  // splitmix-style 64-bit steps, four words, reduced mod r (reproducible, not for keys)
  let v = 0n;
  for (let i = 0; i < 4; ++i) {
    seed = (seed + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
    let z = seed;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
    v = (v << 64n) | (z ^ (z >> 31n));
  }
  return (v % (r - 1n)) + 1n;
};

function median_ms(fn) {
  fn();  // warm up (JIT, lazily built tables)
  const times = [];
  for (let i = 0; i < reps; ++i) {
    const start = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const p1 = G1.Point.BASE.multiply(random_scalar());
const q1 = G2.Point.BASE.multiply(random_scalar());
const p2 = G1.Point.BASE.multiply(random_scalar());
const q2 = G2.Point.BASE.multiply(random_scalar());
const scalars = Array.from({ length: 4 }, random_scalar);
let k = 0;
const next_scalar = () => scalars[k++ % scalars.length];

const out = {
  noble_version: version,
  pairing_ms: median_ms(() => bls12_381.pairing(p1, q1)),
  pairing2_ms: median_ms(() => bls12_381.pairingBatch([{ g1: p1, g2: q1 }, { g1: p2, g2: q2 }])),
  g1_mul_us: 1e3 * median_ms(() => p1.multiply(next_scalar())),
  g1_mul_vartime_us: 1e3 * median_ms(() => p1.multiplyUnsafe(next_scalar())),
  g2_mul_us: 1e3 * median_ms(() => q1.multiply(next_scalar())),
  g2_mul_vartime_us: 1e3 * median_ms(() => q1.multiplyUnsafe(next_scalar())),
};
console.log(JSON.stringify(out));
