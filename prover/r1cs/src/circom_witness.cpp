// circom's .wtns files (see circom_witness.hpp).
#include <coprove/r1cs/circom_witness.hpp>

#include <coprove/field/parallel.hpp>

#include <atomic>
#include <limits>

namespace coprove::r1cs {

namespace {

constexpr std::uint32_t header_section = 1;
constexpr std::uint32_t values_section = 2;
constexpr std::size_t n8 = 32;

void put_le(std::vector<std::uint8_t>& out, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

}  // namespace

std::vector<field::fr> decode_wtns(std::vector<std::uint8_t> bytes, const std::string& name,
                                   std::optional<std::size_t> expected_count) {
  const binfile file(std::move(bytes), name, "wtns", 2);
  section_reader header(file, file.section(header_section, "1 (header)"), "1 (header)");
  const std::uint32_t field_bytes = header.u32("n8");
  const auto prime = header.bytes(field_bytes, "the prime");
  if (field_bytes != n8 || !is_bls12_381_r(prime))
    header.fail("the witness is over " + describe_prime(prime) + ", not BLS12-381's r (compile with circom --prime bls12381)");
  const std::uint32_t count = header.u32("nWitness");
  header.expect_end();
  if (count == 0) header.fail("the witness has no values (the constant one is missing)");
  if (expected_count && count != *expected_count)
    header.fail("the witness has " + std::to_string(count) + " values, the circuit " + std::to_string(*expected_count) +
                " (a witness of another circuit)");
  const auto values = file.section(values_section, "2 (values)");
  if (values.size() != std::size_t{count} * n8)
    file.fail("2 (values)", "holds " + std::to_string(values.size()) + " bytes, the header's " + std::to_string(count) +
                                " values need " + std::to_string(std::size_t{count} * n8) +
                                (values.size() < std::size_t{count} * n8 ? " (truncated)" : ""));
  std::vector<field::fr> out(count);
  std::atomic<std::size_t> bad{std::numeric_limits<std::size_t>::max()};
  field::parallel_for(0, count, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      const auto v = fr_from_le_bytes(values.subspan(i * n8, n8));
      if (!v) {
        std::size_t seen = bad.load();
        while (i < seen && !bad.compare_exchange_weak(seen, i)) {
        }
        return;
      }
      out[i] = *v;
    }
  }, 1 << 14);
  if (bad.load() != std::numeric_limits<std::size_t>::max())
    file.fail("2 (values)", "value " + std::to_string(bad.load()) + " is not below r");
  if (out[0] != field::fr::one()) file.fail("2 (values)", "value 0 is not the constant one");
  return out;
}

std::vector<field::fr> read_wtns(const std::filesystem::path& path, std::optional<std::size_t> expected_count) {
  return decode_wtns(read_file_bytes(path, "witness (.wtns)"), path.string(), expected_count);
}

std::size_t wtns_file_bytes(std::size_t count) noexcept { return 12 + 12 + 4 + n8 + 4 + 12 + count * n8; }

std::vector<std::uint8_t> encode_wtns(const std::vector<field::fr>& values) {
  std::vector<std::uint8_t> out;
  out.reserve(wtns_file_bytes(values.size()));
  out.insert(out.end(), {'w', 't', 'n', 's'});
  put_le(out, 2, 4);
  put_le(out, 2, 4);
  put_le(out, header_section, 4);
  put_le(out, 4 + n8 + 4, 8);
  put_le(out, n8, 4);
  for (std::uint64_t limb : field::detail::fr_modulus) put_le(out, limb, 8);
  put_le(out, values.size(), 4);
  put_le(out, values_section, 4);
  put_le(out, values.size() * n8, 8);
  for (const auto& v : values)
    for (std::uint64_t limb : v.to_canonical()) put_le(out, limb, 8);
  return out;
}

}  // namespace coprove::r1cs
