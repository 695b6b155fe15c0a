// The workload.* section of the configuration: what `coprove run` proves, in the order docs/CONFIG.md lists them.
#include "config_readers.hpp"

#include <coprove/r1cs/circuits.hpp>

namespace coprove::app::config_detail {
using r1cs::circuit_families;
using r1cs::circuit_known;
using r1cs::max_log_constraints;
using r1cs::min_log_constraints;

const std::vector<binding>& workload_bindings() {
  using k = config_kind;
  static const std::vector<binding> table = {
      {{"workload.circuit", "circuit", k::string, "\"mimc\"", "Circuit `coprove run` proves: mimc, merkle or bits (a witness of bits, as hash circuits have)."},
       [](app_config& c, const json::value& v) {
         const std::string name = as_string(v, "workload.circuit");
         if (!circuit_known(name)) {
           std::string known;
           for (auto family : circuit_families()) known += (known.empty() ? "" : ", ") + std::string(family);
           throw config_error("workload.circuit", "unknown circuit '" + name + "' (known: " + known + ")");
         }
         c.workload.circuit = name;
       },
       [](const app_config& c) { return json::value(c.workload.circuit); }},
      {{"workload.log_constraints", "log-constraints", k::unsigned_integer, "16",
        "Constraints per partition as a power of two (16 = 65536 constraints)."},
       [](app_config& c, const json::value& v) {
         c.workload.log_constraints = static_cast<unsigned>(as_unsigned(v, "workload.log_constraints", min_log_constraints, max_log_constraints));
       },
       [](const app_config& c) { return json::value(c.workload.log_constraints); }},
      {{"workload.partitions", "partitions", k::unsigned_integer, "8", "Partitions per job."},
       [](app_config& c, const json::value& v) { c.workload.partitions = as_unsigned(v, "workload.partitions", 1, 1u << 20); },
       [](const app_config& c) { return json::value(c.workload.partitions); }},
      {{"workload.jobs", "jobs", k::unsigned_integer, "2",
        "Jobs submitted at once; job i uses seed + i."},
       [](app_config& c, const json::value& v) { c.workload.jobs = as_unsigned(v, "workload.jobs", 1, 1024); },
       [](const app_config& c) { return json::value(c.workload.jobs); }},
      {{"workload.seed", "seed", k::unsigned_integer, "1", "Seed of the first job's witness."},
       [](app_config& c, const json::value& v) { c.workload.seed = as_unsigned(v, "workload.seed", 0, u64_max); },
       [](const app_config& c) { return json::value(c.workload.seed); }},
  };
  return table;
}

}  // namespace coprove::app::config_detail
