// The partition sources on their own: a built-in circuit's requests validated and prepared (facts
// remembered, the key found), its slow path recorded, its quotient evaluated at zeta; the
// configured synthesizer counted as such; a zkey circuit's request completed from its witnesses,
// its witness copied in as the assignment (or b and c asked for), its quotient in snarkjs's form.
#include <coprove/engine/detail/partition_source.hpp>

#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/circom_witness.hpp>

#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include "circom_test_support.hpp"
#include <support/test_keys.hpp>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

namespace {

using namespace coprove::engine;
using namespace coprove::engine::detail;
using coprove::field::fr;
using coprove::circom_fixtures::circom_data_dir;

// The parts a source reads, as an engine holds them.
struct parts_of {
  engine_config config;
  key_registry keys;
  job_table jobs{1, {}, {}};
  coprove::r1cs::pce_cache pce;
  boost::asio::io_context io;
  pce_files files{"", true, std::shared_ptr<coprove::r1cs::pce_cache>(&pce, [](auto*) {}), io.get_executor()};
  explicit parts_of(engine_config cfg) : config(std::move(cfg)), keys(config) {}
  source_parts parts() { return {config, keys, jobs, pce, files}; }
};

engine_config circuit_config() {
  engine_config cfg;
  cfg.max_log_constraints = 10;
  cfg.keys = coprove::test::test_keys({{"mimc", 10}});
  return cfg;
}

std::shared_ptr<job> job_for(partition_source& source, prove_request& request) {
  const prepared_job p = source.prepare(request);
  auto shared = std::make_shared<job>();
  job& j = *shared;
  j.request = request;
  j.domain = p.domain ? p.domain : std::make_shared<const coprove::field::evaluation_domain>(
                                       std::size_t{1} << request.log_constraints);
  j.key = p.key;
  j.zkey = p.zkey;
  j.circuit_id = p.facts.id;
  j.witness_fits = p.facts.witness_fits;
  j.source = &source;
  return shared;
}

}  // namespace

TEST_CASE("a built-in circuit's source validates, prepares, records its slow path and evaluates at zeta",
          "[engine][partition_source][cpu]") {
  parts_of parts(circuit_config());
  auto source = make_circuit_source(parts.parts());
  prove_request request;
  request.circuit = "mimc";
  request.log_constraints = 10;
  request.partitions = 2;
  prove_request other = request;
  other.log_constraints = 11;
  CHECK_THROWS_WITH(source->validate(other), Catch::Contains("no proving key for mimc/11"));
  other = request;
  other.witnesses = std::make_shared<const std::vector<std::vector<fr>>>();
  CHECK_THROWS_WITH(source->validate(other), Catch::Contains("is not a zkey circuit"));

  const auto shared = job_for(*source, request);
  const job& j = *shared;
  CHECK(j.circuit_id == "mimc/10");
  CHECK(j.key == parts.keys.find("mimc", 10));
  CHECK_FALSE(j.zkey);
  REQUIRE(parts.jobs.facts("mimc", 10));
  CHECK_FALSE(source->sends_assignment(j));  // no PCE yet

  std::vector<fr> a(1024), b(1024), c(1024);
  const synthesis_outcome s = source->synthesize(j, 0, a, b, c, 3, true);
  REQUIRE(s.error.empty());
  CHECK(s.lane == 3);
  CHECK(source->one_off(s));
  CHECK(source->synthesized(j, s) == synthesis_path::slow);
  CHECK(parts.files.entries().at("mimc/10").state == "off");  // recorded, no folder to save in
  CHECK(source->sends_assignment(j));  // the PCE exists now

  partition_inputs inputs;
  const quotient_task task = source->quotient(j, 0, s.assignment, inputs, s);
  CHECK(task.form == coprove::field::quotient_form::coefficients);
  CHECK(task.zeta == coprove::field::derive_partition_zeta("mimc", 10, request.seed, 0, s.output.public_inputs));
}

TEST_CASE("a configured synthesizer's source is counted as configured and never as a one-off",
          "[engine][partition_source][cpu]") {
  engine_config cfg = circuit_config();
  cfg.synthesizer = [](const prove_request&, std::size_t, std::span<fr> a, std::span<fr> b, std::span<fr> c) {
    std::fill(a.begin(), a.end(), fr::one());
    std::fill(b.begin(), b.end(), fr::one());
    std::fill(c.begin(), c.end(), fr::one());
    return coprove::r1cs::deferred_synthesis{};
  };
  parts_of parts(cfg);
  auto source = make_circuit_source(parts.parts());
  prove_request request;
  request.log_constraints = 10;
  request.partitions = 1;
  const auto shared = job_for(*source, request);
  const job& j = *shared;
  CHECK(source->sends_assignment(j));
  std::vector<fr> a(1024), b(1024), c(1024);
  const synthesis_outcome s = source->synthesize(j, 0, a, b, c, 0, true);
  REQUIRE(s.error.empty());
  CHECK(a[5] == fr::one());
  CHECK_FALSE(source->one_off(s));
  CHECK(source->synthesized(j, s) == synthesis_path::configured);
  CHECK(parts.files.entries().empty());
}

TEST_CASE("a zkey circuit's source completes the request from its witnesses and takes them as assignments",
          "[engine][partition_source][zkey]") {
  engine_config cfg;
  cfg.max_log_constraints = 12;
  cfg.zkey_circuits = {
      {"poseidon", std::make_shared<const coprove::groth16::zkey>(
                       coprove::groth16::read_zkey(circom_data_dir() / "poseidon_chain.zkey"))}};
  parts_of parts(cfg);
  auto source = make_zkey_source(parts.parts());
  const std::vector<fr> w = coprove::r1cs::read_wtns(circom_data_dir() / "poseidon_chain_1.wtns");
  prove_request request;
  request.circuit = "poseidon";
  request.witnesses = std::make_shared<const std::vector<std::vector<fr>>>(std::vector<std::vector<fr>>{w, w});
  const auto shared = job_for(*source, request);
  const job& j = *shared;
  CHECK(j.request.partitions == 2);
  CHECK(j.request.log_constraints == j.zkey->domain().log_size());
  CHECK(j.key == parts.keys.find_zkey("poseidon")->keys);
  CHECK(source->sends_assignment(j));
  REQUIRE(j.witness_fits);

  const std::size_t n = j.domain->size();
  std::vector<fr> a(n), b, c;
  const synthesis_outcome s = source->synthesize(j, 1, a, b, c, 0, true);
  REQUIRE(s.matrices);
  CHECK(s.assignment_size == w.size());
  CHECK(std::equal(w.begin(), w.end(), a.begin()));
  CHECK(s.output.public_inputs.size() == j.zkey->num_public);
  CHECK(source->synthesized(j, s) == synthesis_path::witness);
  partition_inputs inputs;
  const quotient_task task = source->quotient(j, 1, std::span<const fr>(a.data(), w.size()), inputs, s);
  CHECK(task.form == coprove::field::quotient_form::odd_coset_evaluations);

  // On a host SpMV a lean set is not enough: b and c are asked for, nothing written.
  parts.config.backend_spmv = false;
  std::vector<fr> untouched(n);
  CHECK(source->synthesize(j, 0, untouched, b, c, 0, true).needs_abc);
  CHECK(std::all_of(untouched.begin(), untouched.end(), [](const fr& v) { return v == fr::zero(); }));

  prove_request wrong = request;
  wrong.witnesses = std::make_shared<const std::vector<std::vector<fr>>>(std::vector<std::vector<fr>>{std::vector<fr>(3, fr::one())});
  CHECK_THROWS_WITH(source->prepare(wrong), Catch::Contains("witness 0 has 3 values"));
}
