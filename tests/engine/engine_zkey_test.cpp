// The engine proves a circom circuit given by its snarkjs zkey, one witness a partition: every
// proof verifies with the zkey's vk against the witness's public signals, with the assignment
// sent to the backend (its SpMV) or A w and B w evaluated on the host; the deterministic mode
// gives the same proof both ways; a witness that does not satisfy the circuit fails its job
// saying so; requests that do not fit the key are refused; everything is given back.
#include <coprove/engine/engine.hpp>

#include <coprove/engine/host_backend.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/circom_witness.hpp>

#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include "circom_test_support.hpp"
#include "engine_test_support.hpp"

#include <memory>
#include <string>

namespace {

namespace groth16 = coprove::groth16;
namespace r1cs = coprove::r1cs;
namespace test = coprove::test;
using namespace coprove::engine;
using coprove::field::fr;
using coprove::circom_fixtures::circom_data_dir;

std::shared_ptr<const groth16::zkey> fixture_key() {
  static const auto key = std::make_shared<const groth16::zkey>(groth16::read_zkey(circom_data_dir() / "poseidon_chain.zkey"));
  return key;
}

std::vector<fr> fixture_witness(int i) {
  return r1cs::read_wtns(circom_data_dir() / ("poseidon_chain_" + std::to_string(i) + ".wtns"));
}

engine_config zkey_config(bool backend_spmv = true) {
  engine_config cfg;
  cfg.max_log_constraints = 12;
  cfg.synthesis_threads = 2;
  cfg.memory_budget_bytes = std::size_t{1} << 30;
  cfg.backend_spmv = backend_spmv;
  cfg.zkey_circuits = {{"poseidon", fixture_key()}};
  return cfg;
}

prove_request zkey_request(std::vector<std::vector<fr>> witnesses) {
  prove_request r;
  r.circuit = "poseidon";
  r.witnesses = std::make_shared<const std::vector<std::vector<fr>>>(std::move(witnesses));
  return r;
}

}  // namespace

TEST_CASE("the engine proves circom witnesses with a zkey, the SpMV on the backend or on the host",
          "[engine][proof][zkey]") {
  const auto pvk = groth16::prepared_verifying_key::from(fixture_key()->pk.vk);
  const std::vector<std::vector<fr>> witnesses = {fixture_witness(1), fixture_witness(2), fixture_witness(1)};
  std::vector<groth16::proof> first_proofs;
  for (const bool backend_spmv : {true, false}) {
    INFO("backend_spmv " << backend_spmv);
    test::running_io io;
    engine_config cfg = zkey_config(backend_spmv);
    cfg.insecure_proof_seed = 7;
    engine e(io.io.get_executor(), cfg, make_host_backend(1, 2));
    auto [ec, result] = test::prove(e, zkey_request(witnesses));
    REQUIRE_FALSE(ec);
    REQUIRE(result.partitions.size() == 3);
    CHECK(result.request.log_constraints == 12);
    for (const auto& p : result.partitions) {
      INFO("partition " << p.index);
      REQUIRE(p.proof);
      CHECK(p.verified);
      CHECK(p.spmv_on_backend == backend_spmv);
      const auto& w = witnesses[p.index];
      CHECK(p.public_inputs == std::vector<fr>{w[1], w[2]});
      CHECK(groth16::verify(pvk, *p.proof, p.public_inputs));
      if (backend_spmv) {
        first_proofs.push_back(*p.proof);
      } else {
        CHECK(*p.proof == first_proofs[p.index]);  // the same proof whichever side did the SpMV
      }
    }
    test::require_at_baseline(e);
  }
}

TEST_CASE("a witness that does not satisfy the zkey's circuit fails its job saying so", "[engine][proof][zkey]") {
  test::running_io io;
  engine e(io.io.get_executor(), zkey_config(), make_host_backend(1, 2));
  auto bad = fixture_witness(1);
  bad[700] += fr::one();
  const auto id = e.submit(zkey_request({fixture_witness(2), bad}));
  auto [ec, partial] = e.async_await(id, boost::asio::use_future).get();
  CHECK(ec == make_error_code(engine_errc::verification_failed));
  const auto st = e.status(id);
  REQUIRE(st);
  CHECK(st->error.find("the witness does not satisfy the circuit") != std::string::npos);
  test::require_at_baseline(e);
}

TEST_CASE("zkey requests and circuits that do not fit are refused", "[engine][zkey]") {
  test::running_io io;
  engine e(io.io.get_executor(), zkey_config(), make_host_backend(1, 1));
  auto short_witness = fixture_witness(1);
  short_witness.pop_back();
  CHECK_THROWS_WITH(e.submit(zkey_request({short_witness})),
                    Catch::Matchers::Contains("witness 0 has 2070 values, poseidon 2071 signals"));
  CHECK_THROWS_WITH(e.submit(zkey_request({})), Catch::Matchers::Contains("needs its witness"));
  prove_request no_witnesses;
  no_witnesses.circuit = "poseidon";
  CHECK_THROWS_WITH(e.submit(no_witnesses), Catch::Matchers::Contains("needs its witness"));
  prove_request mimc_with_witnesses = zkey_request({fixture_witness(1)});
  mimc_with_witnesses.circuit = "mimc";
  CHECK_THROWS_WITH(e.submit(mimc_with_witnesses), Catch::Matchers::Contains("not a zkey circuit"));

  engine_config small = zkey_config();
  small.max_log_constraints = 11;
  CHECK_THROWS_WITH(engine(io.io.get_executor(), small, make_host_backend(1, 1)),
                    Catch::Matchers::Contains("exceeds the memory plan's 2^11"));
}
