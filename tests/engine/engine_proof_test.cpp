// The engine's result is a Groth16 proof: every partition's proof verifies with the circuit's
// verifying key against the public inputs of that partition's circuit (recomputed here from the
// request), on the slow path, the PCE path with the SpMV on the backend and with it on the host;
// the deterministic mode gives the same proof on every path; a request without a key, a key that
// does not fit its circuit and a plan without room for the key are refused with the numbers; a
// proof that cannot be made fails its job and gives everything back. The host backend's proof
// stage (the five MSMs in its worker slots) gives groth16's sums. A backend that leaves the copies
// of a key's points to the engine gets the first count its devices hold, and the reason.
#include <coprove/engine/engine.hpp>

#include <coprove/engine/host_backend.hpp>
#include <coprove/field/quotient.hpp>
#include <coprove/groth16/proof.hpp>
#include <coprove/groth16/prover.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/r1cs/pce.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/synthesis.hpp>
#include <support/test_keys.hpp>

#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include "engine_test_support.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace {

namespace groth16 = coprove::groth16;
namespace r1cs = coprove::r1cs;
namespace test = coprove::test;
using namespace coprove::engine;
using coprove::field::fr;

engine_config proving_config(std::vector<std::pair<std::string, unsigned>> circuits = {{"mimc", 10}}) {
  engine_config cfg;
  cfg.max_log_constraints = 11;
  cfg.synthesis_threads = 2;
  cfg.memory_budget_bytes = std::size_t{1} << 30;
  cfg.keys = test::test_keys(circuits);
  return cfg;
}

std::unique_ptr<compute_backend> host(std::size_t slots = 2) { return make_host_backend(1, slots); }

// The public inputs partition p of the request proves, from its circuit alone.
std::vector<fr> expected_inputs(const prove_request& r, std::size_t p) {
  const auto c = r1cs::make_circuit(r.circuit, r.log_constraints, r.seed, p);
  return r1cs::public_inputs_of(c->shape(), r1cs::synthesize_witness(*c));
}

void require_proofs(const prove_result& result, const prove_request& r) {
  const auto pvk = groth16::prepared_verifying_key::from(test::test_key(r.circuit, r.log_constraints)->vk);
  REQUIRE(result.kind == result_kind::proof);
  REQUIRE(result.vk_sha256.size() == 64);
  REQUIRE(result.partitions.size() == r.partitions);
  for (const auto& p : result.partitions) {
    INFO("partition " << p.index);
    REQUIRE(p.proof);
    CHECK(p.verified);
    CHECK(p.public_inputs == expected_inputs(r, p.index));
    CHECK(groth16::verify(pvk, *p.proof, expected_inputs(r, p.index)).accepted);
    CHECK(p.timings.prove_ns > 0);
    // A proof is bound to its partition: another partition's inputs do not verify with it.
    CHECK_FALSE(groth16::verify(pvk, *p.proof, expected_inputs(r, p.index + 1)).accepted);
  }
}

TEST_CASE("every partition's result is a Groth16 proof that verifies with the circuit's key", "[engine][proof]") {
  test::running_io io;
  engine e(io.io.get_executor(), proving_config(), host());
  const prove_request r = test::mimc_request(5, 10, 11);
  auto [ec, result] = test::prove(e, r);
  REQUIRE_FALSE(ec);
  require_proofs(result, r);
  // One partition recorded the PCE on the slow path, the others sent only the assignment.
  CHECK(std::count_if(result.partitions.begin(), result.partitions.end(),
                      [](const partition_result& p) { return !p.spmv_on_backend; }) == 1);
  test::require_at_baseline(e);

  const auto json = result.to_json();
  CHECK(json.at("result_kind").as_string() == "proof");
  CHECK(json.at("vk_sha256").as_string() == result.vk_sha256);
  const auto& first = json.at("partitions").as_array().at(0).as_object();
  CHECK(groth16::decode_proof_hex(first.at("proof").as_string()) == *result.partitions[0].proof);
  CHECK(groth16::public_inputs_from_snarkjs_json(first.at("public_inputs")) == result.partitions[0].public_inputs);
  CHECK_FALSE(first.contains("record"));
}

TEST_CASE("the bits circuit's partitions, every witness value a bit, are proofs that verify", "[engine][proof]") {
  test::running_io io;
  engine e(io.io.get_executor(), proving_config({{"bits", 10}}), host());
  prove_request r = test::mimc_request(3, 10, 17);
  r.circuit = "bits";
  const auto c = r1cs::make_circuit("bits", 10, 17, 0);
  const std::vector<fr> w = r1cs::synthesize_witness(*c);
  CHECK(std::all_of(w.begin() + 2, w.end(), [](const fr& x) { return x.is_zero() || x == fr::one(); }));
  auto [ec, result] = test::prove(e, r);
  REQUIRE_FALSE(ec);
  require_proofs(result, r);
  test::require_at_baseline(e);
}

TEST_CASE("the deterministic mode makes the same proof on the slow, PCE and host-SpMV paths", "[engine][proof]") {
  const prove_request r = test::mimc_request(3, 10, 5);
  auto run = [&](bool backend_spmv, std::optional<std::uint64_t> seed) {
    test::running_io io;
    engine_config cfg = proving_config();
    cfg.backend_spmv = backend_spmv;
    cfg.insecure_proof_seed = seed;
    engine e(io.io.get_executor(), cfg, host());
    auto [ec, result] = test::prove(e, r);
    REQUIRE_FALSE(ec);
    require_proofs(result, r);
    test::require_at_baseline(e);
    return result;
  };
  const prove_result spmv_on_backend = run(true, 42);
  const prove_result spmv_on_host = run(false, 42);
  const prove_result other_seed = run(true, 43);
  const prove_result random = run(true, std::nullopt);
  for (std::size_t p = 0; p < r.partitions; ++p) {
    INFO("partition " << p);
    CHECK(*spmv_on_backend.partitions[p].proof == *spmv_on_host.partitions[p].proof);
    CHECK(*spmv_on_backend.partitions[p].proof != *other_seed.partitions[p].proof);
    CHECK(*spmv_on_backend.partitions[p].proof != *random.partitions[p].proof);
  }
  // One partition took the slow path in each run and the others the PCE, with the SpMV on the
  // backend in the first run and on the host in the second: the same proofs on all three paths.
  auto deferred = [](const prove_result& r) {
    return std::count_if(r.partitions.begin(), r.partitions.end(),
                         [](const partition_result& p) { return p.spmv_on_backend; });
  };
  CHECK(deferred(spmv_on_backend) == 2);
  CHECK(deferred(spmv_on_host) == 0);
}

TEST_CASE("a request without a proving key is refused at submission, naming the keys there are", "[engine][proof]") {
  test::running_io io;
  engine e(io.io.get_executor(), proving_config({{"mimc", 10}, {"merkle", 10}}), host());
  try {
    e.submit(test::mimc_request(1, 11, 1));
    FAIL("submitted");
  } catch (const std::invalid_argument& error) {
    const std::string what = error.what();
    CHECK(what.find("no proving key for mimc/11") != std::string::npos);
    CHECK(what.find("mimc/10") != std::string::npos);
    CHECK(what.find("merkle/10") != std::string::npos);
  }
  test::require_at_baseline(e);
}

TEST_CASE("the engine refuses keys that do not fit, and a proving engine without keys", "[engine][proof]") {
  test::running_io io;
  auto refused = [&](engine_config cfg, const std::string& expected) {
    try {
      engine e(io.io.get_executor(), std::move(cfg), host());
      FAIL("constructed");
    } catch (const std::invalid_argument& error) {
      CHECK(std::string(error.what()).find(expected) != std::string::npos);
    }
  };
  engine_config none = proving_config();
  none.keys.clear();
  refused(none, "results = proof needs the proving key");

  engine_config wrong_size = proving_config();
  wrong_size.keys[0].log_constraints = 11;  // a 2^10 key named as the 2^11 circuit's
  refused(wrong_size, "the key is for a domain of 1024 rows");

  engine_config other_circuit = proving_config();
  other_circuit.keys = {{"merkle", 10, test::test_key("mimc", 10), "mislabelled"}};
  refused(other_circuit, "mislabelled");

  engine_config twice = proving_config();
  twice.keys.push_back(twice.keys[0]);
  refused(twice, "given twice");

  engine_config records = proving_config();
  records.results = result_kind::evaluation_record;
  refused(records, "results = evaluation_record makes no proofs");
}

TEST_CASE("the memory plan charges the proving keys and the proofs' working sets", "[engine][proof]") {
  test::running_io io;
  engine_config cfg = proving_config();
  engine e(io.io.get_executor(), cfg, host());
  CHECK(e.plan().key_bytes == test::test_key("mimc", 10)->bytes());
  CHECK(e.plan().proving_working_set_bytes > 0);
  CHECK(e.plan().proving_bytes == e.plan().proving_working_set_bytes * e.plan().pinned_slots);
  CHECK(e.plan().describe().find("proving keys") != std::string::npos);

  // A budget that holds everything but the key: refused, naming the key's bytes.
  engine_config tight = proving_config();
  // A configured depth: a measured one would take a smaller depth that fits.
  tight.depth_per_device = e.plan().pinned_slots;
  tight.memory_budget_bytes = e.plan().total_bytes - e.plan().key_bytes / 2;
  try {
    engine refused(io.io.get_executor(), tight, host());
    FAIL("constructed");
  } catch (const memory_plan_error& error) {
    CHECK(std::string(error.what()).find("proving keys " + std::to_string(e.plan().key_bytes)) != std::string::npos);
  }
}

namespace {

// The host backend behind a device of its own memory that leaves the copies of a key's points to
// the engine (as the CUDA backend's msm_copies auto does): its slots' working set is 5 GiB from
// `big_from` copies up and 64 MiB below.
class device_memory_backend final : public compute_backend {
 public:
  device_memory_backend(std::size_t total, std::size_t big_from) : inner_(1, 2), total_(total), big_from_(big_from) {}
  std::string_view name() const noexcept override { return "device-memory"; }
  std::size_t device_count() const noexcept override { return 1; }
  std::size_t worker_slots_per_device() const noexcept override { return inner_.worker_slots_per_device(); }
  std::vector<std::string> device_names() const override { return {"fake device"}; }
  std::unique_ptr<coprove::pinned::host_allocator> make_host_allocator() const override {
    return inner_.make_host_allocator();
  }
  bool copies_to_device() const noexcept override { return true; }
  void start_quotient(worker_slot worker, quotient_task task, quotient_completion done) noexcept override {
    inner_.start_quotient(worker, std::move(task), std::move(done));
  }
  std::size_t device_key_copies() const noexcept override { return copies_; }
  std::vector<std::size_t> device_key_copies_wanted() const override { return {13, 12}; }
  void settle_device_key_copies(std::size_t copies) override {
    settled.push_back(copies);
    copies_ = copies;
  }
  std::optional<device_memory> device_memory_of(std::size_t) const override { return device_memory{total_, total_}; }
  std::size_t device_working_bytes(std::size_t, std::size_t, std::size_t copies) const noexcept override {
    return copies >= big_from_ ? std::size_t{5} << 30 : std::size_t{64} << 20;
  }

  std::vector<std::size_t> settled;

 private:
  host_backend inner_;
  std::size_t total_, big_from_;
  std::size_t copies_ = 1;
};

}  // namespace

TEST_CASE("msm_copies auto: the engine settles the first count its devices hold and says why", "[engine][proof]") {
  test::running_io io;
  constexpr std::size_t gib = std::size_t{1} << 30;
  // 13 copies' slots do not fit 8 GiB; 12 copies' do: the engine settles 12, once, before any key.
  {
    auto backend = std::make_unique<device_memory_backend>(8 * gib, 13);
    auto* b = backend.get();
    engine e(io.io.get_executor(), proving_config(), std::move(backend));
    CHECK(b->settled == std::vector<std::size_t>{12});
    const auto keys = e.report_json().at("device_keys").as_object();
    CHECK(keys.at("copies").to_number<std::size_t>() == 12);
    CHECK(keys.at("source").as_string() == "auto");
    const std::string reason(keys.at("reason").as_string());
    CHECK(reason.find("13 copies of each key's points do not fit device 0 (fake device)") == 0);
    CHECK(reason.find("12 copies of each key's points fit") != std::string::npos);
    // Proofs go on as before.
    const prove_request r = test::mimc_request(2, 10, 5);
    auto [ec, result] = test::prove(e, r);
    REQUIRE_FALSE(ec);
    require_proofs(result, r);
  }
  // Neither fits: one copy, each count passed over named.
  {
    auto backend = std::make_unique<device_memory_backend>(8 * gib, 12);
    auto* b = backend.get();
    engine e(io.io.get_executor(), proving_config(), std::move(backend));
    CHECK(b->settled == std::vector<std::size_t>{1});
    const std::string reason(e.report_json().at("device_keys").at("reason").as_string());
    CHECK(reason.find("12 copies of each key's points do not fit device 0 (fake device)") != std::string::npos);
    CHECK(reason.find("the keys stay in one copy (msm_copies 13 to insist") != std::string::npos);
  }
}

TEST_CASE("a proof that cannot be made fails its job and gives everything back", "[engine][proof]") {
  test::running_io io;
  // The synthesizer fills a, b and c with a row that is not satisfied: the quotient's last
  // coefficient is not zero and the prover refuses (an invalid proof is never returned).
  engine_config cfg = proving_config();
  cfg.synthesizer_name = "unsatisfied rows";
  cfg.synthesizer = [](const prove_request& r, std::size_t p, std::span<fr> a, std::span<fr> b, std::span<fr> c) {
    const auto circ = r1cs::make_circuit(r.circuit, r.log_constraints, r.seed, p);
    r1cs::deferred_synthesis d;
    d.output = r1cs::synthesize_slow(*circ, a, b, c);
    c[0] += fr::one();
    return d;
  };
  engine e(io.io.get_executor(), cfg, host());
  const auto id = e.submit(test::mimc_request(2, 10, 1));
  auto [ec, partial] = e.async_await(id, boost::asio::use_future).get();
  CHECK(ec == make_error_code(engine_errc::verification_failed));  // the evaluation record catches it first
  test::require_at_baseline(e);

  // Rows that hold but no assignment to prove with: the job fails saying so.
  engine_config no_assignment = proving_config();
  no_assignment.synthesizer_name = "a, b, c only";
  no_assignment.synthesizer = [](const prove_request& r, std::size_t p, std::span<fr> a, std::span<fr> b,
                                 std::span<fr> c) {
    const auto circ = r1cs::make_circuit(r.circuit, r.log_constraints, r.seed, p);
    r1cs::deferred_synthesis d;
    d.output = r1cs::synthesize_slow(*circ, a, b, c);
    return d;
  };
  engine e2(io.io.get_executor(), no_assignment, host());
  const auto id2 = e2.submit(test::mimc_request(2, 10, 1));
  auto [ec2, partial2] = e2.async_await(id2, boost::asio::use_future).get();
  CHECK(ec2 == make_error_code(engine_errc::proving_failed));
  const auto st = e2.status(id2);
  REQUIRE(st);
  CHECK(st->error.find("without the assignment") != std::string::npos);
  test::require_at_baseline(e2);
}

}  // namespace

TEST_CASE("the proof's MSMs on the host backend give groth16's sums, from the assignment or from a, b and c",
          "[prover][backend][proof][cpu]") {
  const auto key = test::test_key("mimc", 10);
  host_backend backend(1, 2);
  r1cs::pce_cache cache;
  const std::size_t n = 1024;
  std::vector<fr> a(n), b(n), c(n), h(n);
  cache.synthesize(*r1cs::make_circuit("mimc", 10, 1, 0), a, b, c);  // records the PCE
  const r1cs::deferred_synthesis d = cache.synthesize_deferred(*r1cs::make_circuit("mimc", 10, 1, 1), a, b, c);
  REQUIRE(d.matrices);
  const coprove::field::evaluation_domain domain(n);
  const std::vector<fr> w(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(d.assignment_size));
  std::vector<fr> ea(n), eb(n), ec(n);
  d.matrices->evaluate(w, ea, eb, ec);
  coprove::field::compute_quotient(ea, eb, ec, h, domain);
  const fr r = fr::from_uint64(11), s = fr::from_uint64(13);
  const groth16::proof expected = groth16::prove_with_blinding(*key, w, h, r, s);
  const auto pvk = groth16::prepared_verifying_key::from(key->vk);
  REQUIRE(groth16::verify(pvk, expected, r1cs::public_inputs_of(r1cs::make_circuit("mimc", 10, 1, 1)->shape(), w)));

  auto from_w = quotient_task::from_assignment(w, d.matrices, domain);
  from_w.prove_with(key, w);
  auto from_abc = quotient_task::from_evaluations(ea, eb, ec, domain);
  from_abc.prove_with(key, w);
  for (const quotient_task* task : {&from_w, &from_abc}) {
    auto [error, result] = backend.async_quotient(worker_slot{0, 1}, *task, boost::asio::use_future).get();
    REQUIRE_FALSE(error);
    REQUIRE(result.sums);
    CHECK_FALSE(result.h_copied);
    CHECK(result.timings.msm_ns > 0);
    CHECK(groth16::assemble_proof_with_blinding(*key, *result.sums, r, s) == expected);
  }

  SECTION("tasks whose key does not fit are refused") {
    auto short_witness = quotient_task::from_evaluations(ea, eb, ec, domain);
    short_witness.prove_with(key, std::span<const fr>(w).first(w.size() - 1));
    auto other_form = quotient_task::from_evaluations(ea, eb, {}, domain);
    other_form.in_odd_coset_form().prove_with(key, w);
    auto no_key = quotient_task::from_evaluations(ea, eb, ec, domain);
    no_key.prove_with(nullptr, w);
    const auto other_size = test::test_key("mimc", 11);
    auto wrong_domain = quotient_task::from_evaluations(ea, eb, ec, domain);
    wrong_domain.prove_with(other_size, w);
    for (const quotient_task* task : {&short_witness, &other_form, &no_key, &wrong_domain}) {
      CHECK_THROWS_AS(check_quotient_task("host", *task), std::invalid_argument);
      auto [error, result] = backend.async_quotient(worker_slot{0, 0}, *task, boost::asio::use_future).get();
      CHECK(error == std::errc::invalid_argument);
      CHECK_FALSE(result.take_sums());
    }
  }
}
