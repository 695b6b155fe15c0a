// The evaluation record of a partition: the quotient reduced to five field elements at a point
// zeta derived from the inputs, enough for `coprove verify` to check
// h(zeta) * (zeta^n - 1) == a(zeta) * b(zeta) - c(zeta) without the vectors.
#pragma once

#include <coprove/field/domain.hpp>
#include <coprove/field/fr.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace coprove::field {

struct evaluation_record {
  fr zeta, a, b, c, h;

  bool operator==(const evaluation_record&) const = default;
};

/// Hash-to-field: the 64 bytes SHA-256("coprove.zeta" || 0 || transcript) ||
/// SHA-256("coprove.zeta" || 1 || transcript), read little-endian and reduced mod r.
fr derive_zeta(std::span<const std::byte> transcript);

/// The zeta of one partition's evaluation record: derive_zeta over "coprove.partition", the
/// circuit's name, its log size, the seed, the partition index (little-endian u64 each) and its
/// public inputs (32 bytes each, little-endian). It depends on nothing the prover computes from the
/// witness beyond the public inputs, so the record is a self-check of the quotient, not a proof.
fr derive_partition_zeta(std::string_view circuit, std::uint64_t log_constraints, std::uint64_t seed,
                         std::uint64_t partition, std::span<const fr> public_inputs);

/// The value at zeta of the polynomial of degree < n whose evaluations on the domain are evals
/// (barycentric formula; zeta in the domain returns the matching entry). evals.size() must equal
/// domain.size() (std::invalid_argument otherwise).
fr evaluate_lagrange(std::span<const fr> evals, const evaluation_domain& domain, const fr& zeta);

/// evaluate_lagrange for several polynomials on one domain at once: the barycentric weights
/// omega^i / (zeta - omega^i) are computed once and shared, so three vectors cost about 9 field
/// multiplications a point instead of 21. Every span must have domain.size() entries.
std::vector<fr> evaluate_lagrange_many(std::span<const std::span<const fr>> polynomials,
                                       const evaluation_domain& domain, const fr& zeta);

/// sum_i coeffs[i] * zeta^i (Horner, split across the pool).
fr evaluate_coefficients(std::span<const fr> coeffs, const fr& zeta);

/// zeta, a(zeta), b(zeta), c(zeta) from the evaluations a, b, c and h(zeta) from the coefficients h.
evaluation_record make_evaluation_record(std::span<const fr> a, std::span<const fr> b,
                                         std::span<const fr> c, std::span<const fr> h,
                                         const evaluation_domain& domain, const fr& zeta);

/// True when h(zeta) * (zeta^n - 1) == a(zeta) * b(zeta) - c(zeta).
bool verify(const evaluation_record& record, std::size_t n);

/// {"zeta": "0x..", "a": .., "b": .., "c": .., "h": ..} with canonical hex strings.
boost::json::object to_json(const evaluation_record& record);
/// The inverse of to_json; throws std::invalid_argument naming the missing or malformed field.
evaluation_record record_from_json(const boost::json::value& json);

}  // namespace coprove::field
