// The memory plan: budget split between the pinned pool, the PCE cache, the synthesis working
// sets and a margin, with overflow-checked arithmetic and a refusal that names the numbers.
#include <coprove/engine/memory_plan.hpp>

#include <coprove/r1cs/circuit.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/r1cs/pce.hpp>
#include <coprove/r1cs/synthesis.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

namespace coprove::engine {
using field::fr;
using r1cs::circuit;
using r1cs::circuit_shape;
using r1cs::estimate_pce_bytes;
using r1cs::estimate_synthesis_working_set;


namespace {

constexpr std::size_t mib = std::size_t{1} << 20;

std::string format_bytes(std::size_t bytes) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f MiB", static_cast<double>(bytes) / mib);
  return buffer;
}

// a * b, or nullopt when it does not fit in size_t.
std::optional<std::size_t> checked_mul(std::size_t a, std::size_t b) {
  std::size_t out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<std::size_t> checked_add(std::size_t a, std::size_t b) {
  std::size_t out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

}  // namespace

memory_plan_error::memory_plan_error(const std::string& message, memory_plan plan)
    : std::runtime_error(message), plan_(plan) {}

memory_plan_input memory_plan_input_for(const circuit& c, std::size_t pinned_slots,
                                        std::size_t synthesis_concurrency,
                                        std::size_t budget_bytes) {
  const circuit_shape shape = c.shape();
  memory_plan_input in;
  in.budget_bytes = budget_bytes;
  in.pinned_slots = pinned_slots;
  in.domain_size = c.domain_size();
  in.synthesis_concurrency = synthesis_concurrency;
  in.pce_bytes = estimate_pce_bytes(shape);
  in.synthesis_working_set_bytes = estimate_synthesis_working_set(shape);
  return in;
}

std::optional<std::size_t> available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t value = 0;
  std::string unit;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemAvailable:") {
      // The value is in kB (kibibytes).
      return checked_mul(value, 1024);
    }
  }
  return std::nullopt;
}

memory_plan plan_memory(const memory_plan_input& input) {
  return plan_memory(input, input.budget_bytes == 0 ? available_memory_bytes() : std::nullopt);
}

memory_plan plan_memory(const memory_plan_input& input, std::optional<std::size_t> available) {
  if (input.pinned_slots == 0) {
    throw std::invalid_argument("memory plan: pinned_slots must be at least 1");
  }
  if (input.domain_size == 0 || (input.domain_size & (input.domain_size - 1)) != 0) {
    throw std::invalid_argument("memory plan: domain_size " + std::to_string(input.domain_size) +
                                " is not a power of two");
  }
  if (input.synthesis_concurrency == 0) {
    throw std::invalid_argument("memory plan: synthesis_concurrency must be at least 1");
  }
  if (input.input_vectors_per_slot != 1 && input.input_vectors_per_slot != 3) {
    throw std::invalid_argument("memory plan: input_vectors_per_slot must be 1 (the assignment) or 3 (a, b, c), got " +
                                std::to_string(input.input_vectors_per_slot));
  }
  if (input.input_vectors_per_slot == 1 && input.full_input_slots == 0) {
    throw std::invalid_argument("memory plan: with one input vector a slot, full_input_slots must be at least 1 "
                                "(the partition that records a circuit's PCE holds a, b and c)");
  }
  if (input.input_vectors_per_slot == 3 && input.full_input_slots != 0) {
    throw std::invalid_argument("memory plan: full_input_slots applies only with one input vector a slot");
  }

  memory_plan plan;
  plan.pinned_slots = input.pinned_slots;
  plan.domain_size = input.domain_size;
  plan.pce_bytes = input.pce_bytes;
  plan.synthesis_concurrency = input.synthesis_concurrency;
  plan.synthesis_working_set_bytes = input.synthesis_working_set_bytes;
  plan.margin_bytes = input.margin_bytes;
  plan.backend_bytes = input.backend_bytes;
  plan.key_bytes = input.key_bytes;
  plan.proving_working_set_bytes = input.proving_working_set_bytes;
  plan.input_vectors_per_slot = input.input_vectors_per_slot;
  plan.full_input_slots = std::min(input.full_input_slots, input.pinned_slots);
  if (input.budget_bytes != 0) {
    plan.budget_bytes = input.budget_bytes;
  } else {
    plan.budget_from_available_memory = true;
    if (!available) {
      throw memory_plan_error(
          "memory plan: no budget given and MemAvailable could not be read from /proc/meminfo; "
          "set the memory budget explicitly",
          plan);
    }
    plan.budget_bytes = *available;
  }

  auto overflow = [&](const char* what) {
    return memory_plan_error(std::string("memory plan: ") + what + " overflows (slots " +
                                 std::to_string(input.pinned_slots) + ", n " +
                                 std::to_string(input.domain_size) + ", concurrency " +
                                 std::to_string(input.synthesis_concurrency) + ")",
                             plan);
  };
  const auto vector_bytes = checked_mul(input.domain_size, sizeof(fr));
  if (!vector_bytes) throw overflow("the vector size");
  plan.vector_bytes = *vector_bytes;
  const auto per_slot = checked_mul(plan.vector_bytes, plan.input_vectors_per_slot);
  const auto slot_inputs = per_slot ? checked_mul(*per_slot, input.pinned_slots) : std::nullopt;
  const auto full_extra = checked_mul(plan.vector_bytes, 2 * plan.full_input_slots);
  const auto inputs = slot_inputs && full_extra ? checked_add(*slot_inputs, *full_extra) : std::nullopt;
  const auto outputs = checked_mul(plan.vector_bytes, input.pinned_slots);
  if (!inputs || !outputs) throw overflow("the pinned pool");
  plan.pinned_input_bytes = *inputs;
  plan.pinned_output_bytes = *outputs;
  const auto pool = checked_add(*inputs, *outputs);
  if (!pool) throw overflow("the pinned pool");
  plan.pinned_pool_bytes = *pool;
  const auto synthesis = checked_mul(input.synthesis_working_set_bytes, input.synthesis_concurrency);
  if (!synthesis) throw overflow("the synthesis working set");
  plan.synthesis_bytes = *synthesis;
  const auto proving = checked_mul(input.proving_working_set_bytes, input.pinned_slots);
  if (!proving) throw overflow("the proving working set");
  plan.proving_bytes = *proving;
  std::optional<std::size_t> total = checked_add(plan.pinned_pool_bytes, plan.pce_bytes);
  if (total) total = checked_add(*total, plan.synthesis_bytes);
  if (total) total = checked_add(*total, plan.backend_bytes);
  if (total) total = checked_add(*total, plan.key_bytes);
  if (total) total = checked_add(*total, plan.proving_bytes);
  if (total) total = checked_add(*total, plan.margin_bytes);
  if (!total) throw overflow("the total");
  plan.total_bytes = *total;
  if (!plan.fits()) {
    plan.headroom_bytes = 0;
    std::ostringstream message;
    message << "memory plan does not fit: needs " << plan.total_bytes << " bytes ("
            << format_bytes(plan.total_bytes) << ") but the budget"
            << (plan.budget_from_available_memory ? " (MemAvailable)" : "") << " is "
            << plan.budget_bytes << " bytes (" << format_bytes(plan.budget_bytes)
            << "): pinned pool " << plan.pinned_pool_bytes << " (" << plan.pinned_slots << " slots x "
            << plan.input_vectors_per_slot + 1 << " x " << plan.domain_size << " x 32"
            << (plan.full_input_slots > 0 ? " + " + std::to_string(plan.full_input_slots) + " x 2 x " +
                                                std::to_string(plan.domain_size) + " x 32"
                                          : std::string())
            << "), PCE " << plan.pce_bytes
            << ", synthesis " << plan.synthesis_bytes << " (" << plan.synthesis_concurrency
            << " x " << plan.synthesis_working_set_bytes << "), backend " << plan.backend_bytes
            << ", proving keys " << plan.key_bytes << ", proving " << plan.proving_bytes << " ("
            << plan.pinned_slots << " x " << plan.proving_working_set_bytes << "), margin " << plan.margin_bytes
            << "; lower the slots, the synthesis concurrency or the circuit size, or raise the "
               "budget";
    throw memory_plan_error(message.str(), plan);
  }
  plan.headroom_bytes = plan.budget_bytes - plan.total_bytes;
  return plan;
}

std::string memory_plan::describe() const {
  std::ostringstream out;
  char line[160];
  auto row = [&](const char* what, std::size_t bytes, const std::string& detail) {
    std::snprintf(line, sizeof line, "  %-26s %14zu B  %12s  %s\n", what, bytes,
                  format_bytes(bytes).c_str(), detail.c_str());
    out << line;
  };
  out << "memory plan (n = " << domain_size << ", " << pinned_slots << " pinned slots, "
      << synthesis_concurrency << " concurrent syntheses)\n";
  if (input_vectors_per_slot == 1) {
    row("pinned inputs", pinned_input_bytes,
        std::to_string(pinned_slots) + " x 1 x " + std::to_string(domain_size) + " x 32 (assignments) + " +
            std::to_string(full_input_slots) + " x 2 x " + std::to_string(domain_size) + " x 32 (slow path b, c)");
  } else {
    row("pinned a/b/c inputs", pinned_input_bytes,
        std::to_string(pinned_slots) + " x 3 x " + std::to_string(domain_size) + " x 32");
  }
  row("pinned outputs (h)", pinned_output_bytes,
      std::to_string(pinned_slots) + " x " + std::to_string(domain_size) + " x 32");
  row("pinned pool", pinned_pool_bytes, "the pool's capacity; charged here only");
  row("PCE cache", pce_bytes, "");
  row("synthesis working sets", synthesis_bytes,
      std::to_string(synthesis_concurrency) + " x " + std::to_string(synthesis_working_set_bytes));
  if (backend_bytes > 0) row("backend working memory", backend_bytes, "the host backend's a, b, c per slot");
  if (key_bytes > 0) row("proving keys", key_bytes, "loaded once, shared by every partition");
  if (proving_bytes > 0)
    row("proving working sets", proving_bytes,
        std::to_string(pinned_slots) + " x " + std::to_string(proving_working_set_bytes) + " (MSM scratch)");
  row("margin", margin_bytes, "");
  row("total", total_bytes, "");
  row("budget", budget_bytes, budget_from_available_memory ? "MemAvailable" : "configured");
  row("headroom", headroom_bytes, "");
  return out.str();
}

boost::json::object memory_plan::to_json() const {
  boost::json::object o;
  o["budget_bytes"] = budget_bytes;
  o["budget_from_available_memory"] = budget_from_available_memory;
  o["pinned_slots"] = pinned_slots;
  o["domain_size"] = domain_size;
  o["vector_bytes"] = vector_bytes;
  o["input_vectors_per_slot"] = input_vectors_per_slot;
  o["full_input_slots"] = full_input_slots;
  o["pinned_input_bytes"] = pinned_input_bytes;
  o["pinned_output_bytes"] = pinned_output_bytes;
  o["pinned_pool_bytes"] = pinned_pool_bytes;
  o["pce_bytes"] = pce_bytes;
  o["synthesis_concurrency"] = synthesis_concurrency;
  o["synthesis_working_set_bytes"] = synthesis_working_set_bytes;
  o["synthesis_bytes"] = synthesis_bytes;
  o["backend_bytes"] = backend_bytes;
  o["key_bytes"] = key_bytes;
  o["proving_working_set_bytes"] = proving_working_set_bytes;
  o["proving_bytes"] = proving_bytes;
  o["margin_bytes"] = margin_bytes;
  o["total_bytes"] = total_bytes;
  o["headroom_bytes"] = headroom_bytes;
  return o;
}

namespace {
constexpr std::size_t device_g1_bytes = 96, device_g2_bytes = 192;  // affine x, y
}  // namespace

std::size_t device_key_bytes(const groth16::proving_key& key) noexcept {
  return (key.a.size() + key.b_g1.size() + key.l.size() + key.h.size()) * device_g1_bytes +
         key.b_g2.size() * device_g2_bytes;
}

std::size_t device_key_bytes(std::size_t num_inputs, std::size_t num_aux, std::size_t domain_size) noexcept {
  const std::size_t variables = num_inputs + num_aux;
  return (2 * variables + num_aux + (domain_size == 0 ? 0 : domain_size - 1)) * device_g1_bytes +
         variables * device_g2_bytes;
}

device_memory_plan size_device_memory(const device_memory_plan_input& input) noexcept {
  device_memory_plan plan;
  plan.input = input;
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  bool overflow = input.slot_bytes != 0 && input.slots > max / input.slot_bytes;
  plan.slots_bytes = overflow ? max : input.slots * input.slot_bytes;
  std::size_t total = 0;
  for (const std::size_t part :
       {input.in_use_bytes, input.key_bytes, input.matrices_bytes, input.shared_bytes, plan.slots_bytes,
        input.margin_bytes}) {
    overflow = overflow || total > max - part;
    total = overflow ? max : total + part;
  }
  plan.total_bytes = total;
  plan.overflow = overflow;
  return plan;
}

device_memory_plan plan_device_memory(const device_memory_plan_input& input) {
  const device_memory_plan plan = size_device_memory(input);
  if (!plan.fits())
    throw std::runtime_error("device memory plan: device " + std::to_string(input.device) + " (" + input.device_name +
                             ") has " + std::to_string(input.total_bytes) + " bytes, " +
                             std::to_string(input.in_use_bytes) + " of them in use before the backend's; the proving keys of " +
                             input.circuits + " need " + std::to_string(input.key_bytes) + ", and with " +
                             std::to_string(input.slots) + " worker slots of " + std::to_string(input.slot_bytes) +
                             " bytes, " + std::to_string(input.matrices_bytes) + " of matrices, " +
                             std::to_string(input.shared_bytes) + " shared by the slots and a margin of " +
                             std::to_string(input.margin_bytes) + " the plan needs " +
                             (plan.overflow ? std::string("more than can be counted") : std::to_string(plan.total_bytes)) +
                             " bytes");
  return plan;
}

std::string device_memory_plan::describe() const {
  return "device " + std::to_string(input.device) + " (" + input.device_name + "): in use at start " +
         format_bytes(input.in_use_bytes) + " + keys " + format_bytes(input.key_bytes) + " + matrices " + format_bytes(input.matrices_bytes) + " + shared " +
         format_bytes(input.shared_bytes) + " + " +
         std::to_string(input.slots) + " slots x " + format_bytes(input.slot_bytes) + " + margin " +
         format_bytes(input.margin_bytes) + " = " + format_bytes(total_bytes) + " of " + format_bytes(input.total_bytes);
}

boost::json::object device_memory_plan::to_json() const {
  return {{"device", input.device},
          {"name", input.device_name},
          {"device_bytes", input.total_bytes},
          {"in_use_bytes", input.in_use_bytes},
          {"key_bytes", input.key_bytes},
          {"matrices_bytes", input.matrices_bytes},
          {"slots", input.slots},
          {"slot_bytes", input.slot_bytes},
          {"shared_bytes", input.shared_bytes},
          {"margin_bytes", input.margin_bytes},
          {"total_bytes", total_bytes}};
}

device_key_copies_choice choose_device_key_copies(
    const std::function<std::vector<device_memory_plan_input>(std::size_t copies)>& inputs,
    const std::vector<std::size_t>& candidates) {
  device_key_copies_choice choice;
  choice.source = "auto";
  choice.copies = 1;
  std::string passed_over;  // the counts that did not fit, each with the device that refused it
  for (const std::size_t copies : candidates) {
    if (copies <= 1) continue;
    std::string described;
    const device_memory_plan_input* refused = nullptr;
    device_memory_plan refused_plan;
    const std::vector<device_memory_plan_input> with_copies = inputs(copies);
    for (const device_memory_plan_input& input : with_copies) {
      const device_memory_plan plan = size_device_memory(input);
      if (!plan.fits()) {
        refused = &input;
        refused_plan = plan;
        break;
      }
      described += "; " + plan.describe();
    }
    if (refused == nullptr) {
      choice.copies = copies;
      choice.reason = passed_over + std::to_string(copies) + " copies of each key's points fit" + described;
      return choice;
    }
    passed_over += std::to_string(copies) + " copies of each key's points do not fit device " +
                   std::to_string(refused->device) + " (" + refused->device_name + "): " +
                   (refused_plan.overflow ? std::string("more than can be counted") : refused_plan.describe()) + "; ";
  }
  if (passed_over.empty()) {
    choice.reason = "the backend keeps no copies of a key's points";
    return choice;
  }
  choice.reason = passed_over + "the keys stay in one copy (msm_copies " + std::to_string(candidates.front()) +
                  " to insist, or fewer circuits, slots or a smaller max_log_constraints to make room)";
  return choice;
}

boost::json::object device_key_copies_choice::to_json() const {
  return {{"copies", copies}, {"source", source}, {"reason", reason}};
}

}  // namespace coprove::engine
