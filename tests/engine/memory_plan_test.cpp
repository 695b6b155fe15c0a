// Tests of the memory plan: the arithmetic, the refusal and its message, the auto budget.
#include <coprove/engine/memory_plan.hpp>
#include <coprove/groth16/keys.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/pce.hpp>
#include <coprove/r1cs/synthesis.hpp>

#include <catch2/catch.hpp>

#include <limits>
#include <stdexcept>
#include <string>

using namespace coprove::field;
using namespace coprove::r1cs;
using namespace coprove::engine;

namespace {

constexpr std::size_t mib = std::size_t{1} << 20;
constexpr std::size_t gib = std::size_t{1} << 30;

memory_plan_input sample_input() {
  memory_plan_input in;
  in.budget_bytes = 8 * gib;
  in.pinned_slots = 4;
  in.domain_size = std::size_t{1} << 20;
  in.synthesis_concurrency = 2;
  in.pce_bytes = 100 * mib;
  in.synthesis_working_set_bytes = 40 * mib;
  in.margin_bytes = 256 * mib;
  return in;
}

}  // namespace

TEST_CASE("the memory plan charges each component once", "[prover][memory_plan][cpu]") {
  const memory_plan plan = plan_memory(sample_input());
  const std::size_t vector = (std::size_t{1} << 20) * 32;  // 32 MiB
  CHECK(plan.vector_bytes == vector);
  CHECK(plan.pinned_input_bytes == 4 * 3 * vector);
  CHECK(plan.pinned_output_bytes == 4 * vector);
  CHECK(plan.pinned_pool_bytes == 16 * vector);
  CHECK(plan.pce_bytes == 100 * mib);
  CHECK(plan.synthesis_bytes == 80 * mib);
  CHECK(plan.margin_bytes == 256 * mib);
  CHECK(plan.total_bytes == 512 * mib + 100 * mib + 80 * mib + 256 * mib);
  CHECK(plan.headroom_bytes == 8 * gib - plan.total_bytes);
  CHECK(plan.fits());
  CHECK_FALSE(plan.budget_from_available_memory);

  const std::string table = plan.describe();
  CHECK(table.find("pinned pool") != std::string::npos);
  CHECK(table.find("PCE cache") != std::string::npos);
  CHECK(table.find("synthesis working sets") != std::string::npos);
  CHECK(table.find("512.0 MiB") != std::string::npos);
  CHECK(table.find("4 x 3 x 1048576 x 32") != std::string::npos);

  const boost::json::object json = plan.to_json();
  CHECK(json.at("pinned_pool_bytes").to_number<std::size_t>() == plan.pinned_pool_bytes);
  CHECK(json.at("total_bytes").to_number<std::size_t>() == plan.total_bytes);
  CHECK(json.at("budget_from_available_memory").as_bool() == false);
}

TEST_CASE("with the SpMV on the backend a slot holds one input vector and the slow path two more",
          "[prover][memory_plan][cpu]") {
  memory_plan_input in = sample_input();
  in.input_vectors_per_slot = 1;
  in.full_input_slots = 2;
  const memory_plan plan = plan_memory(in);
  const std::size_t vector = (std::size_t{1} << 20) * 32;
  CHECK(plan.pinned_input_bytes == (4 * 1 + 2 * 2) * vector);
  CHECK(plan.pinned_pool_bytes == (4 * 1 + 2 * 2 + 4) * vector);
  CHECK(plan.pinned_pool_bytes < plan_memory(sample_input()).pinned_pool_bytes);
  CHECK(plan.describe().find("assignments") != std::string::npos);
  in.backend_bytes = 3 * vector;  // a backend's own a, b, c, charged once
  CHECK(plan_memory(in).total_bytes == plan.total_bytes + 3 * vector);
  in.backend_bytes = 0;
  CHECK(plan.to_json().at("input_vectors_per_slot").to_number<std::size_t>() == 1);
  in.full_input_slots = 9;  // never more than the slots
  CHECK(plan_memory(in).full_input_slots == 4);
  in.full_input_slots = 0;
  CHECK_THROWS_AS(plan_memory(in), std::invalid_argument);
  in.input_vectors_per_slot = 2;
  CHECK_THROWS_AS(plan_memory(in), std::invalid_argument);
  in.input_vectors_per_slot = 3;
  in.full_input_slots = 1;
  CHECK_THROWS_AS(plan_memory(in), std::invalid_argument);
}

TEST_CASE("a plan that does not fit is refused with its numbers", "[prover][memory_plan][cpu]") {
  memory_plan_input in = sample_input();
  in.budget_bytes = 900 * mib;  // needs 948 MiB
  try {
    (void)plan_memory(in);
    FAIL("an oversized plan was accepted");
  } catch (const memory_plan_error& e) {
    const std::string message = e.what();
    CHECK(message.find(std::to_string(948 * mib)) != std::string::npos);
    CHECK(message.find(std::to_string(900 * mib)) != std::string::npos);
    CHECK(message.find("pinned pool " + std::to_string(512 * mib)) != std::string::npos);
    CHECK(message.find("PCE " + std::to_string(100 * mib)) != std::string::npos);
    CHECK(message.find("4 slots") != std::string::npos);
    CHECK(e.plan().total_bytes == 948 * mib);
    CHECK_FALSE(e.plan().fits());
  }
  in.budget_bytes = 948 * mib;  // exactly enough
  CHECK(plan_memory(in).headroom_bytes == 0);
}

TEST_CASE("without a budget the plan uses the available memory", "[prover][memory_plan][cpu]") {
  memory_plan_input in = sample_input();
  in.budget_bytes = 0;
  const memory_plan plan = plan_memory(in, 16 * gib);
  CHECK(plan.budget_from_available_memory);
  CHECK(plan.budget_bytes == 16 * gib);
  CHECK(plan.describe().find("MemAvailable") != std::string::npos);
  CHECK_THROWS_AS(plan_memory(in, std::nullopt), memory_plan_error);
  CHECK_THROWS_AS(plan_memory(in, 512 * mib), memory_plan_error);
  // This machine reports its available memory.
  REQUIRE(available_memory_bytes().has_value());
  CHECK(*available_memory_bytes() > 0);
}

TEST_CASE("bad memory plan inputs are rejected", "[prover][memory_plan][cpu]") {
  memory_plan_input in = sample_input();
  in.pinned_slots = 0;
  CHECK_THROWS_AS(plan_memory(in), std::invalid_argument);
  in = sample_input();
  in.domain_size = 1000;
  CHECK_THROWS_AS(plan_memory(in), std::invalid_argument);
  in = sample_input();
  in.synthesis_concurrency = 0;
  CHECK_THROWS_AS(plan_memory(in), std::invalid_argument);
  in = sample_input();
  in.synthesis_working_set_bytes = std::numeric_limits<std::size_t>::max() / 2 + 1;
  CHECK_THROWS_AS(plan_memory(in), memory_plan_error);
}

TEST_CASE("a plan input from a circuit uses its PCE and working-set estimates",
          "[prover][memory_plan][cpu]") {
  const auto c = make_circuit("mimc", 16, 1, 0);
  const memory_plan_input in = memory_plan_input_for(*c, 3, 2, 4 * gib);
  CHECK(in.domain_size == 65536);
  CHECK(in.pinned_slots == 3);
  CHECK(in.synthesis_concurrency == 2);
  CHECK(in.pce_bytes == estimate_pce_bytes(c->shape()));
  CHECK(in.synthesis_working_set_bytes == estimate_synthesis_working_set(c->shape()));
  const memory_plan plan = plan_memory(in);
  CHECK(plan.pinned_pool_bytes == 3 * 4 * 65536 * 32);
}

TEST_CASE("the device memory plan charges keys, matrices, slots and margin, and refuses naming them",
          "[prover][memory_plan][cpu]") {
  coprove::groth16::proving_key key;
  key.a.resize(10);
  key.b_g1.resize(10);
  key.b_g2.resize(10);
  key.l.resize(7);
  key.h.resize(15);
  CHECK(device_key_bytes(key) == (10 + 10 + 7 + 15) * 96 + 10 * 192);
  CHECK(device_key_bytes(3, 7, 16) == device_key_bytes(key));  // the same shape before the key exists

  device_memory_plan_input in;
  in.device = 1;
  in.device_name = "NVIDIA H200";
  in.total_bytes = std::size_t{10} << 30;
  in.key_bytes = std::size_t{3} << 30;
  in.circuits = "mimc/24";
  in.matrices_bytes = std::size_t{1} << 30;
  in.slots = 3;
  in.slot_bytes = std::size_t{1} << 30;
  in.margin_bytes = std::size_t{1} << 30;
  in.in_use_bytes = std::size_t{1} << 29;  // the context, before the backend allocates
  in.shared_bytes = std::size_t{1} << 29;  // the slots' NTT tables, once
  const device_memory_plan plan = plan_device_memory(in);
  CHECK(plan.slots_bytes == std::size_t{3} << 30);
  CHECK(plan.total_bytes == (std::size_t{18} << 29));
  CHECK(plan.fits());
  CHECK(plan.describe().find("NVIDIA H200") != std::string::npos);
  CHECK(plan.describe().find("in use at start 512.0 MiB") != std::string::npos);
  CHECK(plan.to_json().at("total_bytes").as_uint64() == std::uint64_t{18} << 29);
  CHECK(plan.to_json().at("shared_bytes").as_uint64() == std::uint64_t{1} << 29);
  CHECK(plan.describe().find("shared 512.0 MiB") != std::string::npos);
  CHECK(plan.to_json().at("in_use_bytes").as_uint64() == std::uint64_t{1} << 29);
  // What was in use at start is what a plan that fits without it lacks.
  in.in_use_bytes = std::size_t{3} << 29;  // exactly the device's 10 GiB with the rest
  CHECK(size_device_memory(in).fits());
  in.in_use_bytes = (std::size_t{3} << 29) + 1;
  CHECK_FALSE(size_device_memory(in).fits());
  in.in_use_bytes = std::size_t{1} << 29;

  in.slots = 6;
  try {
    plan_device_memory(in);
    FAIL("a plan over the device's memory was accepted");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find("device 1 (NVIDIA H200)") != std::string::npos);
    CHECK(what.find("mimc/24") != std::string::npos);
    CHECK(what.find(std::to_string(std::size_t{3} << 30)) != std::string::npos);
    CHECK(what.find(std::to_string(std::size_t{24} << 29)) != std::string::npos);
    CHECK(what.find(std::to_string(std::size_t{1} << 29) + " shared by the slots") != std::string::npos);
    CHECK(what.find(std::to_string(std::size_t{1} << 29) + " of them in use") != std::string::npos);
  }
  in.slots = 2;
  in.slot_bytes = ~std::size_t{0};
  CHECK_THROWS_WITH(plan_device_memory(in), Catch::Contains("more than can be counted"));
}

TEST_CASE("msm_copies auto: the first count every device's plan holds, else one, naming the devices",
          "[prover][memory_plan][cpu]") {
  // Two H200-sized devices, a 2^22-sized key of about 2.4 GiB, three slots of 4 GiB each (the
  // slots' bytes do not depend on the copies here).
  device_memory_plan_input in;
  in.device_name = "NVIDIA H200";
  in.total_bytes = std::size_t{141} << 30;
  in.circuits = "mimc/22";
  in.slots = 3;
  in.slot_bytes = std::size_t{4} << 30;
  const std::size_t key = (std::size_t{24} << 30) / 10;
  std::size_t second_total = in.total_bytes;
  std::size_t second_slot = in.slot_bytes;
  std::vector<std::size_t> asked;
  const auto inputs = [&](std::size_t copies) {
    asked.push_back(copies);
    device_memory_plan_input first = in;
    first.key_bytes = key * copies;
    device_memory_plan_input second = first;
    second.device = 1;
    second.total_bytes = second_total;
    second.slot_bytes = second_slot;
    return std::vector<device_memory_plan_input>{first, second};
  };
  const std::vector<std::size_t> wanted{13, 12};

  const device_key_copies_choice fits = choose_device_key_copies(inputs, wanted);
  CHECK(fits.copies == 13);
  CHECK(fits.source == "auto");
  CHECK(fits.reason.find("13 copies of each key's points fit") == 0);
  CHECK(fits.reason.find("device 1 (NVIDIA H200)") != std::string::npos);
  CHECK(fits.to_json().at("copies").as_uint64() == 13);
  CHECK(asked == std::vector<std::size_t>{13});  // the first that fits ends the search

  // A second device that holds 12 copies, its slots and the margin (41.8 GiB) but not 13 (44.2 GiB): 12, and
  // the reason says why not 13, with that device's figures.
  second_total = std::size_t{42} << 30;
  asked.clear();
  const device_key_copies_choice twelve = choose_device_key_copies(inputs, wanted);
  CHECK(twelve.copies == 12);
  CHECK(asked == std::vector<std::size_t>{13, 12});
  CHECK(twelve.reason.find("13 copies of each key's points do not fit device 1 (NVIDIA H200)") == 0);
  CHECK(twelve.reason.find(size_device_memory(inputs(13)[1]).describe()) != std::string::npos);
  CHECK(twelve.reason.find("12 copies of each key's points fit") != std::string::npos);

  // Neither (40 GiB): one copy, each count passed over named with its figures.
  second_total = std::size_t{40} << 30;
  const device_key_copies_choice one = choose_device_key_copies(inputs, wanted);
  CHECK(one.copies == 1);
  CHECK(one.reason.find("13 copies of each key's points do not fit device 1 (NVIDIA H200)") == 0);
  CHECK(one.reason.find("12 copies of each key's points do not fit device 1 (NVIDIA H200): " +
                        size_device_memory(inputs(12)[1]).describe()) != std::string::npos);
  CHECK(one.reason.find("msm_copies 13 to insist") != std::string::npos);
  CHECK_FALSE(size_device_memory(inputs(12)[1]).fits());

  // Numbers past counting fit nowhere, and size_device_memory says so without throwing.
  second_total = in.total_bytes;
  second_slot = ~std::size_t{0};
  CHECK(size_device_memory(inputs(13)[1]).overflow);
  CHECK_FALSE(size_device_memory(inputs(13)[1]).fits());
  const device_key_copies_choice overflow = choose_device_key_copies(inputs, wanted);
  CHECK(overflow.copies == 1);
  CHECK(overflow.reason.find("more than can be counted") != std::string::npos);
  // A backend that wants no copies, or no device with memory of its own.
  CHECK(choose_device_key_copies(inputs, {}).copies == 1);
  CHECK(choose_device_key_copies(inputs, {1}).copies == 1);
  CHECK(choose_device_key_copies([](std::size_t) { return std::vector<device_memory_plan_input>{}; }, wanted).copies ==
        13);
}
