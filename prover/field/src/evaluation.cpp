// Evaluation records: zeta from a hash of the inputs, a/b/c at zeta by the barycentric formula over
// the domain, h at zeta by Horner, and the check that ties them to the vanishing polynomial.
#include <coprove/field/evaluation.hpp>

#include <coprove/field/parallel.hpp>
#include <coprove/field/sha256.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace coprove::field {

namespace {

/// Splits [0, n) into about 4 pieces per thread, at least min_piece long; returns the boundaries.
std::vector<std::size_t> split(std::size_t n, std::size_t min_piece) {
  const std::size_t pieces =
      std::max<std::size_t>(1, std::min(parallelism() * 4, n / std::max<std::size_t>(min_piece, 1)));
  std::vector<std::size_t> bounds(pieces + 1);
  for (std::size_t k = 0; k <= pieces; ++k) bounds[k] = n * k / pieces;
  return bounds;
}

/// A 256-bit little-endian value reduced mod r, as a field element.
fr reduce_256(const std::byte* bytes) {
  std::array<std::uint64_t, 4> x{};
  for (std::size_t i = 0; i < 32; ++i) {
    x[i / 8] |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(bytes[i])) << (8 * (i % 8));
  }
  // x < 2^256 < 3r: at most two subtractions.
  for (int round = 0; round < 2; ++round) {
    std::uint64_t borrow = 0;
    std::array<std::uint64_t, 4> t;
    for (int i = 0; i < 4; ++i) t[i] = detail::sbb(x[i], detail::fr_modulus[i], borrow);
    if (borrow == 0) x = t;
  }
  return fr::from_canonical(x);
}

fr parse_field(const boost::json::object& object, const char* name) {
  const auto* value = object.if_contains(name);
  if (value == nullptr) {
    throw std::invalid_argument(std::string("evaluation record: missing field \"") + name + "\"");
  }
  if (!value->is_string()) {
    throw std::invalid_argument(std::string("evaluation record: field \"") + name +
                                "\" is not a string");
  }
  try {
    return fr::from_hex(std::string_view(value->get_string()));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("evaluation record: field \"") + name +
                                "\" is not a field element: " + e.what());
  }
}

}  // namespace

fr derive_zeta(std::span<const std::byte> transcript) {
  std::array<std::byte, 64> wide;
  for (std::uint8_t half = 0; half < 2; ++half) {
    sha256 hasher;
    hasher.update(std::string_view("coprove.zeta"));
    const std::byte counter{half};
    hasher.update(std::span<const std::byte>(&counter, 1));
    hasher.update(transcript);
    const auto digest = hasher.finish();
    std::copy(digest.begin(), digest.end(), wide.begin() + 32 * half);
  }
  // value = low + high * 2^256, and 2^256 mod r is R (the Montgomery form of one, read as a number).
  const fr low = reduce_256(wide.data());
  const fr high = reduce_256(wide.data() + 32);
  static const fr two_256 = fr::from_canonical(detail::fr_r);
  return low + high * two_256;
}

fr derive_partition_zeta(std::string_view circuit, std::uint64_t log_constraints, std::uint64_t seed,
                         std::uint64_t partition, std::span<const fr> public_inputs) {
  std::vector<std::byte> transcript;
  const auto append = [&](std::string_view text) {
    for (char ch : text) transcript.push_back(static_cast<std::byte>(ch));
  };
  const auto append_le = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) transcript.push_back(static_cast<std::byte>(v >> (8 * i)));
  };
  append("coprove.partition");
  append(circuit);
  append_le(log_constraints);
  append_le(seed);
  append_le(partition);
  for (const fr& x : public_inputs) {
    const auto bytes = x.to_bytes_le();
    transcript.insert(transcript.end(), bytes.begin(), bytes.end());
  }
  return derive_zeta(transcript);
}

fr evaluate_lagrange(std::span<const fr> evals, const evaluation_domain& domain, const fr& zeta) {
  const std::span<const fr> one[] = {evals};
  return evaluate_lagrange_many(one, domain, zeta).front();
}

std::vector<fr> evaluate_lagrange_many(std::span<const std::span<const fr>> polynomials,
                                       const evaluation_domain& domain, const fr& zeta) {
  const std::size_t n = domain.size();
  const std::size_t count = polynomials.size();
  for (const auto& evals : polynomials) {
    if (evals.size() != n) {
      throw std::invalid_argument("evaluate_lagrange: " + std::to_string(evals.size()) +
                                  " evaluations for a domain of size " + std::to_string(n));
    }
  }
  std::vector<fr> values(count, fr::zero());
  if (count == 0) return values;
  const fr zeta_n = zeta.pow(static_cast<std::uint64_t>(n));
  if (zeta_n == fr::one()) {
    // zeta = omega^i for some i: each polynomial's value there is its entry itself.
    std::atomic<std::size_t> found{n};
    parallel_for(0, n, [&](std::size_t lo, std::size_t hi) {
      fr w = domain.omega().pow(static_cast<std::uint64_t>(lo));
      for (std::size_t i = lo; i < hi; ++i) {
        if (w == zeta) found.store(i);
        w *= domain.omega();
      }
    }, 1 << 12);
    const std::size_t i = found.load();
    if (i == n) throw std::logic_error("evaluate_lagrange: zeta^n == 1 but zeta is not in the domain");
    for (std::size_t p = 0; p < count; ++p) values[p] = polynomials[p][i];
    return values;
  }
  // f(zeta) = (zeta^n - 1)/n * sum_i evals[i] * omega^i / (zeta - omega^i). Each piece inverts its
  // denominators with one field inversion (Montgomery's trick); the weight of point i is shared by
  // every polynomial.
  const auto bounds = split(n, 1 << 12);
  const std::size_t pieces = bounds.size() - 1;
  std::vector<fr> partial(pieces * count, fr::zero());
  parallel_for(0, pieces, [&](std::size_t first, std::size_t last) {
    std::vector<fr> prefix;
    std::vector<fr> sums(count);
    for (std::size_t k = first; k < last; ++k) {
      const std::size_t lo = bounds[k], hi = bounds[k + 1];
      prefix.resize(hi - lo);
      const fr w0 = domain.omega().pow(static_cast<std::uint64_t>(lo));
      fr w = w0;
      fr running = fr::one();
      for (std::size_t i = lo; i < hi; ++i) {
        prefix[i - lo] = running;
        running *= zeta - w;
        w *= domain.omega();
      }
      fr inv = running.inverse();  // 1 / prod (zeta - omega^i) over the piece
      // Walk back down: recover each 1/(zeta - omega^i) and accumulate.
      std::fill(sums.begin(), sums.end(), fr::zero());
      fr w_back = w0 * domain.omega().pow(static_cast<std::uint64_t>(hi - lo - 1));
      for (std::size_t i = hi; i-- > lo;) {
        const fr denominator = zeta - w_back;
        const fr weight = w_back * (inv * prefix[i - lo]);
        inv *= denominator;
        for (std::size_t p = 0; p < count; ++p) sums[p] += polynomials[p][i] * weight;
        w_back *= domain.omega_inv();
      }
      for (std::size_t p = 0; p < count; ++p) partial[k * count + p] = sums[p];
    }
  });
  const fr scale = (zeta_n - fr::one()) * domain.size_inv();
  for (std::size_t p = 0; p < count; ++p) {
    fr total = fr::zero();
    for (std::size_t k = 0; k < pieces; ++k) total += partial[k * count + p];
    values[p] = total * scale;
  }
  return values;
}

fr evaluate_coefficients(std::span<const fr> coeffs, const fr& zeta) {
  const std::size_t n = coeffs.size();
  if (n == 0) return fr::zero();
  const auto bounds = split(n, 1 << 12);
  std::vector<fr> partial(bounds.size() - 1, fr::zero());
  parallel_for(0, partial.size(), [&](std::size_t first, std::size_t last) {
    for (std::size_t k = first; k < last; ++k) {
      const std::size_t lo = bounds[k], hi = bounds[k + 1];
      fr acc = fr::zero();
      for (std::size_t i = hi; i-- > lo;) acc = acc * zeta + coeffs[i];
      partial[k] = acc * zeta.pow(static_cast<std::uint64_t>(lo));
    }
  });
  fr total = fr::zero();
  for (const fr& p : partial) total += p;
  return total;
}

evaluation_record make_evaluation_record(std::span<const fr> a, std::span<const fr> b,
                                         std::span<const fr> c, std::span<const fr> h,
                                         const evaluation_domain& domain, const fr& zeta) {
  if (h.size() != domain.size()) {
    throw std::invalid_argument("make_evaluation_record: h has " + std::to_string(h.size()) +
                                " coefficients for a domain of size " +
                                std::to_string(domain.size()));
  }
  const std::span<const fr> abc[] = {a, b, c};
  const std::vector<fr> values = evaluate_lagrange_many(abc, domain, zeta);
  return evaluation_record{zeta, values[0], values[1], values[2], evaluate_coefficients(h, zeta)};
}

bool verify(const evaluation_record& record, std::size_t n) {
  const fr vanishing = record.zeta.pow(static_cast<std::uint64_t>(n)) - fr::one();
  return record.h * vanishing == record.a * record.b - record.c;
}

boost::json::object to_json(const evaluation_record& record) {
  boost::json::object out;
  out["zeta"] = record.zeta.to_hex();
  out["a"] = record.a.to_hex();
  out["b"] = record.b.to_hex();
  out["c"] = record.c.to_hex();
  out["h"] = record.h.to_hex();
  return out;
}

evaluation_record record_from_json(const boost::json::value& json) {
  const auto* object = json.if_object();
  if (object == nullptr) throw std::invalid_argument("evaluation record: not a JSON object");
  return evaluation_record{parse_field(*object, "zeta"), parse_field(*object, "a"),
                           parse_field(*object, "b"), parse_field(*object, "c"),
                           parse_field(*object, "h")};
}

}  // namespace coprove::field
