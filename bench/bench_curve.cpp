// The curve layer on one CPU thread: Fq multiplications per second on each multiplication path,
// Fq squaring and addition, Fq2 multiplication and squaring, Fq12 multiplication, squaring and
// cyclotomic squaring, G1 and G2 addition and doubling, scalar multiplication (variable time and
// constant time), the subgroup tests (and the same through the general multiplication), one pairing and a two-pairing product; in the same run @noble/curves under node
// (bench/noble_curve_floor.mjs) times the same pairings and scalar multiplications as the floor.
// Prints a table with the ratios and, with --json PATH, writes
// [{"case", "unit", "value", "noble", "ratio"}] (value in the unit; noble and ratio = noble / value
// only where noble has the case). Our cases are timed in thread CPU time (medians of --reps runs);
// noble's in wall time inside node. node or the npm package missing is an error (exit 2) unless
// --no-noble is given.
#include <coprove/field/fq.hpp>
#include <coprove/field/fq_constants.hpp>
#include <coprove/field/fq12.hpp>
#include <coprove/field/fq2.hpp>
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>
#include <coprove/field/pairing.hpp>
#include <coprove/field/scalar.hpp>

#include "support/options.hpp"
#include "support/report.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

namespace field = coprove::field;

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

/// The median over reps of the thread CPU time of work(), in ms.
double median_ms(int reps, const std::function<void()>& work) {
  work();  // warm up
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const double start = thread_cpu_ms();
    work();
    times.push_back(thread_cpu_ms() - start);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct row {
  std::string name;
  std::string unit;
  double value;
  std::optional<double> noble;  // in the same unit
};

/// Keeps a computed value observable so the timed loops are not optimised away.
template <class T>
void keep(const T& value) {
  __asm__ volatile("" : : "r"(&value) : "memory");
}

/// Runs noble_curve_floor.mjs and returns its JSON object; nullopt (with a message) on failure.
std::optional<boost::json::object> run_noble(const std::string& script, int reps) {
  const std::string command = "node '" + script + "' " + std::to_string(reps);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    std::cerr << "bench_curve: cannot start `" << command << "`\n";
    return std::nullopt;
  }
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = pclose(pipe);
  if (status != 0) {
    std::cerr << "bench_curve: `" << command << "` failed (status " << status
              << "); is node installed and node_modules/@noble/curves present (scripts/setup.sh)?\n";
    return std::nullopt;
  }
  try {
    return boost::json::parse(output).as_object();
  } catch (const std::exception& e) {
    std::cerr << "bench_curve: unreadable noble output: " << e.what() << "\n" << output;
    return std::nullopt;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  int reps = 15;
  bool with_noble = true;
  std::string noble_script =
      (std::filesystem::path(__FILE__).parent_path() / "noble_curve_floor.mjs").string();
  coprove::bench::options("bench_curve", "the curve layer and the pairing on one thread, beside @noble/curves")
      .number("--reps", reps, "N", "runs a case, the median kept (default 15)", 1, 10000)
      .text("--noble-script", noble_script, "PATH", "the noble floor's script (default bench/noble_curve_floor.mjs)")
      .flag("--no-noble", [&] { with_noble = false; }, "leave the noble floor out (otherwise node missing is an error)")
      .text("--json", json_path, "PATH", "write the rows as JSON")
      .parse(argc, argv);

  std::mt19937_64 gen(2024);
  std::vector<row> rows;

  // Fq multiplication throughput: four independent chains, as the tower's products are.
  const field::fq m = field::fq::random(gen);
  const field::fq s0 = field::fq::random(gen), s1 = field::fq::random(gen),
                  s2 = field::fq::random(gen), s3 = field::fq::random(gen);
  constexpr std::size_t mul_count = 1 << 20;
  const field::fq_multiply_path start_path = field::active_fq_multiply_path();
  for (const auto path : {field::fq_multiply_path::portable, field::fq_multiply_path::x86_64_adx}) {
    if (!field::fq_multiply_path_supported(path)) continue;
    field::set_fq_multiply_path(path);
    const double ms = median_ms(reps, [&] {
      field::fq x0 = s0, x1 = s1, x2 = s2, x3 = s3;
      for (std::size_t i = 0; i < mul_count / 4; ++i) {
        x0 *= m;
        x1 *= m;
        x2 *= m;
        x3 *= m;
      }
      keep(x0 + x1 + x2 + x3);
    });
    rows.push_back({"fq_mul[" + std::string(field::to_string(path)) + "]", "M/s",
                    static_cast<double>(mul_count) / (ms * 1e3), std::nullopt});
  }
  field::set_fq_multiply_path(start_path);

  constexpr std::size_t op_count = 1 << 14;
  const auto ns_per_op = [&](const std::function<void()>& work, std::size_t n) {
    return median_ms(reps, work) * 1e6 / static_cast<double>(n);
  };
  {
    const field::fq a = field::fq::random(gen), b = field::fq::random(gen);
    rows.push_back({"fq_square", "ns", ns_per_op([&] {
                      field::fq x = a;
                      for (std::size_t i = 0; i < op_count; ++i) x = x.square();
                      keep(x);
                    }, op_count), std::nullopt});
    rows.push_back({"fq_add", "ns", ns_per_op([&] {
                      field::fq x = a;
                      for (std::size_t i = 0; i < op_count; ++i) x += b;
                      keep(x);
                    }, op_count), std::nullopt});
  }
  {
    const field::fq2 a = field::fq2::random(gen), b = field::fq2::random(gen);
    rows.push_back({"fq2_mul", "ns", ns_per_op([&] {
                      field::fq2 x = a;
                      for (std::size_t i = 0; i < op_count; ++i) x *= b;
                      keep(x);
                    }, op_count), std::nullopt});
    rows.push_back({"fq2_square", "ns", ns_per_op([&] {
                      field::fq2 x = a;
                      for (std::size_t i = 0; i < op_count; ++i) x = x.square();
                      keep(x);
                    }, op_count), std::nullopt});
  }
  {
    const field::fq12 a = field::fq12::random(gen), b = field::fq12::random(gen);
    rows.push_back({"fq12_mul", "ns", ns_per_op([&] {
                      field::fq12 x = a;
                      for (std::size_t i = 0; i < 1024; ++i) x *= b;
                      keep(x);
                    }, 1024), std::nullopt});
    rows.push_back({"fq12_square", "ns", ns_per_op([&] {
                      field::fq12 x = a;
                      for (std::size_t i = 0; i < 1024; ++i) x = x.square();
                      keep(x);
                    }, 1024), std::nullopt});
    // An element of the cyclotomic subgroup, where the final exponentiation squares.
    const field::fq12 g = field::final_exponentiation(a);
    rows.push_back({"fq12_cyclotomic_square", "ns", ns_per_op([&] {
                      field::fq12 x = g;
                      for (std::size_t i = 0; i < 1024; ++i) x = x.cyclotomic_square();
                      keep(x);
                    }, 1024), std::nullopt});
  }

  const auto curve_rows = [&](const char* name, auto generator, auto random_point) {
    using jacobian = decltype(generator);
    const jacobian p = random_point(), q = random_point();
    const auto q_affine = q.to_affine();
    rows.push_back({std::string(name) + "_add", "ns", ns_per_op([&] {
                      jacobian x = p;
                      for (std::size_t i = 0; i < op_count; ++i) x = x + q;
                      keep(x);
                    }, op_count), std::nullopt});
    rows.push_back({std::string(name) + "_add_mixed", "ns", ns_per_op([&] {
                      jacobian x = p;
                      for (std::size_t i = 0; i < op_count; ++i) x = x + q_affine;
                      keep(x);
                    }, op_count), std::nullopt});
    rows.push_back({std::string(name) + "_double", "ns", ns_per_op([&] {
                      jacobian x = p;
                      for (std::size_t i = 0; i < op_count; ++i) x = x.doubled();
                      keep(x);
                    }, op_count), std::nullopt});
    std::vector<field::scalar_limbs> scalars;
    for (int i = 0; i < 8; ++i) scalars.push_back(field::random_scalar(gen));
    std::size_t k = 0;
    rows.push_back({std::string(name) + "_mul_vartime", "us",
                    median_ms(reps, [&] { keep(p.mul(scalars[k++ % scalars.size()])); }) * 1e3,
                    std::nullopt});
    rows.push_back({std::string(name) + "_mul_secret", "us",
                    median_ms(reps, [&] { keep(p.mul_secret(scalars[k++ % scalars.size()])); }) * 1e3,
                    std::nullopt});
  };
  curve_rows("g1", field::g1_jacobian::generator(),
             [&] { return field::g1_jacobian::generator().mul(field::random_scalar(gen)); });
  curve_rows("g2", field::g2_jacobian::generator(),
             [&] { return field::g2_jacobian::generator().mul(field::random_scalar(gen)); });

  // The subgroup test every decoded point takes (a key's load is mostly these), beside the same
  // test through the general variable-time multiplication (windowed NAF with its table), which it
  // used before: P in G1 iff endo(P) = -[|x|]([|x|]P), P in G2 iff psi(P) = -[|x|]P.
  {
    const field::scalar_limbs x_abs{field::constants::bls_x_abs, 0, 0, 0};
    const field::g1_affine g1p = field::g1_jacobian::generator().mul(field::random_scalar(gen)).to_affine();
    const field::g2_affine g2p = field::g2_jacobian::generator().mul(field::random_scalar(gen)).to_affine();
    const auto per_check = [&](const char* name, const std::function<bool()>& check) {
      constexpr int checks = 16;
      rows.push_back({name, "us", median_ms(reps, [&] {
                        bool all = true;
                        for (int i = 0; i < checks; ++i) all = all && check();
                        keep(all);
                      }) * 1e3 / checks, std::nullopt});
    };
    per_check("g1_subgroup_check", [&] { return g1p.is_torsion_free(); });
    per_check("g1_subgroup_general",
              [&] { return -g1p.to_jacobian().mul(x_abs).mul(x_abs) == field::g1_endomorphism(g1p); });
    per_check("g2_subgroup_check", [&] { return g2p.is_torsion_free(); });
    per_check("g2_subgroup_general", [&] { return -g2p.to_jacobian().mul(x_abs) == field::g2_endomorphism(g2p); });
  }

  const field::g1_affine p1 = field::g1_jacobian::generator().mul(field::random_scalar(gen)).to_affine();
  const field::g1_affine p2 = field::g1_jacobian::generator().mul(field::random_scalar(gen)).to_affine();
  const field::g2_affine q1 = field::g2_jacobian::generator().mul(field::random_scalar(gen)).to_affine();
  const field::g2_affine q2 = field::g2_jacobian::generator().mul(field::random_scalar(gen)).to_affine();
  const field::fq12 loop_value = field::miller_loop(p1, q1);
  rows.push_back({"miller_loop", "ms", median_ms(reps, [&] { keep(field::miller_loop(p1, q1)); }),
                  std::nullopt});
  rows.push_back({"final_exponentiation", "ms",
                  median_ms(reps, [&] { keep(field::final_exponentiation(loop_value)); }),
                  std::nullopt});
  rows.push_back({"pairing", "ms", median_ms(reps, [&] { keep(field::pairing(p1, q1)); }),
                  std::nullopt});
  const std::vector<std::pair<field::g1_affine, field::g2_affine>> two = {{p1, q1}, {p2, q2}};
  rows.push_back({"pairing2", "ms", median_ms(reps, [&] { keep(field::multi_pairing(two)); }),
                  std::nullopt});
  const field::g2_prepared prepared = field::g2_prepared::from(q1);
  rows.push_back({"pairing_prepared_g2", "ms",
                  median_ms(reps, [&] {
                    keep(field::final_exponentiation(field::miller_loop(p1, prepared)));
                  }),
                  std::nullopt});

  std::string noble_version;
  if (with_noble) {
    const auto noble = run_noble(noble_script, reps);
    if (!noble) return 2;
    noble_version = std::string(noble->at("noble_version").as_string());
    const auto attach = [&](const std::string& name, const char* key) {
      for (auto& r : rows) {
        if (r.name == name) r.noble = noble->at(key).to_number<double>();
      }
    };
    attach("pairing", "pairing_ms");
    attach("pairing2", "pairing2_ms");
    attach("g1_mul_secret", "g1_mul_us");
    attach("g1_mul_vartime", "g1_mul_vartime_us");
    attach("g2_mul_secret", "g2_mul_us");
    attach("g2_mul_vartime", "g2_mul_vartime_us");
  }

  std::printf("bench_curve: one thread, Fq multiply path %s, %d reps (medians)%s%s\n",
              std::string(field::to_string(field::active_fq_multiply_path())).c_str(), reps,
              with_noble ? ", floor @noble/curves " : "", noble_version.c_str());
  coprove::bench::report table(
      {{"case", "case"}, {"coprove", "value", 3}, {"unit", "unit"}, {"noble", "noble", 3}, {"noble/ours", "ratio", 1}});
  for (const auto& r : rows) {
    boost::json::object o{{"case", r.name}, {"unit", r.unit}, {"value", r.value}};
    if (r.noble) {
      o["noble"] = *r.noble;
      o["ratio"] = *r.noble / r.value;
    }
    table.add(std::move(o));
  }
  table.print();
  if (!json_path.empty() && !table.write_json(json_path, "bench_curve")) return 1;
  return 0;
}
