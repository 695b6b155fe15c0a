// Tests of the MiMC hash chain and Merkle-path circuits and the circuit registry, and that the
// witness is the same on every Fr multiplication path (the x86-64 one chains lazy values).
#include <coprove/r1cs/mimc.hpp>
#include <coprove/r1cs/bits.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/merkle.hpp>
#include <coprove/r1cs/synthesis.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

using namespace coprove::field;
using namespace coprove::r1cs;

namespace {

std::string error_of(std::string_view name, unsigned log) {
  try {
    (void)make_circuit(name, log, 1, 0);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

/// Restores the Fr multiplication path active when the test began.
struct path_guard {
  fr_multiply_path saved = active_fr_multiply_path();
  ~path_guard() { set_fr_multiply_path(saved); }
};

/// (x + k)^5, k the round constant, on the portable product alone: the reference chain.
fr reference_round(const fr& x, std::uint64_t tag, std::uint64_t i) {
  const fr t = x + mimc_round_constant(tag, i);
  const fr s{detail::mont_mul_portable(t.limbs, t.limbs)};
  const fr q{detail::mont_mul_portable(s.limbs, s.limbs)};
  return fr{detail::mont_mul_portable(q.limbs, t.limbs)};
}

}  // namespace

TEST_CASE("the MiMC chain fills its domain and satisfies every row", "[prover][mimc][cpu]") {
  for (unsigned log : {10u, 11u, 12u}) {
    const mimc_circuit c(log, mimc_circuit::preimage_for(7, 3));
    const std::size_t n = c.domain_size();
    const circuit_shape s = c.shape();
    CHECK(c.rounds() == (n - 2) / 3);
    CHECK(s.num_rows() <= n);
    CHECK(n - s.num_rows() < 3);  // the rounds use the domain up to less than one round
    std::vector<fr> a(n), b(n), cv(n);
    const synthesis_output out = synthesize_slow(c, a, b, cv);
    CHECK_FALSE(first_unsatisfied_row(a, b, cv).has_value());
    REQUIRE(out.public_inputs.size() == 1);
    CHECK(out.public_inputs[0] == c.output());
    CHECK(out.num_constraints == s.num_rows());
  }
}

TEST_CASE("a false MiMC output is caught in the last round", "[prover][mimc][cpu]") {
  const fr preimage = mimc_circuit::preimage_for(1, 0);
  const mimc_circuit honest(10, preimage);
  const mimc_circuit cheat(10, preimage, honest.output() + fr::one());
  std::vector<fr> a(1024), b(1024), c(1024);
  synthesize_slow(cheat, a, b, c);
  const auto bad = first_unsatisfied_row(a, b, c);
  REQUIRE(bad.has_value());
  CHECK(*bad == 3 * cheat.rounds() - 1);
}

TEST_CASE("partitions prove different preimages over the same structure", "[prover][mimc][cpu]") {
  const auto p0 = make_circuit("mimc", 12, 5, 0);
  const auto p1 = make_circuit("mimc", 12, 5, 1);
  const auto other_seed = make_circuit("mimc", 12, 6, 0);
  CHECK(p0->id() == "mimc/12");
  CHECK(p0->id() == p1->id());
  CHECK(p0->structure_digest() == p1->structure_digest());
  CHECK(p0->structure_digest() != make_circuit("mimc", 13, 5, 0)->structure_digest());
  const auto& m0 = dynamic_cast<const mimc_circuit&>(*p0);
  const auto& m1 = dynamic_cast<const mimc_circuit&>(*p1);
  const auto& m2 = dynamic_cast<const mimc_circuit&>(*other_seed);
  CHECK(m0.preimage() != m1.preimage());
  CHECK(m0.preimage() != m2.preimage());
  CHECK(m0.preimage() == mimc_circuit::preimage_for(5, 0));
  CHECK(m0.output() != m1.output());
}

TEST_CASE("the MiMC witness and outputs are bit-identical on every multiplication path",
          "[prover][mimc][cpu]") {
  path_guard guard;
  const fr preimage = mimc_circuit::preimage_for(11, 2);
  const mimc_circuit chain(12, preimage);
  const auto merkle = make_circuit("merkle", 12, 3, 1);
  const std::array<fr, 4> starts{fr::zero(), fr::one(), -fr::one(), preimage};
  std::vector<std::vector<fr>> witnesses, merkle_witnesses, permutations;
  for (fr_multiply_path path : {fr_multiply_path::portable, fr_multiply_path::x86_64_adx}) {
    if (!fr_multiply_path_supported(path)) continue;
    set_fr_multiply_path(path);
    INFO("path " << to_string(path));
    // The chain's every value against the reference: s, q, y of each round (the last y is the
    // public output), the preimage first among the auxiliaries.
    const std::vector<fr> w = synthesize_witness(chain);
    const std::size_t inputs = chain.shape().num_inputs;
    REQUIRE(w.size() == chain.shape().num_variables());
    CHECK(w[inputs] == preimage);
    fr x = preimage;
    std::size_t mismatches = 0;
    for (std::size_t r = 0; r < chain.rounds(); ++r) {
      const fr t = x + mimc_round_constant(mimc_chain_tag, r);
      const fr s{detail::mont_mul_portable(t.limbs, t.limbs)};
      const fr q{detail::mont_mul_portable(s.limbs, s.limbs)};
      x = reference_round(x, mimc_chain_tag, r);
      const std::size_t at = inputs + 1 + 3 * r;
      if (w[at] != s || w[at + 1] != q) ++mismatches;
      if (r + 1 < chain.rounds() && w[at + 2] != x) ++mismatches;
    }
    CHECK(mismatches == 0);
    CHECK(w[1] == x);
    CHECK(chain.output() == x);
    witnesses.push_back(w);
    merkle_witnesses.push_back(synthesize_witness(*merkle));
    // Long permutations from edge and ordinary starts.
    std::vector<fr> outs;
    for (const fr& start : starts) {
      fr ref = start;
      for (std::uint64_t i = 0; i < 4000; ++i) ref = reference_round(ref, 99, 5 + i);
      outs.push_back(mimc_permute(start, 4000, 99, 5));
      CHECK(outs.back() == ref);
    }
    CHECK(mimc_permute(preimage, 0, 99) == preimage);
    permutations.push_back(outs);
  }
  for (std::size_t i = 1; i < witnesses.size(); ++i) {
    CHECK(witnesses[i] == witnesses[0]);
    CHECK(merkle_witnesses[i] == merkle_witnesses[0]);
    CHECK(permutations[i] == permutations[0]);
  }
}

TEST_CASE("MiMC round constants are deterministic and reduced", "[prover][mimc][cpu]") {
  CHECK(mimc_round_constant(mimc_chain_tag, 0) == mimc_round_constant(mimc_chain_tag, 0));
  CHECK(mimc_round_constant(mimc_chain_tag, 0) != mimc_round_constant(mimc_chain_tag, 1));
  CHECK(mimc_round_constant(mimc_chain_tag, 0) != mimc_round_constant(merkle_hash_tag, 0));
  for (std::uint64_t i = 0; i < 64; ++i) {
    const fr k = mimc_round_constant(mimc_chain_tag, i);
    // A reduced Montgomery value round-trips through its canonical form.
    CHECK(fr::from_canonical(k.to_canonical()) == k);
  }
  // (x + k)^5 for one round, written out.
  const fr x = fr::from_uint64(9);
  const fr t = x + mimc_round_constant(mimc_chain_tag, 0);
  CHECK(mimc_permute(x, 1, mimc_chain_tag) == t * t * t * t * t);
}

TEST_CASE("the Merkle path circuit proves its root and catches a wrong path",
          "[prover][merkle][cpu]") {
  const merkle_path_circuit c(12, 3, 2);
  CHECK(c.id() == "merkle/12");
  REQUIRE(c.depth() == merkle_path_circuit::depth_for(12));
  REQUIRE(c.depth() >= 2);
  bool any_left = false, any_right = false;
  for (std::size_t i = 0; i < c.depth(); ++i) (c.direction(i) ? any_right : any_left) = true;
  CHECK((any_left && any_right));

  checking_system cs(c.shape());
  c.synthesize(cs);
  REQUIRE_NOTHROW(cs.check_complete());
  CHECK_FALSE(cs.first_unsatisfied().has_value());
  CHECK(cs.value(variable{1}) == c.root());

  // Level 0 allocates sibling then bit right after the leaf.
  const variable leaf{static_cast<std::uint32_t>(c.shape().num_inputs)};
  const variable sibling{leaf.index + 1};
  const variable bit{leaf.index + 2};
  SECTION("a direction bit that is not boolean breaks the bit constraint") {
    cs.set_value(bit, fr::from_uint64(2));
    REQUIRE(cs.first_unsatisfied().has_value());
    CHECK(*cs.first_unsatisfied() == 0);
  }
  SECTION("a wrong sibling breaks a constraint") {
    cs.set_value(sibling, cs.value(sibling) + fr::one());
    CHECK(cs.first_unsatisfied().has_value());
  }
  SECTION("the slow path's a, b, c satisfy every row") {
    std::vector<fr> a(c.domain_size()), b(c.domain_size()), cv(c.domain_size());
    synthesize_slow(c, a, b, cv);
    CHECK_FALSE(first_unsatisfied_row(a, b, cv).has_value());
  }
}

TEST_CASE("the bits circuit: a witness of bits, its rounds XOR with rotations, its output the last state",
          "[prover][bits][cpu]") {
  for (unsigned log : {10u, 12u}) {
    const bits_circuit c(log, bits_circuit::state_for(5, 1));
    CHECK(c.id() == "bits/" + std::to_string(log));
    CHECK(c.rounds() == ((std::size_t{1} << log) - 67) / 64);
    CHECK(c.shape().num_rows() <= c.domain_size());
    CHECK(c.domain_size() - c.shape().num_rows() < 64);  // the rounds fill the domain
    checking_system cs(c.shape());
    c.synthesize(cs);
    REQUIRE_NOTHROW(cs.check_complete());
    CHECK_FALSE(cs.first_unsatisfied().has_value());
    // Natively: x ^= rotl(x, k) with k cycling 13, 7, 17.
    std::uint64_t x = bits_circuit::state_for(5, 1);
    for (std::size_t r = 0; r < c.rounds(); ++r) {
      const unsigned k = std::array<unsigned, 3>{13, 7, 17}[r % 3];
      x ^= (x << k) | (x >> (64 - k));
    }
    CHECK(c.output() == x);
    CHECK(cs.value(variable{1}) == fr::from_uint64(x));
    // Every auxiliary is a bit, and both values occur.
    std::size_t ones = 0;
    const auto w = cs.assignment();
    for (std::size_t i = c.shape().num_inputs; i < w.size(); ++i) {
      REQUIRE((w[i] == fr::zero() || w[i] == fr::one()));
      ones += w[i] == fr::one() ? 1 : 0;
    }
    CHECK(ones > w.size() / 4);
    CHECK(ones < 3 * w.size() / 4);
    std::vector<fr> a(c.domain_size()), b(c.domain_size()), cv(c.domain_size());
    synthesize_slow(c, a, b, cv);
    CHECK_FALSE(first_unsatisfied_row(a, b, cv).has_value());
  }
  CHECK(bits_circuit::state_for(5, 1) != bits_circuit::state_for(5, 2));
  CHECK(bits_circuit::state_for(5, 1) != bits_circuit::state_for(6, 1));

  const bits_circuit c(10, 0x0123456789abcdefULL);
  checking_system cs(c.shape());
  c.synthesize(cs);
  const variable first_bit{static_cast<std::uint32_t>(c.shape().num_inputs)};
  SECTION("a first-state bit that is not a bit breaks its check") {
    cs.set_value(first_bit, fr::from_uint64(2));
    REQUIRE(cs.first_unsatisfied().has_value());
    CHECK(*cs.first_unsatisfied() == 0);
  }
  SECTION("a wrong XOR bit breaks its row") {
    const variable round0_bit{first_bit.index + 64};
    cs.set_value(round0_bit, fr::one() - cs.value(round0_bit));
    REQUIRE(cs.first_unsatisfied().has_value());
    CHECK(*cs.first_unsatisfied() == 64);
  }
  SECTION("a wrong output breaks the packing row") {
    cs.set_value(variable{1}, cs.value(variable{1}) + fr::one());
    REQUIRE(cs.first_unsatisfied().has_value());
    CHECK(*cs.first_unsatisfied() == 64 * (c.rounds() + 1));
  }
}

TEST_CASE("bad circuit parameters are rejected with clear errors", "[prover][circuits][cpu]") {
  const std::string unknown = error_of("sha256", 12);
  CHECK(unknown.find("circuit") != std::string::npos);
  CHECK(unknown.find("sha256") != std::string::npos);
  CHECK(unknown.find("\"mimc\"") != std::string::npos);
  CHECK(unknown.find("\"merkle\"") != std::string::npos);
  for (unsigned log : {0u, 9u, 28u, 64u}) {
    const std::string message = error_of("mimc", log);
    CHECK(message.find("log_constraints") != std::string::npos);
    CHECK(message.find(std::to_string(log)) != std::string::npos);
    CHECK(message.find("10..27") != std::string::npos);
  }
  CHECK_THROWS_AS(mimc_circuit(9, fr::one()), std::invalid_argument);
  CHECK_THROWS_AS(merkle_path_circuit(28, 1, 0), std::invalid_argument);
  CHECK(circuit_known("mimc"));
  CHECK(circuit_known("merkle"));
  CHECK_FALSE(circuit_known("MiMC"));
  CHECK(circuit_known("bits"));
  CHECK(circuit_families().size() == 3);
  // The largest size is accepted and cheap to construct (nothing is synthesized).
  const auto big = make_circuit("mimc", 27, 1, 0);
  CHECK(big->shape().num_rows() <= big->domain_size());
  CHECK(make_circuit("merkle", 27, 1, 0)->shape().num_rows() <= (std::size_t{1} << 27));
}
