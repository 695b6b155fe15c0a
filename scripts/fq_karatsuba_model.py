#!/usr/bin/env python3
"""A word-level replay of fq_device.cuh's Karatsuba product and square (karatsuba_product,
karatsuba_square; fq_mul_karatsuba, fq_sqr_karatsuba, fq_mul_sub_karatsuba): every carry chain as the
PTX runs it, 32-bit words with a carry flag.

Asserts what the device code relies on without checking it: no carry word of product_half's rows
overflows (so the flag linking a row's two parts is 0), product_half's accumulators hold x y with a
zero top word and no carry out of their merge, the corrections for the 193-bit halves' sums and the
subtraction z1 = m - z0 - z2 carry and borrow nothing out, square_half's linked cross-product chains
keep the flag 0 between them and its doubling and squares carry nothing out, the 768-bit assembly
carries nothing out, and the result is x y or x^2 (and a b + (2p - c) d, below 8 p^2, for the
difference of products). Inputs: the edges below 2p (0, p, 2p - 1, values whose halves have the
largest sums) and random values below 2p.
The reduction is split_reduce's, which the GPU test "Fq on the GPU ..." checks against the CPU.

Usage: scripts/fq_karatsuba_model.py [RANDOM_INPUTS]   (default 20000)
"""
import random
import sys

M = 1 << 32
P = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB


def words(x, n):
    return [(x >> (32 * i)) & (M - 1) for i in range(n)]


def value(w, shift=0):
    return sum(v << (32 * (i + shift)) for i, v in enumerate(w))


def pairs_chain(w, start, limbs, b, cf):
    """w[start..] += limbs b as word pairs (mad.lo / madc.hi), entering with flag cf; returns the flag."""
    for k, l in enumerate(limbs):
        for word, part in ((start + 2 * k, (l * b) % M), (start + 2 * k + 1, (l * b) // M)):
            v = w[word] + part + cf
            w[word], cf = v % M, v // M
    return cf


def half_row_pair(we, ie, ce, wo, io, co, le, lo, b):
    """chain_half_row_pair: we[ie..ie+5] += le b, we[ce] += carry, then the same on wo with the flag."""
    v = we[ce] + pairs_chain(we, ie, le, b, 0)
    we[ce], cf = v % M, v // M
    assert cf == 0, "carry word of a row's first part overflowed"
    v = wo[co] + pairs_chain(wo, io, lo, b, cf)
    assert v < M, "carry word of a row's second part overflowed"
    wo[co] = v


def product_half(x, y):
    xe, xo = [x[0], x[2], x[4]], [x[1], x[3], x[5]]
    e, o = [0] * 13, [0] * 11
    for k in range(3):
        e[2 * k], e[2 * k + 1] = (xe[k] * y[0]) % M, (xe[k] * y[0]) // M
        o[2 * k], o[2 * k + 1] = (xo[k] * y[0]) % M, (xo[k] * y[0]) // M
    for i in range(1, 6):
        if i % 2 == 0:
            half_row_pair(e, i, i + 6, o, i, i + 6, xe, xo, y[i])
        else:
            half_row_pair(o, i - 1, i + 5, e, i + 1, i + 7, xe, xo, y[i])
    assert value(e) + value(o, 1) == value(x) * value(y), "accumulators do not hold x y"
    assert e[12] == 0, "top word of the even accumulator not 0"
    z, cf = [e[0]], 0
    for j in range(1, 12):
        v = e[j] + o[j - 1] + cf
        z.append(v % M)
        cf = v // M
    assert cf == 0, "merge carried out"
    return z


def square_half(x):
    """square_half: the cross products as one linked chain, merged, doubled, the squares added."""
    e, o = [0] * 11, [0] * 11
    cf = 0  # the chain's first instruction (mad.lo.cc) enters with no flag
    for i in range(5):
        parts = [(o, 2 * i, list(range(i + 1, 6, 2)))]
        if i + 2 < 6:
            parts.append((e, 2 * i + 2, list(range(i + 2, 6, 2))))
        for w, start, js in parts:
            cf = pairs_chain(w, start, [x[j] for j in js], x[i], cf)
            top = start + 2 * len(js)
            v = w[top] + cf
            w[top], cf = v % M, v // M
            assert cf == 0, "a cross-product chain's carry word overflowed"
    cross = sum(x[i] * x[j] << (32 * (i + j)) for i in range(6) for j in range(i + 1, 6))
    assert e[0] == e[1] == 0 and value(e) + value(o, 1) == cross, "cross products wrong"
    w, cf = [0, o[0]], 0
    for j in range(2, 11):
        v = e[j] + o[j - 1] + cf
        w.append(v % M)
        cf = v // M
    w.append(o[10] + cf)
    assert w[11] < M
    d, cf = [0], 0
    for j in range(1, 12):
        v = 2 * w[j] + cf
        d.append(v % M)
        cf = v // M
    assert cf == 0, "doubling carried out"
    z, cf = [], 0
    for i in range(6):
        lo_word, hi_word = (x[i] * x[i]) % M, (x[i] * x[i]) // M
        v = d[2 * i] + lo_word + cf
        z.append(v % M)
        cf = v // M
        v = d[2 * i + 1] + hi_word + cf
        z.append(v % M)
        cf = v // M
    assert cf == 0, "squares carried out"
    assert value(z) == value(x) ** 2, "wrong square"
    return z


def karatsuba_square(x):
    z0, z2, c = square_half(x[:6]), square_half(x[6:]), product_half(x[:6], x[6:])
    z1, cf = [], 0
    for j in range(12):
        v = 2 * c[j] + cf
        z1.append(v % M)
        cf = v // M
    z1.append(cf)
    t = assemble(z0, z1, z2)
    assert value(t) == value(x) ** 2, "wrong square"
    return t


def assemble(z0, z1, z2):
    """assemble_karatsuba: t = z0 + 2^192 z1 + 2^384 z2, no carry out."""
    t, cf = z0[:6], 0
    for j in range(18):
        low = z0[6 + j] if j < 6 else z2[j - 6]
        v = low + (z1[j] if j < 13 else 0) + cf
        t.append(v % M)
        cf = v // M
    assert cf == 0, "assembly carried out"
    return t


def halves_sum(x):
    s, cf = [], 0
    for k in range(6):
        v = x[k] + x[k + 6] + cf
        s.append(v % M)
        cf = v // M
    return s, cf


def add_into(w, start, addend, carry_in=0):
    cf = carry_in
    for k, a in enumerate(addend):
        v = w[start + k] + a + cf
        w[start + k], cf = v % M, v // M
    return cf


def karatsuba_product(x, y):
    sx, cx = halves_sum(x)
    sy, cy = halves_sum(y)
    z0 = product_half(x[:6], y[:6])
    z2 = product_half(x[6:], y[6:])
    m = product_half(sx, sy) + [0]
    fx = [w if cx else 0 for w in sy]
    fy = [w if cy else 0 for w in sx]
    cf = add_into(m, 6, fx)
    m[12] = cx & cy
    v = m[12] + cf
    assert v < M
    m[12] = v
    cf = add_into(m, 6, fy)
    v = m[12] + cf
    assert v < M
    m[12] = v
    assert value(m) == (value(x[:6]) + value(x[6:])) * (value(y[:6]) + value(y[6:]))
    z1, bf = [], 0
    for j in range(13):
        v = m[j] - (z0[j] if j < 12 else 0) - bf
        z1.append(v % M)
        bf = 1 if v < 0 else 0
    assert bf == 0, "m - z0 borrowed out"
    for j in range(13):
        v = z1[j] - (z2[j] if j < 12 else 0) - bf
        z1[j] = v % M
        bf = 1 if v < 0 else 0
    assert bf == 0, "m - z0 - z2 borrowed out"
    t = assemble(z0, z1, z2)
    assert value(t) == value(x) * value(y), "wrong product"
    return t


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    two_p = 2 * P
    top = ((two_p - 1) >> 192) - 1
    halves_max = (top << 192) | ((1 << 192) - 1)
    edges = [0, 1, P - 1, P, P + 1, two_p - 1, halves_max, (1 << 192) - 1, ((two_p - 1) >> 192) << 192]
    assert all(e < two_p for e in edges)
    rng = random.Random(20261205)
    values = edges + [rng.randrange(two_p) for _ in range(count)]
    pairs = [(a, b) for a in edges for b in edges] + list(zip(values, reversed(values)))
    for a, b in pairs:
        karatsuba_product(words(a, 12), words(b, 12))
    for a in values:
        karatsuba_square(words(a, 12))
    # fq_mul_sub_karatsuba: a b + (2p - c) d, summed over 768 bits, stays below 8 p^2.
    for (a, b), (c, d) in zip(pairs, pairs[1:]):
        ab = value(karatsuba_product(words(a, 12), words(b, 12)))
        cd = value(karatsuba_product(words(two_p - c, 12), words(d, 12)))
        assert ab + cd < 8 * P * P < 1 << 768
        assert (ab + cd - (a * b - c * d)) % P == 0
    print(f"karatsuba model: {len(pairs)} products, {len(values)} squares and {len(pairs) - 1} differences of products,"
          " every chain within its words")


if __name__ == "__main__":
    main()
