#!/usr/bin/env python3
"""Runs fq_device.cuh's own PTX on the CPU: the Fq products the kernels use, fq_mul (the word-by-word
Montgomery product) and fq_mul_sub (a b - c d with one reduction, G1's bucket step).

Each asm statement of the header is read from the header (its PTX text and its operand list) and
executed by a small interpreter of the instructions it uses (mad/madc .lo/.hi, add/addc, sub/subc,
with and without .cc; 32-bit words, one carry flag that does not outlive the statement); the C++
around the statements (loops, which words a chain works on) is written out below, function by
function, as in the header. So a wrong operand number, a chain on the wrong words or a carry that
overflows its word shows as a wrong value here, before any device time. Checked: every result is
below 2p and congruent to the product (a b and a b - c d times 2^-384 mod p), over the edges below
2p (0, 1, p - 1, p, p + 1, 2p - 1, values whose 192-bit halves have the largest sums) and random
values below 2p. A sabotage check edits one operand number of one chain and expects the replay to
fail.

Usage: scripts/fq_ptx_replay.py [RANDOM_INPUTS]   (default 500)
"""
import os
import random
import re
import sys
from types import SimpleNamespace

M = 1 << 32
P = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB
R_INV = pow(1 << 384, -1, P)
HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cuda", "include", "coprove", "cuda",
                      "fq_device.cuh")
P_WORDS = [(P >> (32 * k)) & (M - 1) for k in range(12)]
P_INV = (-pow(P, -1, M)) % M


def words(x, n):
    return [(x >> (32 * i)) & (M - 1) for i in range(n)]


def value(w, shift=0):
    return sum(v << (32 * (i + shift)) for i, v in enumerate(w))


# --- the header's asm statements ---------------------------------------------------------------

class Ptr:
    """A C++ pointer into an array (e + i)."""

    def __init__(self, array, offset=0):
        self.array, self.offset = array, offset

    def __add__(self, k):
        return Ptr(self.array, self.offset + k)

    def __sub__(self, k):
        return Ptr(self.array, self.offset - k)

    def __getitem__(self, k):
        return self.array[self.offset + k]

    def __setitem__(self, k, v):
        self.array[self.offset + k] = v


def read_statements(text):
    """{function name: [(ptx lines, [(constraint, expression)])]} for every asm statement of the header."""
    found = {}
    function = None
    heads = [(m.start(), m.group(1)) for m in re.finditer(r"^__device__[^\n(]*?(\w+)\(", text, re.M)]
    for m in re.finditer(r"\basm\(", text):
        start = m.end()
        while heads and heads[0][0] < m.start():
            function = heads.pop(0)[1]
        depth, k = 1, start
        while depth:  # the statement's closing parenthesis, outside string literals
            c = text[k]
            if c == '"':
                k = text.index('"', k + 1)
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            k += 1
        body = text[start:k - 1]
        literal_end = 0
        ptx = ""
        for lit in re.finditer(r'"((?:[^"\\]|\\.)*)"\s*', body):
            if body[literal_end:lit.start()].strip():
                break
            ptx += lit.group(1)
            literal_end = lit.end()
        sections = body[literal_end:].split(":")
        operands = []
        for section in sections[1:]:
            operands += re.findall(r'"([+=]?r)"\(([^()]*(?:\([^()]*\))?[^()]*)\)', section)
        lines = [line.strip() for line in ptx.replace("\\n", "\n").replace("\\t", "").split(";") if line.strip()]
        found.setdefault(function, []).append((lines, operands))
    return found


def cxx_to_python(expression):
    return expression.replace("0u - ", "-").strip()


def run_asm(statement, env):
    lines, operands = statement
    regs = []
    for constraint, expression in operands:
        regs.append(0 if constraint == "=r" else eval(cxx_to_python(expression), {}, env) % M)
    cf = None  # no flag enters a statement

    def get(token):
        token = token.strip()
        if token.startswith("%"):
            return regs[int(token[1:])]
        return int(token, 0)

    for line in lines:
        op, args = line.split(None, 1)
        args = [a.strip() for a in args.split(",")]
        d = int(args[0][1:])
        parts = op.split(".")
        name, sets_flag = parts[0], "cc" in parts
        uses_flag = name in ("madc", "addc", "subc")
        if uses_flag and cf is None:
            raise AssertionError(f"{line}: reads a carry flag no instruction of the statement set")
        carry_in = cf if uses_flag else 0
        if name in ("mad", "madc"):
            product = get(args[1]) * get(args[2])
            half = product % M if parts[1] == "lo" else product // M
            total = half + get(args[3]) + carry_in
            regs[d], out = total % M, total // M
        elif name in ("add", "addc"):
            total = get(args[1]) + get(args[2]) + carry_in
            regs[d], out = total % M, total // M
        elif name in ("sub", "subc"):
            total = get(args[1]) - get(args[2]) - carry_in
            regs[d], out = total % M, 1 if total < 0 else 0
        else:
            raise AssertionError(f"unknown instruction {line}")
        if sets_flag:
            cf = out
    for k, (constraint, expression) in enumerate(operands):
        if constraint in ("=r", "+r"):
            exec(f"{cxx_to_python(expression)} = {regs[k]}", {}, env)


class Header:
    def __init__(self, text):
        self.statements = read_statements(text)


# --- the C++ around the statements, as in fq_device.cuh ------------------------------------------

class _ScalarView(dict):
    """The names a statement's operands use; each one in `names` is a one-word reference (C++
    std::uint32_t&): a Ptr or a one-element list, read and written at [0]."""

    def __init__(self, view, names):
        super().__init__(view)
        self.names = names

    def __getitem__(self, key):
        v = dict.__getitem__(self, key)
        return v[0] if key in self.names else v

    def __setitem__(self, key, value):
        if key in self.names:
            dict.__getitem__(self, key)[0] = value
        else:
            dict.__setitem__(self, key, value)


def asm(h, function, k, refs=(), **env):
    run_asm(h.statements[function][k], _ScalarView(env, refs))


def chain_row(h, a, carry, l, b):
    asm(h, "chain_row", 0, refs=("carry",), a=a, carry=carry, l=l, b=b)


def split_reduce(h, t):
    p_even, p_odd = P_WORDS[0::2], P_WORDS[1::2]
    k = [0] * 25
    carry = 0
    for i in range(12):
        w = t.e[0]
        if i > 0:
            env = dict(w=[0], out=[0], t=t, i=i, carry=carry)
            asm(h, "split_reduce", 0, refs=("w", "out"), **env)
            w, carry = env["w"][0], env["out"][0]
        m = (w * P_INV) % M
        if i % 2 == 0:
            t.e[i] = w
            chain_row(h, Ptr(t.e, i), Ptr(k, i + 12), p_even, m)
            chain_row(h, Ptr(t.o, i), Ptr(k, i + 13), p_odd, m)
        else:
            t.o[i - 1] = w
            chain_row(h, Ptr(t.o, i - 1), Ptr(k, i + 12), p_even, m)
            chain_row(h, Ptr(t.e, i + 1), Ptr(k, i + 13), p_odd, m)
    k[12] = (k[12] + carry) % M
    high_e, high_o, carries = t.e[12:24], t.o[11:23], k[12:24]
    total = [0] * 12
    add_words(h, high_e, high_o, total)
    out = [0] * 12
    add_words(h, total, carries, out)
    return out


def add_words(h, d, m, out):
    asm(h, "add_words", 0, d=d, m=m, out=out)


def sub_words(h, x, y, d):
    env = dict(x=x, y=y, d=d, borrow=[0])
    asm(h, "sub_words", 0, refs=("borrow",), **env)
    return env["borrow"][0]


def product_row(h, t, even, odd, yi, i):
    if i % 2 == 0:
        chain_row(h, Ptr(t.e, i), Ptr(t.e, i + 12), even, yi)
        chain_row(h, Ptr(t.o, i), Ptr(t.o, i + 12), odd, yi)
    else:
        chain_row(h, Ptr(t.o, i - 1), Ptr(t.o, i + 11), even, yi)
        chain_row(h, Ptr(t.e, i + 1), Ptr(t.e, i + 13), odd, yi)


def fq_mul_sub(h, a, b, c, d):
    two_p = words(2 * P, 12)
    c_neg = [0] * 12
    sub_words(h, two_p, c, c_neg)
    t = SimpleNamespace(e=[0] * 25, o=[0] * 23)
    for i in range(12):
        product_row(h, t, a[0::2], a[1::2], b[i], i)
        product_row(h, t, c_neg[0::2], c_neg[1::2], d[i], i)
    return split_reduce(h, t)


def fq_mul(h, a, b):
    """fq_mul's word-by-word rounds."""
    x, y = [0] * 12, [0] * 12
    for i in range(0, 12, 2):
        _mul_round(h, x, y, a, b[i], i == 0)
        _mul_round(h, y, x, a, b[i + 1], False)
    t = [0] * 12
    asm(h, "fq_mul", 0, t=SimpleNamespace(limb=t), x=x, y=y)
    return t


def _mul_round(h, e, o, a, bi, first):
    if first:
        for j in range(0, 12, 2):
            o[j], o[j + 1] = (a[j + 1] * bi) % M, (a[j + 1] * bi) // M
            e[j], e[j + 1] = (a[j] * bi) % M, (a[j] * bi) // M
    else:
        asm(h, "mul_round", 0, e=e, o=o, a=a, bi=bi)
        chain_row(h, e, Ptr(o, 11), a[0::2], bi)
    m = (e[0] * P_INV) % M
    asm(h, "mul_round", 1, o=o, modulus_limbs=P_WORDS, m=m)
    chain_row(h, e, Ptr(o, 11), P_WORDS[0::2], m)


# --- the checks -----------------------------------------------------------------------------------

def check(h, values, pairs):
    def fq(w, want):
        v = value(w)
        assert v < 2 * P, "result not below 2p"
        assert v % P == want % P, "wrong result"

    for a, b in pairs:
        fq(fq_mul(h, words(a, 12), words(b, 12)), a * b * R_INV)
    for (a, b), (c, d) in zip(pairs, pairs[1:]):
        fq(fq_mul_sub(h, words(a, 12), words(b, 12), words(c, 12), words(d, 12)), (a * b - c * d) * R_INV)


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    text = open(HEADER).read()
    two_p = 2 * P
    top = ((two_p - 1) >> 192) - 1
    halves_max = (top << 192) | ((1 << 192) - 1)
    edges = [0, 1, P - 1, P, P + 1, two_p - 1, halves_max, (1 << 192) - 1, ((two_p - 1) >> 192) << 192]
    assert all(e < two_p for e in edges)
    rng = random.Random(20261205)
    values = edges + [rng.randrange(two_p) for _ in range(count)]
    pairs = [(a, b) for a in edges for b in edges] + list(zip(values, reversed(values)))
    check(Header(text), values, pairs)
    # Sabotage: one operand number of the assembly's chain changed; the replay must notice.
    broken = text.replace('"madc.hi.cc.u32 %1, %13, %19, %1;', '"madc.hi.cc.u32 %1, %14, %19, %1;', 1)
    assert broken != text, "sabotage target not found"
    try:
        check(Header(broken), values[:50], pairs[:50])
    except AssertionError:
        pass
    else:
        sys.exit("fq_ptx_replay: a broken chain went unnoticed")
    print(f"fq_device.cuh's PTX replayed: {len(pairs)} products (fq_mul) and {len(pairs) - 1} differences of"
          " products (fq_mul_sub): all below 2p and right; a broken chain is noticed")


if __name__ == "__main__":
    main()
