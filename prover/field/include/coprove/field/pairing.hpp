// The optimal ate pairing of BLS12-381, e: G1 x G2 -> GT in Fq12, on the CPU: the Miller loop
// over |x| = 0xd201000000010000 (x negative, so the loop value is conjugated), G2 in homogeneous
// projective coordinates with the lines evaluated at P as sparse Fq12 elements, and the final
// exponentiation, easy part (p^6 - 1)(p^2 + 1) and hard part by the Hayashida-Hayasaka-Teruya
// decomposition with five cyclotomic exponentiations by x. The value equals that of zcash's
// bls12_381 crate, blst and @noble/curves (their hard part is 3 (p^4 - p^2 + 1) / r as well).
// A verifier that checks many proofs against one G2 point prepares it once (g2_prepared); a
// product of pairings shares one final exponentiation (multi_pairing).
#pragma once

#include <coprove/field/fq12.hpp>
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>

#include <array>
#include <span>
#include <utility>
#include <vector>

namespace coprove::field {

/// One Miller-loop line, c0 + (c1 xP) v + (c4 yP) v w once evaluated at P = (xP, yP).
struct line_coefficients {
  fq2 c0, c1, c4;
};

/// A G2 point with the line coefficients of its Miller loop precomputed (68 lines: 63 doublings
/// and 5 additions), so that pairing it with many G1 points skips the G2 arithmetic.
struct g2_prepared {
  std::vector<line_coefficients> lines;  // in loop order; empty for the identity
  bool infinity = true;

  /// The lines of q's Miller loop.
  static g2_prepared from(const g2_affine& q);
};

/// The Miller loop f_{x,Q}(P), conjugated for the negative x; 1 when P or Q is the identity.
fq12 miller_loop(const g1_affine& p, const g2_affine& q);
/// The Miller loop from prepared lines.
fq12 miller_loop(const g1_affine& p, const g2_prepared& q);
/// The product of the Miller loops of the pairs, sharing the squarings of the accumulator.
fq12 multi_miller_loop(std::span<const std::pair<g1_affine, g2_affine>> pairs);
/// The product of the Miller loops of (ps[i], qs[i]) from prepared lines; the spans must have the
/// same length (throws std::invalid_argument otherwise).
fq12 multi_miller_loop(std::span<const g1_affine> ps, std::span<const g2_prepared* const> qs);
/// f^((p^12 - 1) / r * 3): maps a Miller loop value into GT (the factor 3 as in zcash and blst).
fq12 final_exponentiation(const fq12& f);
/// e(P, Q).
fq12 pairing(const g1_affine& p, const g2_affine& q);
/// The product of e(P_i, Q_i) with one final exponentiation (1 for no pairs).
fq12 multi_pairing(std::span<const std::pair<g1_affine, g2_affine>> pairs);

}  // namespace coprove::field
