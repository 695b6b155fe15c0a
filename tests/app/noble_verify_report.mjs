// An independent check of a coprove run report or job result: every proof verified by
// @noble/curves' BLS12-381 pairing (pure JavaScript, no code shared with coprove) from bellman's
// 192 bytes and the bellman `vk` file, through the Groth16 check of
// tests/groth16/noble_groth16_verify.mjs.
//
//   node noble_verify_report.mjs REPORT VK
//
// REPORT is {"results": [JOB, ...]} or one JOB ({"job_id", "request": {"partitions", ...},
// "partitions": [{"index", "proof", "public_inputs"}, ...]}); VK is a bellman vk file or a key
// directory (its vk). Each job's partitions must be exactly 0..partitions-1, once each. The public
// inputs are taken as written: recomputing them would need coprove's circuits, which this check
// leaves out on purpose. Prints one line a proof or missing partition ("job J partition P: OK"
// or "job J partition P: FAILED: why") and a summary; exit status 0 when all verify, 1 when any does not, 2 when a file cannot be read.
import { parseVk, verify, nobleVersion } from '../groth16/noble_groth16_verify.mjs';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

let vk, report;
try {
  let vkPath = process.argv[3];
  if (statSync(vkPath).isDirectory()) vkPath = join(vkPath, 'vk');
  vk = parseVk(new Uint8Array(readFileSync(vkPath)));
  report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
} catch (e) {
  console.error('noble_verify_report: ' + e.message);
  process.exit(2);
}

const jobs = Array.isArray(report.results) ? report.results : [report];
let checked = 0;
let verified = 0;
const failures = [];
jobs.forEach((job, position) => {
  const where = job && job.job_id !== undefined ? 'job ' + job.job_id : 'result ' + position;
  const expected = job && job.request ? job.request.partitions : undefined;
  const partitions = job && Array.isArray(job.partitions) ? job.partitions : null;
  if (!Number.isInteger(expected) || partitions === null) {
    failures.push(where + ': no request.partitions or no partitions array');
    console.log(where + ': FAILED: no request.partitions or no partitions array');
    return;
  }
  const seen = new Set();
  for (const p of partitions) {
    const label = where + ' partition ' + (p && p.index !== undefined ? p.index : '?');
    let verdict;
    if (!p || !Number.isInteger(p.index) || p.index < 0 || p.index >= expected) {
      verdict = [false, 'index is missing or beyond the job\'s ' + expected + ' partitions'];
    } else if (seen.has(p.index)) {
      verdict = [false, 'appears twice'];
    } else if (!Array.isArray(p.public_inputs)) {
      verdict = [false, 'no public_inputs'];
    } else {
      seen.add(p.index);
      try {
        verdict = verify(vk, p.proof, p.public_inputs);
      } catch (e) {
        verdict = [false, e.message];
      }
    }
    ++checked;
    if (verdict[0]) ++verified;
    console.log(label + ': ' + (verdict[0] ? 'OK' : 'FAILED: ' + verdict[1]));
    if (!verdict[0]) failures.push(label + ': ' + verdict[1]);
  }
  for (let i = 0; i < expected; ++i) {
    if (seen.has(i)) continue;
    failures.push(where + ' partition ' + i + ': missing');
    console.log(where + ' partition ' + i + ': FAILED: missing');
  }
});
console.log(
  'noble ' + nobleVersion() + ': ' + verified + ' of ' + checked + ' proofs verify; ' + failures.length + ' problem(s)',
);
process.exit(failures.length === 0 ? 0 : 1);
