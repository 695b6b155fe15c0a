// The Miller loop (doubling and addition steps with their lines, in homogeneous projective
// coordinates on the twist y^2 = x^3 + 4(u + 1)) and the final exponentiation.
#include <coprove/field/pairing.hpp>

#include <stdexcept>

namespace coprove::field {

namespace {

/// T on the twist in homogeneous projective coordinates (x = X/Z, y = Y/Z).
struct projective_state {
  fq2 x, y, z;
};

/// 3b' = 12 (u + 1) times a, by additions (b' = 4 (u + 1) is the twist's constant).
fq2 mul_by_3b(const fq2& a) noexcept {
  const fq2 t = a.mul_by_nonresidue();  // (u + 1) a
  const fq2 t4 = t.doubled().doubled();
  return t4 + t4 + t4;
}

/// T <- 2T and the tangent line at T. With A = XY, B = Y^2, C = Z^2, E = 3b'C, F = 3E and
/// H = 2YZ: 2T = (2A(B - F), (B + F)^2 - 12E^2, 4BH), four times the usual projective doubling
/// (which halves A and B + F), and the line (E - B) + 3X^2 xP v - H yP v w.
line_coefficients doubling_step(projective_state& t) noexcept {
  const fq2 a = t.x * t.y;
  const fq2 b = t.y.square();
  const fq2 c = t.z.square();
  const fq2 e = mul_by_3b(c);
  const fq2 f = e + e + e;
  const fq2 h = (t.y + t.z).square() - b - c;
  const fq2 x2 = t.x.square();
  const fq2 e2 = e.square();
  t.x = (a * (b - f)).doubled();
  t.y = (b + f).square() - (e2.doubled() + e2).doubled().doubled();
  t.z = (b * h).doubled().doubled();
  return {e - b, x2.doubled() + x2, -h};
}

/// T <- T + Q (Q affine, not the identity) and the line through them. With theta = Y - yQ Z and
/// lambda = X - xQ Z: the line (lambda yQ - theta xQ) + theta xP v - lambda yP v w.
line_coefficients addition_step(projective_state& t, const g2_affine& q) noexcept {
  const fq2 theta = t.y - q.y * t.z;
  const fq2 lambda = t.x - q.x * t.z;
  const fq2 c = theta.square();
  const fq2 d = lambda.square();
  const fq2 e = lambda * d;
  const fq2 f = t.z * c;
  const fq2 g = t.x * d;
  const fq2 h = e + f - g.doubled();
  const fq2 y = theta * (g - h) - t.y * e;
  t.x = lambda * h;
  t.y = y;
  t.z = t.z * e;
  return {lambda * q.y - theta * q.x, theta, -lambda};
}

/// f times the line evaluated at P.
void multiply_by_line(fq12& f, const line_coefficients& l, const g1_affine& p) noexcept {
  f = f.mul_by_014(l.c0, l.c1.mul_by_fq(p.x), l.c4.mul_by_fq(p.y));
}

/// The Miller loop over the bits of |x| below the top one, with `step(i, doubling)` multiplying f
/// by the lines of every pair at that step.
template <class Step>
fq12 run_miller_loop(Step&& step) {
  fq12 f = fq12::one();
  bool first = true;
  for (int bit = 62; bit >= 0; --bit) {
    if (!first) f = f.square();
    first = false;
    step(f, true);
    if ((constants::bls_x_abs >> bit) & 1) step(f, false);
  }
  return constants::bls_x_is_negative ? f.conjugate() : f;
}

/// g^x for g in the cyclotomic subgroup (x negative: the conjugate of g^|x|).
fq12 cyclotomic_pow_x(const fq12& g) noexcept {
  const fq12 t = g.cyclotomic_pow(constants::bls_x_abs);
  return constants::bls_x_is_negative ? t.conjugate() : t;
}

}  // namespace

g2_prepared g2_prepared::from(const g2_affine& q) {
  g2_prepared out;
  if (q.infinity) return out;
  out.infinity = false;
  out.lines.reserve(68);
  projective_state t{q.x, q.y, fq2::one()};
  for (int bit = 62; bit >= 0; --bit) {
    out.lines.push_back(doubling_step(t));
    if ((constants::bls_x_abs >> bit) & 1) out.lines.push_back(addition_step(t, q));
  }
  return out;
}

fq12 miller_loop(const g1_affine& p, const g2_affine& q) {
  const std::pair<g1_affine, g2_affine> pair{p, q};
  return multi_miller_loop(std::span(&pair, 1));
}

fq12 miller_loop(const g1_affine& p, const g2_prepared& q) {
  const g2_prepared* qs[1] = {&q};
  return multi_miller_loop(std::span(&p, 1), std::span<const g2_prepared* const>(qs));
}

fq12 multi_miller_loop(std::span<const std::pair<g1_affine, g2_affine>> pairs) {
  std::vector<projective_state> states;
  std::vector<std::size_t> active;  // the pairs with neither point the identity
  states.reserve(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i].first.infinity || pairs[i].second.infinity) continue;
    active.push_back(i);
    states.push_back({pairs[i].second.x, pairs[i].second.y, fq2::one()});
  }
  if (active.empty()) return fq12::one();
  return run_miller_loop([&](fq12& f, bool doubling) {
    for (std::size_t k = 0; k < active.size(); ++k) {
      const auto& [p, q] = pairs[active[k]];
      multiply_by_line(f, doubling ? doubling_step(states[k]) : addition_step(states[k], q), p);
    }
  });
}

fq12 multi_miller_loop(std::span<const g1_affine> ps, std::span<const g2_prepared* const> qs) {
  if (ps.size() != qs.size()) {
    throw std::invalid_argument("multi_miller_loop: " + std::to_string(ps.size()) +
                                " G1 points but " + std::to_string(qs.size()) + " G2 points");
  }
  std::vector<std::size_t> active;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (!ps[i].infinity && !qs[i]->infinity) active.push_back(i);
  }
  if (active.empty()) return fq12::one();
  std::size_t next_line = 0;
  return run_miller_loop([&](fq12& f, bool) {
    for (std::size_t i : active) multiply_by_line(f, qs[i]->lines[next_line], ps[i]);
    ++next_line;
  });
}

fq12 final_exponentiation(const fq12& f) {
  // Easy part: g = f^((p^6 - 1)(p^2 + 1)) lies in the cyclotomic subgroup.
  const fq12 t = f.conjugate() * f.inverse();
  const fq12 g = t.frobenius_map(2) * t;
  // Hard part: 3 (p^4 - p^2 + 1) / r = (x - 1)^2 (x + p) (x^2 + p^2 - 1) + 3 (Hayashida, Hayasaka
  // and Teruya, ePrint 2020/875); conjugation inverts in the cyclotomic subgroup.
  const fq12 a = cyclotomic_pow_x(g) * g.conjugate();            // g^(x - 1)
  const fq12 b = cyclotomic_pow_x(a) * a.conjugate();            // g^((x - 1)^2)
  const fq12 c = cyclotomic_pow_x(b) * b.frobenius_map(1);       // ... (x + p)
  const fq12 d = cyclotomic_pow_x(cyclotomic_pow_x(c)) * c.frobenius_map(2) * c.conjugate();
  return d * g.cyclotomic_square() * g;                          // ... + 3
}

fq12 pairing(const g1_affine& p, const g2_affine& q) { return final_exponentiation(miller_loop(p, q)); }

fq12 multi_pairing(std::span<const std::pair<g1_affine, g2_affine>> pairs) {
  return final_exponentiation(multi_miller_loop(pairs));
}

}  // namespace coprove::field
