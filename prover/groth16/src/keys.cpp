// The setup (see keys.hpp): Lagrange basis at tau by an inverse NTT of tau's powers, the QAP
// columns at tau by a transposed product with each matrix (columns in parallel), then the key's
// points by fixed-base multiplication. Every secret-derived vector is wiped before it is freed.
#include <coprove/groth16/keys.hpp>

#include "fixed_base.hpp"

#include <coprove/field/domain.hpp>
#include <coprove/field/ntt.hpp>
#include <coprove/field/parallel.hpp>
#include <coprove/r1cs/synthesis.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace coprove::groth16 {

namespace {

using field::fr;

/// The column density of one matrix: which of `variables` columns hold an entry.
std::vector<bool> column_density(const r1cs::csr_matrix& m, std::size_t variables) {
  std::vector<bool> out(variables, false);
  for (const std::uint32_t col : m.columns) {
    if (col >= variables) throw std::invalid_argument("setup: a matrix entry names column " + std::to_string(col));
    out[col] = true;
  }
  return out;
}

/// out[i] = sum over the entries (j, i) of m of coefficient * basis[j]: the polynomial of column i
/// at the point where basis holds the Lagrange values. Transposes m first so that each column is
/// summed by one thread without shared accumulators.
void transposed_product(const r1cs::csr_matrix& m, const std::vector<fr>& table, std::span<const fr> basis,
                        std::span<fr> out) {
  const std::size_t variables = out.size();
  const std::size_t rows = m.row_offsets.size() - 1;
  std::vector<std::uint32_t> column_offsets(variables + 1, 0);
  for (const std::uint32_t col : m.columns) ++column_offsets[col + 1];
  for (std::size_t i = 0; i < variables; ++i) column_offsets[i + 1] += column_offsets[i];
  std::vector<std::uint32_t> cursor(column_offsets.begin(), column_offsets.end() - 1);
  std::vector<std::uint32_t> entry_rows(m.nonzeros());
  std::vector<std::uint32_t> entry_coefficients(m.nonzeros());
  for (std::size_t row = 0; row < rows; ++row) {
    for (std::uint32_t e = m.row_offsets[row]; e < m.row_offsets[row + 1]; ++e) {
      const std::uint32_t slot = cursor[m.columns[e]]++;
      entry_rows[slot] = static_cast<std::uint32_t>(row);
      entry_coefficients[slot] = m.coefficients[e];
    }
  }
  field::parallel_for(0, variables, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      fr sum = fr::zero();
      for (std::uint32_t e = column_offsets[i]; e < column_offsets[i + 1]; ++e) {
        const fr& value = basis[entry_rows[e]];
        const std::uint32_t coefficient = entry_coefficients[e];
        if (coefficient == r1cs::pce_coefficient_one) {
          sum += value;
        } else if (coefficient == r1cs::pce_coefficient_minus_one) {
          sum -= value;
        } else {
          sum += table[coefficient] * value;
        }
      }
      out[i] = sum;
    }
  }, 256);
}

field::g1_affine g1_times(const fr& k) {
  wiped<field::scalar_limbs> limbs(k.to_canonical());
  return field::g1_jacobian::generator().mul_secret(*limbs).to_affine();
}

field::g2_affine g2_times(const fr& k) {
  wiped<field::scalar_limbs> limbs(k.to_canonical());
  return field::g2_jacobian::generator().mul_secret(*limbs).to_affine();
}

}  // namespace

key_shape key_shape::of(const r1cs::pce_matrices& matrices) {
  key_shape s;
  s.num_inputs = matrices.num_inputs;
  s.num_aux = matrices.num_aux;
  s.domain_size = matrices.domain_size;
  s.a_density = column_density(matrices.a, s.num_variables());
  s.b_density = column_density(matrices.b, s.num_variables());
  return s;
}

std::size_t key_shape::a_count() const noexcept {
  return static_cast<std::size_t>(std::count(a_density.begin(), a_density.end(), true));
}

std::size_t key_shape::b_count() const noexcept {
  return static_cast<std::size_t>(std::count(b_density.begin(), b_density.end(), true));
}

std::optional<degenerate_point> find_degenerate_point(const verifying_key& vk) noexcept {
  if (vk.alpha_g1.is_identity()) return degenerate_point{"alpha_g1", std::nullopt};
  if (vk.beta_g2.is_identity()) return degenerate_point{"beta_g2", std::nullopt};
  if (vk.gamma_g2.is_identity()) return degenerate_point{"gamma_g2", std::nullopt};
  if (vk.delta_g2.is_identity()) return degenerate_point{"delta_g2", std::nullopt};
  if (vk.ic.empty()) return degenerate_point{"ic", std::nullopt};
  for (std::size_t i = 0; i < vk.ic.size(); ++i)
    if (vk.ic[i].is_identity()) return degenerate_point{"ic", i};
  return std::nullopt;
}

std::size_t proving_key::bytes() const noexcept {
  return sizeof(field::g1_affine) * (a.capacity() + b_g1.capacity() + l.capacity() + h.capacity() + vk.ic.capacity()) +
         sizeof(field::g2_affine) * b_g2.capacity();
}

std::size_t proving_key::estimate_bytes(std::size_t num_inputs, std::size_t num_aux, std::size_t domain_size) noexcept {
  const std::size_t variables = num_inputs + num_aux;
  const std::size_t h = domain_size == 0 ? 0 : domain_size - 1;
  return sizeof(field::g1_affine) * (2 * variables + num_aux + h + num_inputs) + sizeof(field::g2_affine) * variables;
}

void proving_key::check_consistent(const key_shape* shape) const {
  const auto fail = [](const std::string& why) { throw std::invalid_argument("proving key: " + why); };
  const std::size_t variables = a.size();
  if (b_g1.size() != variables || b_g2.size() != variables)
    fail("a, b_g1 and b_g2 have " + std::to_string(a.size()) + ", " + std::to_string(b_g1.size()) + " and " +
         std::to_string(b_g2.size()) + " points (one per variable each)");
  if (vk.ic.empty()) fail("ic is empty (the constant one's point is missing)");
  if (vk.ic.size() + l.size() != variables)
    fail(std::to_string(vk.ic.size()) + " inputs and " + std::to_string(l.size()) + " auxiliaries do not make " +
         std::to_string(variables) + " variables");
  const std::size_t n = domain_size();
  if (n == 0 || (n & (n - 1)) != 0)
    fail("h has " + std::to_string(h.size()) + " points, not a power of two" +
         (h_form == field::quotient_form::coefficients ? " minus one" : ""));
  if (shape != nullptr) {
    if (shape->num_inputs != vk.ic.size() || shape->num_aux != l.size() || shape->domain_size != n)
      fail("made for " + std::to_string(vk.ic.size()) + " inputs, " + std::to_string(l.size()) +
           " auxiliaries and a domain of " + std::to_string(n) + ", the circuit has " +
           std::to_string(shape->num_inputs) + ", " + std::to_string(shape->num_aux) + " and " +
           std::to_string(shape->domain_size));
  }
}

toxic_waste::toxic_waste(secret_source& secrets, std::size_t domain_size) {
  for (;;) {
    tau = secrets.nonzero();
    if (tau.pow(static_cast<std::uint64_t>(domain_size)) != fr::one()) break;
  }
  alpha = secrets.nonzero();
  beta = secrets.nonzero();
  gamma = secrets.nonzero();
  delta = secrets.nonzero();
}

toxic_waste::~toxic_waste() { secure_wipe(static_cast<void*>(this), sizeof *this); }

namespace {

/// scale * tau^k for k < count, on all cores (each chunk starts from its own power).
wiped_vector<fr> scaled_powers(const fr& tau, const fr& scale, std::size_t count) {
  wiped_vector<fr> out(count);
  constexpr std::size_t chunk = 4096;
  field::parallel_for(0, (count + chunk - 1) / chunk, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t c = lo; c < hi; ++c) {
      const std::size_t begin = c * chunk, end = std::min(count, begin + chunk);
      wiped<fr> value(tau.pow(static_cast<std::uint64_t>(begin)) * scale);
      for (std::size_t k = begin; k < end; ++k) {
        out[k] = *value;
        *value *= tau;
      }
    }
  });
  return out;
}

/// L_j(tau) for the n-th roots of unity of `domain`, j < n: the inverse NTT of tau's powers,
/// L_j(tau) = (1/n) sum_k tau^k omega^(-jk).
wiped_vector<fr> lagrange_at(const fr& tau, const field::evaluation_domain& domain) {
  wiped_vector<fr> lagrange = scaled_powers(tau, fr::one(), domain.size());
  field::intt(lagrange.span(), domain);
  return lagrange;
}

/// The scalars of the H points divided by delta, for either quotient form.
wiped_vector<fr> h_scalars(const toxic_waste& waste, const fr& delta_inverse, std::size_t n,
                           field::quotient_form h_form) {
  if (h_form == field::quotient_form::odd_coset_evaluations) {
    // snarkjs (zkey_new.js writeHs): the odd-indexed Lagrange values of the 2n-th roots, the
    // points omega_2n omega^i of the odd coset on which the prover evaluates A*B - C. Their sum
    // against those evaluations is (A*B - C)(tau), the even points being the domain's zeros.
    const wiped_vector<fr> doubled = lagrange_at(waste.tau, field::evaluation_domain(2 * n, field::domain_roots::ffjavascript));
    wiped_vector<fr> out(n);
    field::parallel_for(0, n, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) out[i] = doubled[2 * i + 1] * delta_inverse;
    }, 4096);
    return out;
  }
  // bellman: tau^j Z(tau) / delta for j = 0..n-2.
  const wiped<fr> z_over_delta((waste.tau.pow(static_cast<std::uint64_t>(n)) - fr::one()) * delta_inverse);
  return scaled_powers(waste.tau, *z_over_delta, n - 1);
}

}  // namespace

proving_key setup(const r1cs::pce_matrices& matrices, const toxic_waste& waste, field::quotient_form h_form) {
  try {
    matrices.validate();
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("setup: ") + e.what());
  }
  const std::size_t n = matrices.domain_size;
  const std::size_t inputs = matrices.num_inputs;
  const std::size_t aux = matrices.num_aux;
  const std::size_t variables = inputs + aux;
  const bool snarkjs = h_form == field::quotient_form::odd_coset_evaluations;
  const field::evaluation_domain domain(n, snarkjs ? field::domain_roots::ffjavascript : field::domain_roots::standard);

  wiped_vector<fr> lagrange = lagrange_at(waste.tau, domain);
  wiped_vector<fr> u(variables), v(variables), w(variables);
  transposed_product(matrices.a, matrices.coefficient_table, lagrange.span(), u.span());
  transposed_product(matrices.b, matrices.coefficient_table, lagrange.span(), v.span());
  transposed_product(matrices.c, matrices.coefficient_table, lagrange.span(), w.span());
  lagrange.wipe();

  const wiped<fr> gamma_inverse(waste.gamma.inverse());
  const wiped<fr> delta_inverse(waste.delta.inverse());
  wiped_vector<fr> ic_scalars(inputs), l_scalars(aux);
  field::parallel_for(0, variables, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      wiped<fr> ext(waste.beta * u[i] + waste.alpha * v[i] + w[i]);
      if (i < inputs) {
        ic_scalars[i] = *ext * *gamma_inverse;
      } else {
        l_scalars[i - inputs] = *ext * *delta_inverse;
      }
    }
  }, 1024);
  w.wipe();

  const detail::fixed_base_table<field::g1_curve> g1_table(field::g1_affine::generator());
  const detail::fixed_base_table<field::g2_curve> g2_table(field::g2_affine::generator());

  proving_key pk;
  pk.h_form = h_form;
  pk.vk.alpha_g1 = g1_times(waste.alpha);
  pk.vk.beta_g1 = g1_times(waste.beta);
  pk.vk.beta_g2 = g2_times(waste.beta);
  pk.vk.gamma_g2 = g2_times(waste.gamma);
  pk.vk.delta_g1 = g1_times(waste.delta);
  pk.vk.delta_g2 = g2_times(waste.delta);
  pk.vk.ic = g1_table.multiply_all(ic_scalars.span());
  pk.l = g1_table.multiply_all(l_scalars.span());
  ic_scalars.wipe();
  l_scalars.wipe();
  {
    const wiped_vector<fr> h = h_scalars(waste, *delta_inverse, n, h_form);
    pk.h = g1_table.multiply_all(h.span());
  }
  pk.a = g1_table.multiply_all(u.span());
  pk.b_g1 = g1_table.multiply_all(v.span());
  pk.b_g2 = g2_table.multiply_all(v.span());
  return pk;
}

proving_key setup(const r1cs::pce_matrices& matrices, secret_source& secrets, field::quotient_form h_form) {
  // The odd-coset form needs tau off the 2n-th roots too (its Lagrange basis is on them).
  const std::size_t avoid = h_form == field::quotient_form::odd_coset_evaluations ? 2 * matrices.domain_size
                                                                                   : matrices.domain_size;
  const toxic_waste waste(secrets, avoid);
  return setup(matrices, waste, h_form);
}

r1cs::pce_matrices record_matrices(const r1cs::circuit& circuit) {
  const std::size_t n = circuit.domain_size();
  std::vector<fr> a(n), b(n), c(n);
  r1cs::pce_matrices matrices;
  (void)r1cs::synthesize_slow(circuit, a, b, c, &matrices);
  // The witness of the circuit's own partition is private to whoever proves it.
  secure_wipe(std::span<fr>(a));
  secure_wipe(std::span<fr>(b));
  secure_wipe(std::span<fr>(c));
  return matrices;
}

}  // namespace coprove::groth16
