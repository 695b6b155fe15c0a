#!/usr/bin/env python3
"""The SASS instruction mix of the kernels in a cubin, without a GPU.

Usage: scripts/sass_mix.py CUBIN [KERNEL_REGEX] [--top N]

Nsight Compute on an H200 (docs/history/msm.md, 8f195c5) found G1's MSM bucket kernel keeping the
FMA-heavy pipe, which executes every integer multiply (IMAD, IMAD.WIDE, IMAD.HI), busy 84 % of its
cycles: a change to the field arithmetic pays off by the multiplies it removes from the loop, and
that can be counted from the machine code before any device time is spent. This prints, for each
kernel whose (mangled or demangled) name matches KERNEL_REGEX, its static instruction count, the
integer multiplies among them and the most frequent opcodes.

Make the cubin with the build's flags plus `-cubin`, e.g.
    nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -DCOPROVE_HAVE_CUDA=1 -Icuda/include \\
         -Iprover/field/include -Iruntime/include -cubin cuda/src/msm_kernels.cu -o msm.cubin

The disassembler is nvdisasm from $NVDISASM, else from PATH. CUDA 13's toolkit here ships none; the
one of Debian's non-free `nvidia-cuda-toolkit` (CUDA 11.8) decodes sm_90 code once the cubin's
header is written the way 11.8 wrote it (ELF ABI version 7, e_flags 0x5a055a), which this script
does on a temporary copy (sm_90 cubins only).
"""
import collections
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

MULTIPLIES = re.compile(r"^IMAD(\.|$)")
PREDICATE_TEST = re.compile(r"^(?:@!?P\d\s+)?LOP3\.LUT\s+P[0-6],")


def legacy_copy(path):
    """A copy of the sm_90 cubin at `path` with the header CUDA 11.8's nvdisasm reads."""
    data = bytearray(open(path, "rb").read())
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit(f"sass_mix: {path} is not a 64-bit ELF cubin")
    flags = struct.unpack_from("<I", data, 48)[0]
    if (flags >> 8) & 0xFF != 0x5A and flags & 0xFF != 0x5A:
        sys.exit(f"sass_mix: {path} is not sm_90 code (e_flags {flags:#x})")
    struct.pack_into("<I", data, 48, 0x005A055A)
    data[8] = 7
    out = tempfile.NamedTemporaryFile(suffix=".cubin", delete=False)
    out.write(data)
    out.close()
    return out.name


def kernels(listing):
    """(name, [(opcode, instruction text), ...]) for each function of an nvdisasm listing."""
    name, ops = None, []
    for line in listing.splitlines():
        header = re.match(r"\s*\.text\.(\S+):", line)
        if header:
            if name:
                yield name, ops
            name, ops = header.group(1), []
            continue
        instruction = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+((?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)[^;]*)", line)
        if name and instruction:
            ops.append((instruction.group(2), instruction.group(1)))
    if name:
        yield name, ops


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    top = 12
    if "--top" in sys.argv:
        top = int(sys.argv[sys.argv.index("--top") + 1])
        args = [a for a in args if a != str(top)]
    if not args:
        sys.exit(__doc__)
    pattern = re.compile(args[1] if len(args) > 1 else ".")
    nvdisasm = os.environ.get("NVDISASM") or shutil.which("nvdisasm")
    if not nvdisasm or not os.access(nvdisasm, os.X_OK):
        sys.exit(f"sass_mix: no nvdisasm at {nvdisasm or 'NVDISASM or PATH'} (see the top of this script)")
    copy = legacy_copy(args[0])
    try:
        listing = subprocess.run([nvdisasm, "-c", copy], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(copy)
    demangle = shutil.which("c++filt")
    for name, ops in kernels(listing):
        readable = name
        if demangle:
            readable = subprocess.run([demangle, name], capture_output=True, text=True).stdout.strip()
        if not (pattern.search(name) or pattern.search(readable)):
            continue
        counts = collections.Counter(op for op, _ in ops)
        multiplies = sum(n for op, n in counts.items() if MULTIPLIES.match(op))
        # Carry flags live in the 7 predicate registers; where more carry chains are interleaved than
        # that, ptxas parks flags in a general register (P2R, then LOP3 to test or set a bit).
        parked = sum(1 for op, text in ops if op == "P2R" or op == "R2P" or PREDICATE_TEST.search(text))
        print(f"{readable}\n  {len(ops)} instructions, {multiplies} integer multiplies (IMAD*), "
              f"{parked} moving carry flags between predicates and registers (P2R, R2P, LOP3 into a predicate)")
        for op, n in counts.most_common(top):
            print(f"    {op:24s} {n:7d}  {100.0 * n / len(ops):5.1f} %")


if __name__ == "__main__":
    main()
