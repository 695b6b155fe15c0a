#!/usr/bin/env python3
"""Mutation sweep of every file reader, through the real `coprove` binary.

For each of the eleven file kinds coprove reads (zkey, wtns, r1cs, bellman params and vk, key.json,
the PCE cache file, run reports, snarkjs proof.json / public.json / verification_key.json) it makes
one valid file with the binary under test (setup, prove, run at small sizes, insecure seeds), then
feeds mutants of it to the command that reads that kind:

  zkey, wtns, r1cs   coprove prove --zkey Z --witness W [--r1cs R]
  params, key.json   coprove run --keys DIR (key.json's hashes follow a mutated params, so the
                     params themselves are what is tested)
  pce                coprove run --pce-cache DIR (a refused cache file is rebuilt, said at warning)
  vk, report         coprove verify REPORT --vk VK (a bellman vk file)
  vk.json, proof.json, public.json
                     coprove verify --vk VK.json --proof P --public PUB

Mutants: N random ones (bit flips, bytes set, truncation, extension), and every count or size
field set to 2^31 and 2^32-1 (u32) and also 2^63 and 2^64-1 (u64), byte order as the format has it;
in JSON files every number is set to 27 (a large circuit) and those four values. Then the files
issue 42 found mishandled (kind "crafted": a zkey whose domainSize is raised with a coefficient
moved to its last row, a vk with gamma and delta at infinity, a key.json claiming mimc/24, a report
naming circuit "mimc "), which must all be refused: one accepted fails the sweep like a crash.

Each run is under a wall-clock timeout and an address-space limit (so that a reader that trusts a
count cannot take the machine down), its peak RSS taken from wait4. Outcomes:
  clear     refused (exit 1 or 2; for pce, exit 0 with a warning) naming the file
  unnamed   refused without naming the file
  accepted  exit 0 (for pce: the cache file was used)
  crash     killed by a signal, or an exit status coprove does not document
  memory    peak RSS above the format's limit (killed at the timeout or not), or an allocation
            failed (bad_alloc)
  hang      ran past the timeout within the memory limit

Prints a table of formats x outcomes (and the largest peak RSS per format) and writes every run to
JSON. Exit status 0 when no run crashed, hung or hit the memory limit, 1 otherwise, 2 when the
valid files cannot be made.

  scripts/mutation_sweep.py --coprove build/release/coprove [--mutants 40] [--json sweep.json]
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CIRCOM = REPO / "tests" / "data" / "circom"

OUTCOMES = ["clear", "unnamed", "accepted", "crash", "memory", "hang"]
FAILING = {"crash", "hang", "memory"}
U32_HUGE = [2**31, 2**32 - 1]
U64_HUGE = U32_HUGE + [2**63, 2**64 - 1]
JSON_HUGE = [27] + U64_HUGE
# JSON keys whose numbers are tried first when a format has more numbers than --max-fields.
JSON_PRIORITY = ["partitions", "log_constraints", "index", "seed", "job_id", "num_inputs", "num_aux",
                 "num_constraints", "domain_size", "nPublic", "format_version", "insecure_seed", "jobs"]


# ---- running the binary ----

def run_limited(argv, timeout, as_limit_bytes, env, cwd):
    """Runs argv; returns (status, signal, peak_kb, seconds, timed_out, output)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (as_limit_bytes, as_limit_bytes))
        os.setsid()
    out = tempfile.TemporaryFile()
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            preexec_fn=limit, env=env, cwd=cwd)
    timed_out = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        if time.monotonic() - started > timeout:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.02)
    proc.returncode = 0  # reaped by wait4; keeps Popen from waiting again
    seconds = time.monotonic() - started
    out.seek(0)
    output = out.read().decode("utf-8", "replace")
    out.close()
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    return code, sig, usage.ru_maxrss, seconds, timed_out, output


# ---- mutants ----

def random_mutants(seed_bytes, count, rng):
    kinds = ["bitflip", "byteset", "truncate", "extend"]
    out = []
    for i in range(count):
        kind = kinds[i % len(kinds)]
        b = bytearray(seed_bytes)
        if kind == "bitflip":
            for _ in range(rng.randint(1, 4)):
                at = rng.randrange(len(b))
                b[at] ^= 1 << rng.randrange(8)
            what = "bit flips"
        elif kind == "byteset":
            for _ in range(rng.randint(1, 4)):
                b[rng.randrange(len(b))] = rng.choice([0x00, 0xff, 0x7f, 0x80, rng.randrange(256)])
            what = "bytes set"
        elif kind == "truncate":
            cut = rng.randrange(len(b))
            b = b[:cut]
            what = f"truncated to {cut}"
        else:
            if rng.random() < 0.5:
                extra = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
            else:
                start = rng.randrange(len(b))
                extra = bytes(b[start:start + rng.randint(1, 256)])
            b += extra
            what = f"extended by {len(extra)}"
        out.append((kind, what, bytes(b)))
    return out


def set_field(data, offset, size, value, big_endian):
    fmt = (">" if big_endian else "<") + ("I" if size == 4 else "Q")
    if offset + size > len(data):
        return None
    return data[:offset] + struct.pack(fmt, value) + data[offset + size:]


def field_mutants(data, fields):
    """fields: [(name, offset, size, big_endian)] -> mutants with each field set to each huge value."""
    out = []
    for name, offset, size, big_endian in fields:
        for value in (U32_HUGE if size == 4 else U64_HUGE):
            mutated = set_field(data, offset, size, value, big_endian)
            if mutated is not None:
                out.append(("field", f"{name}@{offset}={value}", mutated))
    return out


def binfile_fields(data, inner):
    """iden3 container fields: version, section count, each section's type and size, and the fields
    `inner(type, start, payload)` names inside sections."""
    fields = [("version", 4, 4, False), ("sections", 8, 4, False)]
    at = 12
    while at + 12 <= len(data):
        stype, size = struct.unpack_from("<IQ", data, at)
        fields.append((f"section{stype}.type", at, 4, False))
        fields.append((f"section{stype}.size", at + 4, 8, False))
        payload = at + 12
        fields += [(f"section{stype}.{n}", payload + o, s, False) for n, o, s in inner(stype, data[payload:payload + size])]
        at = payload + size
    return fields


def u32_at(payload, offset):
    return struct.unpack_from("<I", payload, offset)[0] if offset + 4 <= len(payload) else 0


def zkey_inner(stype, p):
    if stype == 1:
        return [("protocol", 0, 4)]
    if stype == 2:
        n8q = u32_at(p, 0)
        r_at = 4 + n8q
        n8r = u32_at(p, r_at)
        counts = r_at + 4 + n8r
        return [("n8q", 0, 4), ("n8r", r_at, 4), ("nVars", counts, 4), ("nPublic", counts + 4, 4),
                ("domainSize", counts + 8, 4)]
    if stype == 4:
        return [("count", 0, 4), ("matrix", 4, 4), ("constraint", 8, 4), ("signal", 12, 4)]
    return []


def wtns_inner(stype, p):
    if stype == 1:
        return [("n8", 0, 4), ("nWitness", 4 + u32_at(p, 0), 4)]
    return []


def r1cs_inner(stype, p):
    if stype == 1:
        at = 4 + u32_at(p, 0)
        return [("fs", 0, 4), ("nWires", at, 4), ("nPubOut", at + 4, 4), ("nPubIn", at + 8, 4),
                ("nPrvIn", at + 12, 4), ("nLabels", at + 16, 8), ("mConstraints", at + 24, 4)]
    if stype == 2:
        return [("nFactors", 0, 4), ("wire", 4, 4)]
    return []


def bellman_vk_fields(data):
    return [("ic_count", 864, 4, True)]


def bellman_params_fields(data):
    fields = [("ic_count", 864, 4, True)]
    at = 868 + 96 * struct.unpack_from(">I", data, 864)[0]
    for name, point in [("h", 96), ("l", 96), ("a", 96), ("b_g1", 96), ("b_g2", 192)]:
        if at + 4 > len(data):
            break
        fields.append((f"{name}_count", at, 4, True))
        at += 4 + point * struct.unpack_from(">I", data, at)[0]
    return fields


def pce_fields(data):
    fields = [("version", 8, 4, False), ("reserved", 12, 4, False), ("entries", 16, 8, False),
              ("id_size", 24, 4, False)]
    at = 28 + u32_at(data, 24)
    names = ["digest", "num_inputs", "num_aux", "num_rows", "domain_size", "coefficients", "nnz_a", "nnz_b", "nnz_c"]
    fields += [(n, at + 8 * i, 8, False) for i, n in enumerate(names)]
    return fields


def json_numbers(text):
    """(start, end, key) of every number token outside strings; key is the object key it is the
    value of (or the last key seen, for array elements)."""
    out, i, n = [], 0, len(text)
    last_string, key = None, None
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            last_string = text[i + 1:j]
            i = j + 1
            continue
        if c == ":":
            key = last_string
        elif c == "-" or c.isdigit():
            j = i + 1
            while j < n and (text[j].isdigit() or text[j] in ".eE+-"):
                j += 1
            out.append((i, j, key))
            i = j
            continue
        i += 1
    return out


def json_mutants(data, max_fields, rng):
    text = data.decode("utf-8")
    numbers = json_numbers(text)
    rank = {k: i for i, k in enumerate(JSON_PRIORITY)}
    numbers.sort(key=lambda t: (rank.get(t[2], len(rank)), t[0]))
    out = []
    for start, end, key in numbers:
        for value in JSON_HUGE:
            out.append(("field", f"{key}@{start}={value}", (text[:start] + str(value) + text[end:]).encode()))
    return out[:max_fields]


def crafted_mutants(fmt, data):
    """Files that issue 42 found each reader mishandling: each must be refused."""
    out = []
    if fmt == "zkey":
        sections, at = {}, 12
        while at + 12 <= len(data):
            stype, size = struct.unpack_from("<IQ", data, at)
            sections[stype] = at + 12
            at += 12 + size
        header = sections[2]
        r_at = header + 4 + struct.unpack_from("<I", data, header)[0]
        domain_at = r_at + 4 + struct.unpack_from("<I", data, r_at)[0] + 8
        for log in (26, 28):
            b = set_field(data, domain_at, 4, 1 << log, False)
            b = set_field(b, sections[4] + 8, 4, (1 << log) - 1, False)
            out.append(("crafted", f"domainSize 2^{log}, coefficient 0 on its last row", b))
    elif fmt == "vk":
        b = bytearray(data)
        for offset, size in [(384, 192), (576, 96), (672, 192)]:
            b[offset:offset + size] = bytes([0x40]) + bytes(size - 1)
        out.append(("crafted", "gamma_g2, delta_g1, delta_g2 at infinity", bytes(b)))
    elif fmt == "key.json":
        # The structure digest of this build's mimc/24 (r1cs::make_circuit("mimc", 24)->structure_digest()).
        k = json.loads(data)
        k.update(log_constraints=24, circuit_id="mimc/24", structure_digest="0x69c91f8a28135147")
        out.append(("crafted", "claims mimc/24 (its id and digest)", json.dumps(k, indent=2).encode()))
    elif fmt == "report":
        r = json.loads(data)
        r["results"][0]["request"]["circuit"] = "mimc "
        out.append(("crafted", "circuit 'mimc ' (not built in)", json.dumps(r).encode()))
    return out


# ---- the formats ----

class Sweep:
    def __init__(self, args):
        self.args = args
        self.coprove = str(Path(args.coprove).resolve())
        self.work = Path(tempfile.mkdtemp(prefix="coprove-sweep-", dir=args.work_dir))
        self.env = dict(os.environ, XDG_CACHE_HOME=str(self.work / "cache"), HOME=str(self.work))
        self.as_limit = args.as_limit_mb << 20

    def coprove_ok(self, *argv):
        r = subprocess.run([self.coprove, *argv], env=self.env, cwd=self.work, capture_output=True, text=True,
                           timeout=600)
        if r.returncode != 0:
            sys.exit(f"mutation_sweep: making the valid files failed: coprove {' '.join(argv)}\n{r.stdout}{r.stderr}")

    def make_seeds(self):
        w = self.work / "seed"
        w.mkdir()
        self.coprove_ok("setup", "--circuit", "mimc", "--log-constraints", "10", "--out", str(w / "keys"),
                        "--insecure-seed", "7", "--log-level", "error")
        self.coprove_ok("setup", "--r1cs", str(CIRCOM / "cube.r1cs"), "--zkey", str(w / "cube.zkey"), "--vk",
                        str(w / "cube.vk.json"), "--insecure-seed", "3", "--log-level", "error")
        self.coprove_ok("prove", "--zkey", str(w / "cube.zkey"), "--witness", str(CIRCOM / "cube.wtns"), "--out",
                        str(w / "proof"), "--backend", "host", "--progress", "none", "--log-level", "error")
        (w / "pce").mkdir()
        self.coprove_ok("run", "--keys", str(w / "keys"), *self.run_flags(), "--partitions", "2", "--pce-cache",
                        str(w / "pce"), "--json", str(w / "report.json"))
        self.seed = w

    def run_flags(self):
        return ["--circuit", "mimc", "--log-constraints", "10", "--partitions", "1", "--jobs", "1", "--backend",
                "host", "--host-threads", "1", "--synthesis-threads", "1", "--progress", "none",
                "--log-level", "warning"]

    def key_dir(self, into, params=None, key_json=None):
        """A copy of the seed key directory in `into`, with `params` or `key.json` replaced (key.json's
        params hash following a replaced params)."""
        d = into / "keys"
        shutil.copytree(self.seed / "keys", d)
        if params is not None:
            old = hashlib.sha256((self.seed / "keys" / "params").read_bytes()).hexdigest()
            (d / "params").write_bytes(params)
            text = (d / "key.json").read_text().replace(old, hashlib.sha256(params).hexdigest())
            (d / "key.json").write_text(text)
        if key_json is not None:
            (d / "key.json").write_bytes(key_json)
        return d

    def formats(self):
        s, circom = self.seed, CIRCOM
        verify_snarkjs = lambda vk, proof, public: ["verify", "--vk", str(vk), "--proof", str(proof), "--public", str(public)]
        prove = lambda d, zkey, wtns, r1cs=None: (["prove", "--zkey", str(zkey), "--witness", str(wtns), "--out", str(d / "out"),
                                                   "--backend", "host", "--progress", "none", "--log-level", "warning"] +
                                                  (["--r1cs", str(r1cs)] if r1cs else []))

        def f_zkey(d, m):
            p = d / "m.zkey"; p.write_bytes(m)
            return prove(d, p, circom / "cube.wtns"), p

        def f_wtns(d, m):
            p = d / "m.wtns"; p.write_bytes(m)
            return prove(d, s / "cube.zkey", p), p

        def f_r1cs(d, m):
            p = d / "m.r1cs"; p.write_bytes(m)
            return prove(d, s / "cube.zkey", circom / "cube.wtns", p), p

        def f_params(d, m):
            k = self.key_dir(d, params=m)
            return ["run", "--keys", str(k), *self.run_flags(), "--pce-cache", ""], k / "params"

        def f_key_json(d, m):
            k = self.key_dir(d, key_json=m)
            return ["run", "--keys", str(k), *self.run_flags(), "--pce-cache", ""], k / "key.json"

        def f_pce(d, m):
            c = d / "pce"; c.mkdir()
            p = c / "mimc_10.pce"; p.write_bytes(m)
            return ["run", "--keys", str(s / "keys"), *self.run_flags(), "--pce-cache", str(c)], p

        def f_vk(d, m):
            p = d / "m.vk"; p.write_bytes(m)
            return ["verify", str(s / "report.json"), "--vk", str(p)], p

        def f_report(d, m):
            p = d / "m.report.json"; p.write_bytes(m)
            # The bare vk file: it says nothing of the circuit's size, so the report alone claims it.
            return ["verify", str(p), "--vk", str(s / "keys" / "vk")], p

        def f_vk_json(d, m):
            p = d / "m.vk.json"; p.write_bytes(m)
            return verify_snarkjs(p, s / "proof" / "cube.proof.json", s / "proof" / "cube.public.json"), p

        def f_proof(d, m):
            p = d / "m.proof.json"; p.write_bytes(m)
            return verify_snarkjs(s / "cube.vk.json", p, s / "proof" / "cube.public.json"), p

        def f_public(d, m):
            p = d / "m.public.json"; p.write_bytes(m)
            return verify_snarkjs(s / "cube.vk.json", s / "proof" / "cube.proof.json", p), p

        binfile = lambda inner: (lambda data: binfile_fields(data, inner))
        return [
            ("zkey", s / "cube.zkey", f_zkey, binfile(zkey_inner)),
            ("wtns", circom / "cube.wtns", f_wtns, binfile(wtns_inner)),
            ("r1cs", circom / "cube.r1cs", f_r1cs, binfile(r1cs_inner)),
            ("params", s / "keys" / "params", f_params, bellman_params_fields),
            ("vk", s / "keys" / "vk", f_vk, bellman_vk_fields),
            ("key.json", s / "keys" / "key.json", f_key_json, "json"),
            ("pce", s / "pce" / "mimc_10.pce", f_pce, pce_fields),
            ("report", s / "report.json", f_report, "json"),
            ("proof.json", s / "proof" / "cube.proof.json", f_proof, "json"),
            ("public.json", s / "proof" / "cube.public.json", f_public, "json"),
            ("vk.json", s / "cube.vk.json", f_vk_json, "json"),
        ]

    def classify(self, fmt, result, named_path, limit_kb):
        code, sig, peak_kb, seconds, timed_out, output = result
        named = str(named_path) in output or (named_path.name in output and str(named_path.parent) in output)
        if peak_kb > limit_kb or "bad_alloc" in output or "std::length_error" in output:
            return "memory"
        if timed_out:
            return "hang"
        if sig is not None or code not in (0, 1, 2):
            return "crash"
        if fmt == "pce" and code == 0:
            return "clear" if named else "accepted"
        if code == 0:
            return "accepted"
        return "clear" if named else "unnamed"

    def run_one(self, fmt, make, index, mutant, limit_kb):
        kind, what, data = mutant
        d = self.work / "runs" / f"{fmt}-{index}"
        d.mkdir(parents=True)
        argv, named_path = make(d, data)
        result = run_limited([self.coprove, *argv], self.args.timeout, self.as_limit, self.env, d)
        outcome = self.classify(fmt, result, named_path, limit_kb)
        code, sig, peak_kb, seconds, timed_out, output = result
        shutil.rmtree(d, ignore_errors=True)
        return {"format": fmt, "index": index, "kind": kind, "mutation": what, "bytes": len(data),
                "outcome": outcome, "exit": code, "signal": sig, "peak_rss_kb": peak_kb,
                "seconds": round(seconds, 3), "argv": ["coprove", *argv[:1]],
                "output_tail": output[-300:] if outcome != "accepted" else ""}

    def sweep(self):
        rng = random.Random(self.args.seed)
        rows = []
        baselines = {}
        selected = self.args.formats.split(",") if self.args.formats else None
        for fmt, seed_path, make, fields in self.formats():
            if selected and fmt not in selected:
                continue
            data = seed_path.read_bytes()
            base_dir = self.work / "runs" / f"{fmt}-seed"
            base_dir.mkdir(parents=True)
            argv, named_path = make(base_dir, data)
            base = run_limited([self.coprove, *argv], self.args.timeout, self.as_limit, self.env, base_dir)
            shutil.rmtree(base_dir, ignore_errors=True)
            if base[0] != 0 or base[4]:
                sys.exit(f"mutation_sweep: the valid {fmt} file is not accepted (exit {base[0]}):\n{base[5][-2000:]}")
            limit_kb = max(self.args.mem_limit_mb << 10, 2 * base[2])
            baselines[fmt] = {"peak_rss_kb": base[2], "seconds": round(base[3], 3), "limit_kb": limit_kb,
                              "seed_bytes": len(data)}
            mutants = random_mutants(data, self.args.mutants, rng) + crafted_mutants(fmt, data)
            if fields == "json":
                mutants += json_mutants(data, self.args.max_fields, rng)
            else:
                mutants += field_mutants(data, fields(data))[:self.args.max_fields]
            print(f"mutation_sweep: {fmt}: {len(mutants)} mutants of a {len(data)}-byte file "
                  f"(valid file: {base[2] >> 10} MiB peak, {base[3]:.2f} s)", file=sys.stderr, flush=True)
            with concurrent.futures.ThreadPoolExecutor(self.args.jobs) as pool:
                rows += list(pool.map(lambda im: self.run_one(fmt, make, im[0], im[1], limit_kb), enumerate(mutants)))
        return baselines, rows


def table(baselines, rows):
    lines = []
    header = f"{'format':<12}{'mutants':>8}" + "".join(f"{o:>10}" for o in OUTCOMES) + f"{'peak MiB':>10}{'limit':>7}{'max s':>7}"
    lines.append(header)
    for fmt in baselines:
        mine = [r for r in rows if r["format"] == fmt]
        counts = [sum(1 for r in mine if r["outcome"] == o) for o in OUTCOMES]
        peak = max([r["peak_rss_kb"] for r in mine] + [0]) >> 10
        slowest = max([r["seconds"] for r in mine] + [0])
        lines.append(f"{fmt:<12}{len(mine):>8}" + "".join(f"{c:>10}" for c in counts) +
                     f"{peak:>10}{baselines[fmt]['limit_kb'] >> 10:>7}{slowest:>7.1f}")
    totals = [sum(1 for r in rows if r["outcome"] == o) for o in OUTCOMES]
    lines.append(f"{'total':<12}{len(rows):>8}" + "".join(f"{c:>10}" for c in totals))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coprove", default=str(REPO / "build" / "release" / "coprove"))
    ap.add_argument("--mutants", type=int, default=40, help="random mutants per format (default 40)")
    ap.add_argument("--max-fields", type=int, default=80, help="most field mutants per format (default 80)")
    ap.add_argument("--formats", default="", help="comma-separated subset (zkey,wtns,r1cs,params,vk,key.json,pce,"
                                                   "report,proof.json,public.json,vk.json)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds before a run counts as a hang (default 30)")
    ap.add_argument("--mem-limit-mb", type=int, default=512,
                    help="peak RSS above which a run counts as memory (default 512, or twice the valid file's)")
    ap.add_argument("--as-limit-mb", type=int, default=4096, help="address-space limit of each run (default 4096)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--json", default="", help="write every run here")
    ap.add_argument("--work-dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    args = ap.parse_args()

    sweep = Sweep(args)
    try:
        sweep.make_seeds()
        baselines, rows = sweep.sweep()
    finally:
        if not args.keep:
            shutil.rmtree(sweep.work, ignore_errors=True)
    print(table(baselines, rows))
    for r in rows:
        if r["outcome"] in FAILING or r["outcome"] == "unnamed" or (r["kind"] == "crafted" and r["outcome"] == "accepted"):
            print(f"  {r['format']} #{r['index']} {r['mutation']}: {r['outcome']} (exit {r['exit']}, signal {r['signal']}, "
                  f"{r['peak_rss_kb'] >> 10} MiB, {r['seconds']} s): {r['output_tail'][-160:]!r}")
    if args.json:
        Path(args.json).write_text(json.dumps({"coprove": sweep.coprove, "baselines": baselines, "runs": rows}, indent=1))
    failed = any(r["outcome"] in FAILING or (r["kind"] == "crafted" and r["outcome"] == "accepted") for r in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
