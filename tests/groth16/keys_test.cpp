// The setup against the definitions of bellman's key, with known toxic waste and an independent
// Lagrange evaluation; the seeded mode's determinism; and the key files: round trips, and
// truncated, oversized, miscounted, off-curve, off-subgroup and identity inputs refused with the
// file, section and index named.
#include <coprove/groth16/keys.hpp>
#include <coprove/groth16/key_files.hpp>

#include "groth16/groth16_test_circuits.hpp"
#include "groth16/groth16_test_support.hpp"

#include <coprove/field/domain.hpp>
#include <coprove/field/encoding.hpp>
#include <coprove/r1cs/mimc.hpp>

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

using namespace coprove;
using namespace coprove::groth16;
using field::fr;

namespace {

using testing::temp_dir;

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::filesystem::path& p, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

/// Column i of m at the Lagrange values `basis`.
fr column_at(const r1cs::pce_matrices& mats, const r1cs::csr_matrix& m, std::size_t column,
             const std::vector<fr>& basis) {
  fr sum = fr::zero();
  for (std::size_t row = 0; row + 1 < m.row_offsets.size(); ++row)
    for (std::uint32_t e = m.row_offsets[row]; e < m.row_offsets[row + 1]; ++e)
      if (m.columns[e] == column) sum += mats.coefficient_table[m.coefficients[e]] * basis[row];
  return sum;
}

/// Known toxic waste: five random elements from `seed`.
void draw_waste(toxic_waste& waste, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  waste.tau = fr::random(gen);
  waste.alpha = fr::random(gen);
  waste.beta = fr::random(gen);
  waste.gamma = fr::random(gen);
  waste.delta = fr::random(gen);
}

/// L_j(tau) = (tau^n - 1) omega^j / (n (tau - omega^j)) on the n-th roots, independently of the NTT.
std::vector<fr> lagrange_basis(const fr& tau, std::size_t n, field::domain_roots roots) {
  const field::evaluation_domain domain(n, roots);
  const fr z = tau.pow(static_cast<std::uint64_t>(n)) - fr::one();
  std::vector<fr> basis(n);
  fr omega_j = fr::one();
  for (std::size_t j = 0; j < n; ++j) {
    basis[j] = z * omega_j * (fr::from_uint64(n) * (tau - omega_j)).inverse();
    omega_j *= domain.omega();
  }
  return basis;
}

field::g1_affine g1_of(const fr& k) { return field::g1_jacobian::generator().mul(k.to_canonical()).to_affine(); }
field::g2_affine g2_of(const fr& k) { return field::g2_jacobian::generator().mul(k.to_canonical()).to_affine(); }

/// Checks the points of every variable against its columns at the Lagrange values `basis`: a,
/// b_g1, b_g2, and ic or l.
void check_variable_points(const proving_key& pk, const r1cs::pce_matrices& matrices, const toxic_waste& waste,
                           const std::vector<fr>& basis) {
  REQUIRE(pk.num_variables() == matrices.num_inputs + matrices.num_aux);
  for (std::size_t i = 0; i < pk.num_variables(); ++i) {
    INFO("variable " << i);
    const fr u = column_at(matrices, matrices.a, i, basis);
    const fr v = column_at(matrices, matrices.b, i, basis);
    const fr w = column_at(matrices, matrices.c, i, basis);
    CHECK(pk.a[i] == g1_of(u));
    CHECK(pk.b_g1[i] == g1_of(v));
    CHECK(pk.b_g2[i] == g2_of(v));
    const fr ext = waste.beta * u + waste.alpha * v + w;
    if (i < matrices.num_inputs) {
      CHECK(pk.vk.ic[i] == g1_of(ext * waste.gamma.inverse()));
    } else {
      CHECK(pk.l[i - matrices.num_inputs] == g1_of(ext * waste.delta.inverse()));
    }
  }
}

struct sample_key {
  r1cs::pce_matrices matrices;
  key_shape shape;
  proving_key pk;
};

const sample_key& products_key() {
  static const sample_key key = [] {
    sample_key k;
    k.matrices = record_matrices(testing::public_products_circuit(5, 5, 1));
    k.shape = key_shape::of(k.matrices);
    auto secrets = secret_source::insecure_seeded(11, "the key tests' setup");
    k.pk = setup(k.matrices, secrets);
    return k;
  }();
  return key;
}

/// Byte offsets of the params file's sections for a shape (counts included).
struct params_layout {
  std::size_t vk_end, h, l, a, b_g1, b_g2, end;
  explicit params_layout(const key_shape& s) {
    vk_end = 864 + 4 + 96 * s.num_inputs;
    h = vk_end;
    l = h + 4 + 96 * s.h_count();
    a = l + 4 + 96 * s.num_aux;
    b_g1 = a + 4 + 96 * s.a_count();
    b_g2 = b_g1 + 4 + 96 * s.b_count();
    end = b_g2 + 4 + 192 * s.b_count();
  }
};

/// Expects read_params to throw a key_file_error naming the section (and index when given).
void expect_params_error(const std::filesystem::path& path, const key_shape& shape, const std::string& section,
                         std::optional<std::size_t> index, const std::string& reason_part,
                         const bulk_subgroup_test* bulk = nullptr) {
  try {
    (void)(bulk != nullptr ? read_params(path, shape, *bulk) : read_params(path, shape));
    FAIL("read_params accepted a bad file (expected an error in section " << section << ")");
  } catch (const key_file_error& e) {
    INFO(e.what());
    CHECK(e.section() == section);
    CHECK(e.index() == index);
    CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
    CHECK(std::string(e.what()).find(reason_part) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("the setup computes bellman's key from the toxic waste", "[groth16][keys][cpu]") {
  const auto matrices = record_matrices(testing::public_products_circuit(3, 4, 2));
  toxic_waste waste;
  draw_waste(waste, 12);
  const proving_key pk = setup(matrices, waste);
  const key_shape shape = key_shape::of(matrices);
  REQUIRE_NOTHROW(pk.check_consistent(&shape));

  const std::size_t n = matrices.domain_size;
  const fr z = waste.tau.pow(static_cast<std::uint64_t>(n)) - fr::one();
  const auto& vk = pk.vk;
  CHECK(vk.alpha_g1 == g1_of(waste.alpha));
  CHECK(vk.beta_g1 == g1_of(waste.beta));
  CHECK(vk.beta_g2 == g2_of(waste.beta));
  CHECK(vk.gamma_g2 == g2_of(waste.gamma));
  CHECK(vk.delta_g1 == g1_of(waste.delta));
  CHECK(vk.delta_g2 == g2_of(waste.delta));
  check_variable_points(pk, matrices, waste, lagrange_basis(waste.tau, n, field::domain_roots::standard));
  for (std::size_t i = 0; i < pk.num_variables(); ++i) {
    CHECK(pk.a[i].is_identity() == !shape.a_density[i]);
    CHECK(pk.b_g1[i].is_identity() == !shape.b_density[i]);
  }
  REQUIRE(pk.h.size() == n - 1);
  for (std::size_t j = 0; j + 1 < n; ++j)
    CHECK(pk.h[j] == g1_of(waste.tau.pow(static_cast<std::uint64_t>(j)) * z * waste.delta.inverse()));
  // The densities have holes: q_i is in B only, t_i and s in C only.
  CHECK(shape.a_count() < shape.num_variables());
  CHECK(shape.b_count() < shape.num_variables());
  CHECK(pk.bytes() == proving_key::estimate_bytes(shape.num_inputs, shape.num_aux, n));
}

TEST_CASE("the setup's snarkjs form puts the rows on ffjavascript's roots and H on the odd Lagrange points of 2n",
          "[groth16][keys][cpu]") {
  const auto matrices = record_matrices(testing::public_products_circuit(3, 4, 2));
  toxic_waste waste;
  draw_waste(waste, 13);
  const proving_key pk = setup(matrices, waste, field::quotient_form::odd_coset_evaluations);
  CHECK(pk.h_form == field::quotient_form::odd_coset_evaluations);
  const std::size_t n = matrices.domain_size;
  REQUIRE(pk.h.size() == n);
  CHECK(pk.domain_size() == n);

  check_variable_points(pk, matrices, waste, lagrange_basis(waste.tau, n, field::domain_roots::ffjavascript));
  const std::vector<fr> doubled = lagrange_basis(waste.tau, 2 * n, field::domain_roots::ffjavascript);
  for (std::size_t i = 0; i < n; ++i) CHECK(pk.h[i] == g1_of(doubled[2 * i + 1] * waste.delta.inverse()));
}

TEST_CASE("a seeded setup is reproducible and the system source is not", "[groth16][keys][cpu]") {
  const auto matrices = record_matrices(r1cs::mimc_circuit(10, fr::from_uint64(5)));
  auto s1 = secret_source::insecure_seeded(7, "test");
  auto s2 = secret_source::insecure_seeded(7, "test");
  auto s3 = secret_source::insecure_seeded(8, "test");
  CHECK(s1.deterministic());
  const proving_key k1 = setup(matrices, s1);
  CHECK(k1 == setup(matrices, s2));
  CHECK_FALSE(k1.vk == setup(matrices, s3).vk);
  auto system = secret_source::system();
  CHECK_FALSE(system.deterministic());
  const proving_key k4 = setup(matrices, system);
  CHECK_FALSE(k4.vk == k1.vk);
  CHECK(system.uniform() != system.uniform());
}

TEST_CASE("secure_wipe and the wiped holders zero their memory", "[groth16][keys][cpu]") {
  std::array<std::uint64_t, 4> limbs{1, 2, 3, 4};
  secure_wipe(static_cast<void*>(limbs.data()), sizeof limbs);
  CHECK(limbs == std::array<std::uint64_t, 4>{0, 0, 0, 0});
  wiped_vector<fr> v(3, fr::one());
  v.wipe();
  CHECK(v.size() == 0);
}

TEST_CASE("params, vk and vk.json round-trip", "[groth16][keys][files][cpu]") {
  const auto& key = products_key();
  temp_dir dir("roundtrip");
  write_params(key.pk, key.shape, dir.path / "params");
  write_verifying_key(key.pk.vk, dir.path / "vk");
  write_verifying_key_json(key.pk.vk, dir.path / "vk.json");
  CHECK_FALSE(std::filesystem::exists(dir.path / "params.tmp"));

  CHECK(read_params(dir.path / "params", key.shape) == key.pk);
  CHECK(read_verifying_key(dir.path / "vk", key.shape.num_inputs) == key.pk.vk);
  CHECK(read_verifying_key(dir.path / "vk") == key.pk.vk);
  const auto vk_bytes = read_bytes(dir.path / "vk");
  CHECK(vk_bytes == encode_verifying_key(key.pk.vk));
  CHECK(decode_verifying_key(vk_bytes, "vk bytes") == key.pk.vk);
  // The params file starts with the vk and has exactly the layout of formats.md.
  const auto params = read_bytes(dir.path / "params");
  const params_layout layout(key.shape);
  CHECK(params.size() == layout.end);
  CHECK(std::equal(vk_bytes.begin(), vk_bytes.end(), params.begin()));

  const auto json_vk = read_verifying_key_json(dir.path / "vk.json");
  CHECK(json_vk.alpha_g1 == key.pk.vk.alpha_g1);
  CHECK(json_vk.beta_g2 == key.pk.vk.beta_g2);
  CHECK(json_vk.gamma_g2 == key.pk.vk.gamma_g2);
  CHECK(json_vk.delta_g2 == key.pk.vk.delta_g2);
  CHECK(json_vk.ic == key.pk.vk.ic);
  const auto json = verifying_key_to_snarkjs_json(key.pk.vk);
  CHECK(json.at("protocol") == "groth16");
  CHECK(json.at("curve") == "bls12381");
  CHECK(json.at("nPublic").to_number<std::size_t>() == 5);
  CHECK(json.at("IC").as_array().size() == 6);
  CHECK(json.at("vk_alpha_1").as_array().at(2) == "1");
}

TEST_CASE("reading refuses truncated, oversized and miscounted key files", "[groth16][keys][files][cpu]") {
  const auto& key = products_key();
  temp_dir dir("bad-size");
  const auto good = dir.path / "params";
  write_params(key.pk, key.shape, good);
  const auto bytes = read_bytes(good);
  const params_layout layout(key.shape);
  const auto bad = dir.path / "bad";

  const auto truncated = [&](std::size_t size) {
    write_bytes(bad, std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size)));
  };
  truncated(0);
  expect_params_error(bad, key.shape, "alpha_g1", std::nullopt, "truncated");
  truncated(100);
  expect_params_error(bad, key.shape, "beta_g1", std::nullopt, "truncated");
  truncated(layout.vk_end + 2);
  expect_params_error(bad, key.shape, "h", std::nullopt, "truncated");
  // A section cut short is refused at its count, before its points are read or allocated.
  truncated(layout.l + 4 + 96 * 3 + 10);
  expect_params_error(bad, key.shape, "l", std::nullopt, "bytes that remain in the file hold");
  truncated(bytes.size() - 1);
  expect_params_error(bad, key.shape, "b_g2", std::nullopt, "truncated: declares");

  auto longer = bytes;
  longer.push_back(0);
  write_bytes(bad, longer);
  expect_params_error(bad, key.shape, "", std::nullopt, "1 trailing bytes");

  // A count that disagrees with the circuit is refused before any point is read.
  auto miscounted = bytes;
  miscounted[layout.l + 3] ^= 1;
  write_bytes(bad, miscounted);
  expect_params_error(bad, key.shape, "l", std::nullopt, "the circuit needs");

  // The same file against another circuit's shape.
  const auto other = key_shape::of(record_matrices(testing::public_products_circuit(4, 5, 1)));
  expect_params_error(good, other, "ic", std::nullopt, "the circuit needs");

  const auto vk_path = dir.path / "vk";
  write_verifying_key(key.pk.vk, vk_path);
  CHECK_THROWS_AS(read_verifying_key(vk_path, 3), key_file_error);
  auto vk_bytes = read_bytes(vk_path);
  vk_bytes.pop_back();
  write_bytes(vk_path, vk_bytes);
  CHECK_THROWS_AS(read_verifying_key(vk_path), key_file_error);
  CHECK_THROWS_AS(read_params(dir.path / "missing", key.shape), key_file_error);
}

TEST_CASE("a bulk subgroup test stands in for the per-point tests, every point still tested", "[groth16][keys][files][cpu]") {
  const auto& key = products_key();
  temp_dir dir("bulk");
  write_params(key.pk, key.shape, dir.path / "params");
  // The CPU's per-point test, a query at a time, counting what it is given.
  std::size_t g1_points = 0, g2_points = 0;
  const bulk_subgroup_test bulk{"the test's loop",
                                [&](std::span<const field::g1_affine> p) {
                                  g1_points += p.size();
                                  return testing::first_outside_subgroup(p);
                                },
                                [&](std::span<const field::g2_affine> p) {
                                  g2_points += p.size();
                                  return testing::first_outside_subgroup(p);
                                }};
  CHECK(read_params(dir.path / "params", key.shape, bulk) == key.pk);
  CHECK(g1_points == key.shape.h_count() + key.shape.num_aux + key.shape.a_count() + key.shape.b_count());
  CHECK(g2_points == key.shape.b_count());

  const params_layout layout(key.shape);
  const auto bytes = read_bytes(dir.path / "params");
  const auto bad = dir.path / "bad";
  std::mt19937_64 gen(17);
  field::g2_affine outside = testing::random_curve_point<field::g2_curve>(gen);
  while (outside.is_torsion_free()) outside = testing::random_curve_point<field::g2_curve>(gen);
  const auto outside_bytes = field::encode_uncompressed(outside);
  auto off_subgroup = bytes;
  std::copy(outside_bytes.begin(), outside_bytes.end(),
            off_subgroup.begin() + static_cast<std::ptrdiff_t>(layout.b_g2 + 4 + 192 * 1));
  write_bytes(bad, off_subgroup);
  expect_params_error(bad, key.shape, "b_g2", 1, "subgroup", &bulk);
  // The decoder still tests the curve equation before the bulk test sees a point.
  auto off_curve = bytes;
  off_curve[layout.l + 4 + 96 * 3 + 95] ^= 1;
  write_bytes(bad, off_curve);
  expect_params_error(bad, key.shape, "l", 3, "curve", &bulk);
  // A test that says a point is outside is believed, and named.
  const bulk_subgroup_test refuses{"a refusing test", [](std::span<const field::g1_affine> p) {
                                     return p.size() > 4 ? std::optional<std::size_t>(4) : std::nullopt;
                                   },
                                   [](std::span<const field::g2_affine>) { return std::optional<std::size_t>(); }};
  expect_params_error(dir.path / "params", key.shape, "h", 4, "subgroup", &refuses);
  CHECK_THROWS_AS(read_params(dir.path / "params", key.shape, bulk_subgroup_test{"half", bulk.g1, {}}),
                  std::invalid_argument);
}

TEST_CASE("reading refuses off-curve, off-subgroup and identity points, naming them", "[groth16][keys][files][cpu]") {
  const auto& key = products_key();
  temp_dir dir("bad-point");
  write_params(key.pk, key.shape, dir.path / "params");
  const auto bytes = read_bytes(dir.path / "params");
  const params_layout layout(key.shape);
  const auto bad = dir.path / "bad";
  const auto point_at = [&](std::size_t section, std::size_t index, std::size_t size) {
    return section + 4 + size * index;
  };

  // Off the curve: y's last byte flipped (still canonical).
  auto off_curve = bytes;
  off_curve[point_at(layout.l, 3, 96) + 95] ^= 1;
  write_bytes(bad, off_curve);
  expect_params_error(bad, key.shape, "l", 3, "curve");

  auto off_curve_g2 = bytes;
  off_curve_g2[point_at(layout.b_g2, 1, 192) + 191] ^= 1;
  write_bytes(bad, off_curve_g2);
  expect_params_error(bad, key.shape, "b_g2", 1, "curve");

  // On the curve, outside the subgroup.
  std::mt19937_64 gen(13);
  field::g1_affine outside = testing::random_curve_point<field::g1_curve>(gen);
  while (outside.is_torsion_free()) outside = testing::random_curve_point<field::g1_curve>(gen);
  const auto outside_bytes = field::encode_uncompressed(outside);
  auto off_subgroup = bytes;
  std::copy(outside_bytes.begin(), outside_bytes.end(), off_subgroup.begin() + static_cast<std::ptrdiff_t>(point_at(layout.a, 2, 96)));
  write_bytes(bad, off_subgroup);
  expect_params_error(bad, key.shape, "a", 2, "subgroup");
  // A trusted read skips the subgroup checks of the queries only: it takes this file, and still
  // refuses points off the curve.
  CHECK(read_params(bad, key.shape, field::subgroup_check::skip).a[2] == outside);
  write_bytes(bad, off_curve);
  CHECK_THROWS_AS(read_params(bad, key.shape, field::subgroup_check::skip), key_file_error);

  field::g2_affine outside2 = testing::random_curve_point<field::g2_curve>(gen);
  while (outside2.is_torsion_free()) outside2 = testing::random_curve_point<field::g2_curve>(gen);
  const auto outside2_bytes = field::encode_uncompressed(outside2);
  auto off_subgroup_vk = bytes;
  std::copy(outside2_bytes.begin(), outside2_bytes.end(), off_subgroup_vk.begin() + 96 * 2 + 192);  // gamma_g2
  write_bytes(bad, off_subgroup_vk);
  expect_params_error(bad, key.shape, "gamma_g2", std::nullopt, "subgroup");

  // The identity where bellman refuses it.
  const auto identity = field::encode_uncompressed(field::g1_affine::identity());
  auto with_identity = bytes;
  std::copy(identity.begin(), identity.end(), with_identity.begin() + static_cast<std::ptrdiff_t>(point_at(layout.h, 4, 96)));
  write_bytes(bad, with_identity);
  expect_params_error(bad, key.shape, "h", 4, "infinity");

  // vk.json with a point off the curve.
  write_verifying_key_json(key.pk.vk, dir.path / "vk.json");
  auto json = verifying_key_to_snarkjs_json(key.pk.vk);
  json["IC"].as_array()[1].as_array()[1] = "5";
  std::ofstream(dir.path / "bad.json") << boost::json::serialize(json);
  try {
    (void)read_verifying_key_json(dir.path / "bad.json");
    FAIL("accepted an off-curve IC point");
  } catch (const key_file_error& e) {
    CHECK(e.section() == "IC");
    CHECK(e.index() == std::optional<std::size_t>(1));
  }
}
