// Times `snarkjs groth16 prove` in-process (node's start-up and module loading left out; the zkey
// and witness are read by each call, as snarkjs's CLI does): one warm-up, then RUNS timed calls.
// Each proof is verified with the zkey's verifying key so that a broken run cannot pass for a fast
// one. Prints {"snarkjs": VERSION, "ms": [...]} on stdout.
// usage: node bench/snarkjs_prove.mjs ZKEY WTNS RUNS
import { readFileSync } from "node:fs";
import * as snarkjs from "snarkjs";

const [zkey, wtns, runsText] = process.argv.slice(2);
const runs = Number(runsText ?? "3");
const version = JSON.parse(readFileSync(new URL("../node_modules/snarkjs/package.json", import.meta.url))).version;
const vk = await snarkjs.zKey.exportVerificationKey(zkey);
const ms = [];
for (let i = 0; i <= runs; ++i) {
  const start = performance.now();
  const { proof, publicSignals } = await snarkjs.groth16.prove(zkey, wtns);
  const elapsed = performance.now() - start;
  if (!(await snarkjs.groth16.verify(vk, publicSignals, proof))) {
    console.error("snarkjs_prove.mjs: snarkjs's own proof did not verify");
    process.exit(1);
  }
  if (i > 0) ms.push(elapsed);
}
console.log(JSON.stringify({ snarkjs: version, ms }));
process.exit(0);
