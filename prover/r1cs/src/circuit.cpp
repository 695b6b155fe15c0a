// Circuit ids and the registry of circuit families by name.
#include <coprove/r1cs/circuit.hpp>
#include <coprove/r1cs/bits.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/merkle.hpp>
#include <coprove/r1cs/mimc.hpp>
#include <coprove/field/sha256.hpp>

#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

namespace coprove::r1cs {

circuit::~circuit() = default;

std::string circuit::id() const {
  std::string out(family());
  out += '/';
  out += std::to_string(log_constraints());
  return out;
}

namespace {

constexpr std::array<std::string_view, 3> families{"mimc", "merkle", "bits"};

std::string known_names() {
  std::string out;
  for (std::string_view f : families) {
    if (!out.empty()) out += ", ";
    out += '"';
    out += f;
    out += '"';
  }
  return out;
}

}  // namespace

std::span<const std::string_view> circuit_families() noexcept { return families; }

bool circuit_known(std::string_view name) noexcept {
  for (std::string_view f : families) {
    if (f == name) return true;
  }
  return false;
}

void validate_circuit_parameters(std::string_view name, unsigned log_constraints) {
  if (!circuit_known(name)) {
    throw std::invalid_argument("circuit: unknown circuit \"" + std::string(name) +
                                "\" (known: " + known_names() + ")");
  }
  if (log_constraints < min_log_constraints || log_constraints > max_log_constraints) {
    throw std::invalid_argument("log_constraints: " + std::to_string(log_constraints) +
                                " is out of range (allowed " + std::to_string(min_log_constraints) +
                                ".." + std::to_string(max_log_constraints) + ")");
  }
}

std::unique_ptr<circuit> make_circuit(std::string_view name, unsigned log_constraints,
                                      std::uint64_t seed, std::size_t partition) {
  validate_circuit_parameters(name, log_constraints);
  if (name == "mimc") {
    return std::make_unique<mimc_circuit>(log_constraints,
                                          mimc_circuit::preimage_for(seed, partition));
  }
  if (name == "bits") return std::make_unique<bits_circuit>(log_constraints, bits_circuit::state_for(seed, partition));
  return std::make_unique<merkle_path_circuit>(log_constraints, seed, partition);
}

std::uint64_t circuit_structure_digest(std::initializer_list<std::uint64_t> words) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::uint64_t w : words) {
    for (int i = 0; i < 8; ++i) {
      h ^= (w >> (8 * i)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

}  // namespace coprove::r1cs

namespace coprove::r1cs {

std::array<std::byte, 32> partition_digest(std::string_view label, std::uint64_t seed, std::size_t partition) {
  field::sha256 h;
  h.update(label);
  std::array<std::byte, 16> words{};
  const std::uint64_t p = partition;
  std::memcpy(words.data(), &seed, 8);
  std::memcpy(words.data() + 8, &p, 8);
  h.update(words);
  const field::sha256::digest d = h.finish();
  std::array<std::byte, 32> out{};
  std::memcpy(out.data(), d.data(), 32);
  return out;
}

}  // namespace coprove::r1cs
