// The constraint matrices of one circuit in compressed sparse rows (A, B and C with a shared
// coefficient table), recorded by the PCE cache from a slow synthesis and evaluated as A w, B w, C w
// by the host (pce_matrices::evaluate) or by a compute backend. The backends include this header
// alone: they need the matrices, not the cache.
#pragma once

#include <coprove/field/fr.hpp>

#include <cstddef>
#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace coprove::r1cs {
using field::fr;

class circuit;

/// A PCE file or entry that cannot be used: the message says why.
class pce_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Coefficient-table indices with a meaning of their own: no multiplication in the SpMV.
inline constexpr std::uint32_t pce_coefficient_one = 0;
inline constexpr std::uint32_t pce_coefficient_minus_one = 1;

/// Fills a coefficient table (one, minus one, then every other value once) and gives each value's
/// index, as the matrices' entries refer to it.
class coefficient_table_builder {
 public:
  /// Sets `table` to {one, minus one}; it must outlive the builder.
  explicit coefficient_table_builder(std::vector<fr>& table);
  /// The index of `value` in the table, appending it the first time it is seen.
  std::uint32_t index(const fr& value);

 private:
  struct limbs_hash {
    std::size_t operator()(const std::array<std::uint64_t, 4>& l) const noexcept;
  };
  std::vector<fr>& table_;
  std::unordered_map<std::array<std::uint64_t, 4>, std::uint32_t, limbs_hash> index_;
};

/// One matrix in compressed sparse rows; entries point into the shared coefficient table.
struct csr_matrix {
  std::vector<std::uint32_t> row_offsets;   ///< rows + 1 offsets into columns
  std::vector<std::uint32_t> columns;       ///< assignment column of each entry
  std::vector<std::uint32_t> coefficients;  ///< coefficient-table index of each entry

  std::size_t nonzeros() const noexcept { return columns.size(); }
  std::size_t bytes() const noexcept;
};

/// How the SpMV writes a, b and c. `automatic`: non-temporal (streaming) stores when the three
/// outputs together exceed 24 MiB and are 16-byte aligned (they bypass the caches, saving the read
/// of each line before it is overwritten), ordinary stores otherwise. `streaming` asks for them at
/// any size (outputs that are not 16-byte aligned still get ordinary stores).
enum class spmv_stores { automatic, cached, streaming };

/// A, B and C of one circuit, recorded from a slow synthesis.
struct pce_matrices {
  std::string circuit_id;
  std::uint64_t structure_digest = 0;
  std::size_t num_inputs = 0;
  std::size_t num_aux = 0;
  std::size_t num_rows = 0;  ///< constraints plus input rows (the rest of the domain is zero)
  std::size_t domain_size = 0;
  csr_matrix a, b, c;
  std::vector<fr> coefficient_table;  ///< [0] = one, [1] = -one, then the others, distinct

  std::size_t nonzeros() const noexcept { return a.nonzeros() + b.nonzeros() + c.nonzeros(); }
  /// Heap bytes held (what the memory plan charges).
  std::size_t bytes() const noexcept;
  /// True when these matrices were recorded from (or fit) circuit c: same id, digest and shape.
  bool matches(const circuit& c) const;
  /// The SpMV: a, b, c (each domain_size long) = A w, B w, C w, zero padded; multi-threaded.
  /// `stores` picks how the outputs are written (the values are the same either way).
  void evaluate(std::span<const fr> assignment, std::span<fr> a_out, std::span<fr> b_out,
                std::span<fr> c_out,
                spmv_stores stores = spmv_stores::automatic) const;
  /// Checks the internal invariants (offsets, columns, coefficient indices); throws pce_error.
  void validate() const;
};

}  // namespace coprove::r1cs
