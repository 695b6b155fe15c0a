#!/usr/bin/env python3
"""Runs fq_device.cuh's own PTX on the CPU: the Karatsuba products (karatsuba_product,
karatsuba_square; fq_mul_karatsuba, fq_sqr_karatsuba, fq_mul_sub_karatsuba, fq2_mul_lazy) and, as a
check of this replay itself, fq_mul and fq_mul_sub, which the H200 ran.

Each asm statement of the header is read from the header (its PTX text and its operand list) and
executed by a small interpreter of the instructions it uses (mad/madc .lo/.hi, add/addc, sub/subc,
with and without .cc; 32-bit words, one carry flag that does not outlive the statement); the C++
around the statements (loops, which words a chain works on) is written out below, function by
function, as in the header. So a wrong operand number, a chain on the wrong words or a carry that
overflows its word shows as a wrong value here, before any device time. Checked: every result is
below 2p and congruent to the product (a b, a^2, a b - c d, (a + c u)(b + d u) times 2^-384 mod p),
and the 768-bit products equal x y exactly; over the edges below 2p (0, 1, p - 1, p, p + 1, 2p - 1,
values whose 192-bit halves have the largest sums) and random values below 2p. (4p^2, which
fq2_mul_lazy adds, is the header's constexpr; a static_assert there checks it two ways.) A sabotage check edits one
operand number of one chain and expects the replay to fail.

Usage: scripts/fq_ptx_replay.py [RANDOM_INPUTS]   (default 500: about a minute)
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


def chain_row_pair(h, we, ce, wo, co, le, lo, b):
    asm(h, "chain_row_pair", 0, refs=("ce", "co"), we=we, ce=ce, wo=wo, co=co, le=le, lo=lo, b=b)


def chain_row(h, a, carry, l, b):
    asm(h, "chain_row", 0, refs=("carry",), a=a, carry=carry, l=l, b=b)


def split_reduce(h, t, linked):
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
            if linked:
                chain_row_pair(h, Ptr(t.e, i), Ptr(k, i + 12), Ptr(t.o, i), Ptr(k, i + 13), p_even, p_odd, m)
            else:
                chain_row(h, Ptr(t.e, i), Ptr(k, i + 12), p_even, m)
                chain_row(h, Ptr(t.o, i), Ptr(k, i + 13), p_odd, m)
        else:
            t.o[i - 1] = w
            if linked:
                chain_row_pair(h, Ptr(t.o, i - 1), Ptr(k, i + 12), Ptr(t.e, i + 1), Ptr(k, i + 13), p_even, p_odd, m)
            else:
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
    return split_reduce(h, t, linked=False)


def chain_half_row_pair(h, we, ce, wo, co, le, lo, b):
    asm(h, "chain_half_row_pair", 0, refs=("ce", "co"), we=we, ce=ce, wo=wo, co=co, le=le, lo=lo, b=b)


def product_half(h, x, y):
    xe, xo = x[0::2], x[1::2]
    e, o = [0] * 13, [0] * 11
    for k in range(3):
        e[2 * k], e[2 * k + 1] = (xe[k] * y[0]) % M, (xe[k] * y[0]) // M
        o[2 * k], o[2 * k + 1] = (xo[k] * y[0]) % M, (xo[k] * y[0]) // M
    for i in range(1, 6):
        if i % 2 == 0:
            chain_half_row_pair(h, Ptr(e, i), Ptr(e, i + 6), Ptr(o, i), Ptr(o, i + 6), xe, xo, y[i])
        else:
            chain_half_row_pair(h, Ptr(o, i - 1), Ptr(o, i + 5), Ptr(e, i + 1), Ptr(e, i + 7), xe, xo, y[i])
    assert value(e) + value(o, 1) == value(x) * value(y) and e[12] == 0, "product_half's accumulators"
    z = [0] * 12
    z[0] = e[0]
    asm(h, "product_half", 0, z=z, e=e, o=o)
    return z


def halves_sum(h, x):
    s = [0] * 6
    env = dict(x=x, s=s, carry=[0])
    asm(h, "halves_sum", 0, refs=("carry",), **env)
    return s, env["carry"][0]


def assemble_karatsuba(h, z0, z1, z2):
    t = z0[:6] + [0] * 18
    asm(h, "assemble_karatsuba", 0, z0=z0, z1=z1, z2=z2, t=t)
    return t


def karatsuba_product(h, x, y):
    x0, x1, y0, y1 = x[:6], x[6:], y[:6], y[6:]
    sx, cx = halves_sum(h, x)
    sy, cy = halves_sum(h, y)
    z0, z2, m = product_half(h, x0, y0), product_half(h, x1, y1), product_half(h, sx, sy)
    mask_x, mask_y = (-cx) % M, (-cy) % M
    fx = [w & mask_x for w in sy]
    fy = [w & mask_y for w in sx]
    env = dict(m=m, m12=[0], fx=fx, fy=fy, cx=cx, cy=cy)
    asm(h, "karatsuba_product", 0, refs=("m12",), **env)
    m13 = m + [env["m12"][0]]
    assert value(m13) == (value(x0) + value(x1)) * (value(y0) + value(y1)), "the halves' sums' product"
    z1 = [0] * 13
    asm(h, "karatsuba_product", 1, z1=z1, m=m, m12=env["m12"][0], z0=z0)
    asm(h, "karatsuba_product", 2, z1=z1, z2=z2)
    assert value(z1) == value(x0) * value(y1) + value(x1) * value(y0), "z1"
    return assemble_karatsuba(h, z0, z1, z2)


def square_half(h, x):
    e, o = [0] * 11, [0] * 11
    asm(h, "square_half", 0, e=e, o=o, x=x)
    w = [0] * 12
    w[1] = o[0]
    asm(h, "square_half", 1, w=w, e=e, o=o)
    z = [0] * 12
    asm(h, "square_half", 2, z=z, w=w, x=x)
    return z


def karatsuba_square(h, x):
    x0, x1 = x[:6], x[6:]
    z0, z2, c = square_half(h, x0), square_half(h, x1), product_half(h, x0, x1)
    assert value(z0) == value(x0) ** 2 and value(z2) == value(x1) ** 2, "square_half"
    z1 = [0] * 13
    asm(h, "karatsuba_square", 0, z1=z1, c=c)
    return assemble_karatsuba(h, z0, z1, z2)


def reduce_wide(h, t):
    return split_reduce(h, SimpleNamespace(e=list(t) + [0], o=[0] * 23), linked=True)


def add_wide(h, x, y):
    out = [0] * 24
    asm(h, "add_wide", 0, x=x, y=y, out=out)
    return out


def fq_mul_karatsuba(h, a, b):
    t = karatsuba_product(h, a, b)
    assert value(t) == value(a) * value(b), "karatsuba_product"
    return reduce_wide(h, t)


def fq_sqr_karatsuba(h, a):
    t = karatsuba_square(h, a)
    assert value(t) == value(a) ** 2, "karatsuba_square"
    return reduce_wide(h, t)


def fq_mul_sub_karatsuba(h, a, b, c, d):
    two_p = words(2 * P, 12)
    c_neg = [0] * 12
    sub_words(h, two_p, c, c_neg)
    ab, cd = karatsuba_product(h, a, b), karatsuba_product(h, c_neg, d)
    total = add_wide(h, ab, cd)
    assert value(total) == value(a) * value(b) + (2 * P - value(c)) * value(d) < 8 * P * P, "a b + (2p - c) d"
    return reduce_wide(h, total)


def sub_wide(h, x, y):
    out = [0] * 24
    asm(h, "sub_wide", 0, x=x, y=y, out=out)
    return out


FOUR_P_SQUARED = words(4 * P * P, 24)


def fq2_mul_lazy(h, a0, a1, b0, b1):
    sum_a, sum_b = [0] * 12, [0] * 12
    add_words(h, a0, a1, sum_a)
    add_words(h, b0, b1, sum_b)
    s = karatsuba_product(h, sum_a, sum_b)
    t = karatsuba_product(h, a0, b0)
    c1 = sub_wide(h, s, t)
    c0 = add_wide(h, t, FOUR_P_SQUARED)
    t = karatsuba_product(h, a1, b1)
    s = sub_wide(h, c1, t)
    c1 = sub_wide(h, c0, t)
    assert value(c1) == value(a0) * value(b0) + 4 * P * P - value(a1) * value(b1) < 8 * P * P, "c0 wide"
    assert value(s) == value(a0) * value(b1) + value(a1) * value(b0), "c1 wide"
    return reduce_wide(h, c1), reduce_wide(h, s)


def fq_mul(h, a, b):
    """fq_mul's word-by-word rounds (the H200 ran this): checks the replay itself."""
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
        wa, wb = words(a, 12), words(b, 12)
        fq(fq_mul(h, wa, wb), a * b * R_INV)
        fq(fq_mul_karatsuba(h, wa, wb), a * b * R_INV)
    for a in values:
        fq(fq_sqr_karatsuba(h, words(a, 12)), a * a * R_INV)
    for (a, b), (c, d) in zip(pairs, pairs[1:]):
        # (a + c u)(b + d u) in Fq2 = Fq[u] / (u^2 + 1)
        r0, r1 = fq2_mul_lazy(h, words(a, 12), words(c, 12), words(b, 12), words(d, 12))
        fq(r0, (a * b - c * d) * R_INV)
        fq(r1, (a * d + c * b) * R_INV)
        want = (a * b - c * d) * R_INV
        fq(fq_mul_sub(h, words(a, 12), words(b, 12), words(c, 12), words(d, 12)), want)
        fq(fq_mul_sub_karatsuba(h, words(a, 12), words(b, 12), words(c, 12), words(d, 12)), want)


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
    broken = text.replace('"addc.cc.u32 %12, %42, %43;', '"addc.cc.u32 %12, %42, %41;', 1)
    assert broken != text, "sabotage target not found"
    try:
        check(Header(broken), values[:50], pairs[:50])
    except AssertionError:
        pass
    else:
        sys.exit("fq_ptx_replay: a broken chain went unnoticed")
    print(f"fq_device.cuh's PTX replayed: {len(pairs)} products (fq_mul and fq_mul_karatsuba), {len(values)} squares,"
          f" {len(pairs) - 1} differences of products (fq_mul_sub and fq_mul_sub_karatsuba) and products in Fq2"
          " (fq2_mul_lazy): all below 2p and right; a broken chain is noticed")


if __name__ == "__main__":
    main()
