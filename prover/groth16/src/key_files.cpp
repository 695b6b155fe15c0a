// Reading and writing the key files (see key_files.hpp). Sections are moved in chunks of points:
// a chunk is read (or encoded) as bytes, then decoded (or written) on all cores, so a multi-GiB
// params file never needs a second copy of itself in memory.
#include <coprove/groth16/key_files.hpp>

#include "file_writer.hpp"

#include <coprove/field/encoding.hpp>
#include <coprove/field/parallel.hpp>
#include <coprove/runtime/input_file.hpp>
#include <coprove/runtime/log.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <sstream>

namespace coprove::groth16 {

namespace {

using field::g1_affine;
using field::g2_affine;

using detail::buffer_writer;
using detail::byte_writer;
using detail::file_writer;
using detail::points_per_chunk;

std::string describe(const std::string& file, const std::string& section, std::optional<std::size_t> index,
                     const std::string& why) {
  std::string out = "key file '" + file + "'";
  if (!section.empty()) out += ", section " + section;
  if (index) out += ", point " + std::to_string(*index);
  return out + ": " + why;
}

template <class Point>
struct point_codec;

template <>
struct point_codec<g1_affine> {
  static constexpr std::size_t size = 96;
  static std::array<std::uint8_t, 96> encode(const g1_affine& p) { return field::encode_uncompressed(p); }
  static field::decode_result<g1_affine> decode(std::span<const std::uint8_t> b,
                                               field::subgroup_check check = field::subgroup_check::check) {
    return field::decode_g1_uncompressed(b, check);
  }
};

template <>
struct point_codec<g2_affine> {
  static constexpr std::size_t size = 192;
  static std::array<std::uint8_t, 192> encode(const g2_affine& p) { return field::encode_uncompressed(p); }
  static field::decode_result<g2_affine> decode(std::span<const std::uint8_t> b,
                                               field::subgroup_check check = field::subgroup_check::check) {
    return field::decode_g2_uncompressed(b, check);
  }
};

/// A source of bytes with a name for errors: a file or a buffer.
class byte_reader {
 public:
  virtual ~byte_reader() = default;
  /// Reads out.size() bytes; throws key_file_error (truncated) when the input ends first.
  void read(std::span<std::uint8_t> out, const std::string& section, std::optional<std::size_t> index) {
    const std::size_t got = read_some(out);
    if (got != out.size()) {
      throw key_file_error(name_, section, index,
                           "truncated: " + std::to_string(out.size()) + " bytes needed at offset " +
                               std::to_string(offset_) + ", " + std::to_string(got) + " left");
    }
    offset_ += got;
  }
  /// Throws unless the input is exhausted.
  void expect_end() {
    std::array<std::uint8_t, 4096> probe;
    std::size_t extra = 0;
    for (;;) {
      const std::size_t got = read_some(probe);
      extra += got;
      if (got < probe.size()) break;
    }
    if (extra != 0)
      throw key_file_error(name_, "", std::nullopt,
                           std::to_string(extra) + " trailing bytes after the last section (offset " +
                               std::to_string(offset_) + ")");
  }
  const std::string& name() const noexcept { return name_; }
  /// The bytes not yet read (what a count read from the input is held to before it sizes anything).
  virtual std::uint64_t remaining() const noexcept = 0;

 protected:
  explicit byte_reader(std::string name) : name_(std::move(name)) {}
  virtual std::size_t read_some(std::span<std::uint8_t> out) = 0;

 private:
  std::string name_;
  std::size_t offset_ = 0;
};

class buffer_reader final : public byte_reader {
 public:
  buffer_reader(std::span<const std::uint8_t> bytes, std::string name) : byte_reader(std::move(name)), rest_(bytes) {}
  std::uint64_t remaining() const noexcept override { return rest_.size(); }

 private:
  std::size_t read_some(std::span<std::uint8_t> out) override {
    const std::size_t n = std::min(out.size(), rest_.size());
    std::copy_n(rest_.begin(), n, out.begin());
    rest_ = rest_.subspan(n);
    return n;
  }
  std::span<const std::uint8_t> rest_;
};

/// The size of the regular file at `path` (runtime::regular_file_size): a device, a directory, a
/// pipe or a file above `max_bytes` is refused as a key_file_error naming the file.
std::uint64_t key_file_size(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what) {
  try {
    return runtime::regular_file_size(path, max_bytes, what);
  } catch (const runtime::input_file_error& e) {
    throw key_file_error(path.string(), "", std::nullopt, e.why());
  }
}

/// A key file streamed in chunks (a params file may be many GiB); only a regular file is opened,
/// and its size, known before the first read, bounds every count read from it.
class file_reader final : public byte_reader {
 public:
  file_reader(const std::filesystem::path& path, std::string_view what)
      : byte_reader(path.string()), size_(key_file_size(path, runtime::input_limits::binary_file_bytes, what)) {
    in_.open(path, std::ios::binary);
    if (!in_) throw key_file_error(path.string(), "", std::nullopt, "cannot open for reading");
  }
  std::uint64_t remaining() const noexcept override { return consumed_ < size_ ? size_ - consumed_ : 0; }

 private:
  std::size_t read_some(std::span<std::uint8_t> out) override {
    in_.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
    if (in_.bad()) throw key_file_error(name(), "", std::nullopt, "read error");
    const auto got = static_cast<std::size_t>(in_.gcount());
    consumed_ += got;
    return got;
  }
  std::uint64_t size_;
  std::uint64_t consumed_ = 0;
  std::ifstream in_;
};

void write_count(byte_writer& out, std::size_t count, const std::string& section) {
  if (count > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("section " + section + " has more than 2^32 - 1 points");
  const std::array<std::uint8_t, 4> bytes{static_cast<std::uint8_t>(count >> 24), static_cast<std::uint8_t>(count >> 16),
                                          static_cast<std::uint8_t>(count >> 8), static_cast<std::uint8_t>(count)};
  out.write(bytes);
}

std::size_t read_count(byte_reader& in, const std::string& section) {
  std::array<std::uint8_t, 4> b;
  in.read(b, section, std::nullopt);
  return (std::size_t{b[0]} << 24) | (std::size_t{b[1]} << 16) | (std::size_t{b[2]} << 8) | std::size_t{b[3]};
}

template <class Point>
void write_point(byte_writer& out, const Point& p) {
  out.write(point_codec<Point>::encode(p));
}

/// Encodes the points selected by `keep` (all when empty) on all cores, chunk by chunk.
template <class Point>
void write_points(byte_writer& out, std::span<const Point> points, const std::vector<bool>* keep = nullptr) {
  std::vector<const Point*> selected;
  if (keep != nullptr) {
    for (std::size_t i = 0; i < points.size(); ++i)
      if ((*keep)[i]) selected.push_back(&points[i]);
  }
  const std::size_t total = keep != nullptr ? selected.size() : points.size();
  detail::write_records(out, total, point_codec<Point>::size, [&](std::size_t i, std::span<std::uint8_t> to) {
    const auto bytes = point_codec<Point>::encode(keep != nullptr ? *selected[i] : points[i]);
    std::copy(bytes.begin(), bytes.end(), to.begin());
  });
}

/// One of the verifying key's six points: never the identity (bellman refuses it in all six).
template <class Point>
Point read_point(byte_reader& in, const std::string& section) {
  std::array<std::uint8_t, point_codec<Point>::size> bytes;
  in.read(bytes, section, std::nullopt);
  const auto decoded = point_codec<Point>::decode(bytes);
  if (!decoded.ok()) throw key_file_error(in.name(), section, std::nullopt, decoded.error.message());
  if (decoded.point.is_identity())
    throw key_file_error(in.name(), section, std::nullopt, "the point at infinity, which a verifying key may not hold");
  return decoded.point;
}

/// Reads `count` points, decoding and checking them on all cores; the first bad point (lowest
/// index) is the one reported.
template <class Point>
std::vector<Point> read_points(byte_reader& in, const std::string& section, std::size_t count, bool allow_identity,
                               field::subgroup_check check = field::subgroup_check::check) {
  constexpr std::size_t size = point_codec<Point>::size;
  if (count > in.remaining() / size)
    throw key_file_error(in.name(), section, std::nullopt,
                         "truncated: declares " + std::to_string(count) + " points of " + std::to_string(size) +
                             " bytes, more than the " + std::to_string(in.remaining()) +
                             " bytes that remain in the file hold");
  std::vector<Point> out(count);
  std::vector<std::uint8_t> buffer;
  for (std::size_t begin = 0; begin < count; begin += points_per_chunk) {
    const std::size_t end = std::min(count, begin + points_per_chunk);
    buffer.resize((end - begin) * size);
    in.read(buffer, section, begin);
    std::mutex mutex;
    std::optional<std::size_t> bad_index;
    std::string bad_reason;
    field::parallel_for(begin, end, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) {
        const auto decoded =
            point_codec<Point>::decode(std::span<const std::uint8_t>(buffer).subspan((i - begin) * size, size), check);
        std::string why;
        if (!decoded.ok()) {
          why = decoded.error.message();
        } else if (!allow_identity && decoded.point.is_identity()) {
          why = "the point at infinity, which this section may not hold";
        } else {
          out[i] = decoded.point;
          continue;
        }
        std::lock_guard lock(mutex);
        if (!bad_index || i < *bad_index) {
          bad_index = i;
          bad_reason = why;
        }
        return;
      }
    }, 64);
    if (bad_index) throw key_file_error(in.name(), section, bad_index, bad_reason);
  }
  return out;
}

void check_count(const byte_reader& in, const std::string& section, std::size_t found, std::size_t expected) {
  if (found != expected)
    throw key_file_error(in.name(), section, std::nullopt,
                         "holds " + std::to_string(found) + " points, the circuit needs " + std::to_string(expected));
}

void write_vk_to(byte_writer& out, const verifying_key& vk) {
  detail::for_each_vk_point(vk, [&](const auto& p) { write_point(out, p); });
  write_count(out, vk.ic.size(), "ic");
  write_points<g1_affine>(out, vk.ic);
}

verifying_key read_vk_from(byte_reader& in, std::optional<std::size_t> expected_ic) {
  verifying_key vk;
  vk.alpha_g1 = read_point<g1_affine>(in, "alpha_g1");
  vk.beta_g1 = read_point<g1_affine>(in, "beta_g1");
  vk.beta_g2 = read_point<g2_affine>(in, "beta_g2");
  vk.gamma_g2 = read_point<g2_affine>(in, "gamma_g2");
  vk.delta_g1 = read_point<g1_affine>(in, "delta_g1");
  vk.delta_g2 = read_point<g2_affine>(in, "delta_g2");
  const std::size_t ic = read_count(in, "ic");
  if (ic == 0) throw key_file_error(in.name(), "ic", std::nullopt, "is empty (the constant one's point is missing)");
  if (expected_ic) check_count(in, "ic", ic, *expected_ic);
  vk.ic = read_points<g1_affine>(in, "ic", ic, true);
  check_verifying_key(vk, in.name());
  return vk;
}

/// The points of `dense` whose density bit is set are in `packed`, in order.
template <class Point>
std::vector<Point> expand(std::vector<Point> packed, const std::vector<bool>& density) {
  std::vector<Point> out(density.size());
  std::size_t next = 0;
  for (std::size_t i = 0; i < density.size(); ++i)
    if (density[i]) out[i] = packed[next++];
  return out;
}

boost::json::array decimal(std::span<const field::g1_affine> points) {
  boost::json::array out;
  for (const auto& p : points) out.push_back(field::to_snarkjs_json(p));
  return out;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  file_writer out(path);
  out.write(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  out.commit();
}

}  // namespace

namespace {

/// check_verifying_key with the point named by `name_of` (the file format's own names).
template <class Names>
void check_verifying_key_named(const verifying_key& vk, const std::string& file, Names name_of) {
  const auto bad = find_degenerate_point(vk);
  if (!bad) return;
  if (vk.ic.empty())
    throw key_file_error(file, name_of("ic"), std::nullopt, "is empty (the constant one's point is missing)");
  throw key_file_error(file, name_of(bad->name), bad->index,
                       "the point at infinity: a verifying key with it accepts forged proofs");
}

/// verification_key.json's name of a point of find_degenerate_point.
std::string snarkjs_name(std::string_view name) {
  if (name == "alpha_g1") return "vk_alpha_1";
  if (name == "beta_g2") return "vk_beta_2";
  if (name == "gamma_g2") return "vk_gamma_2";
  if (name == "delta_g2") return "vk_delta_2";
  return "IC";
}

}  // namespace

void check_verifying_key(const verifying_key& vk, const std::string& file) {
  check_verifying_key_named(vk, file, [](const char* name) { return std::string(name); });
}

key_file_error::key_file_error(std::string file, std::string section, std::optional<std::size_t> index,
                               const std::string& why)
    : std::runtime_error(describe(file, section, index, why)),
      file_(std::move(file)),
      section_(std::move(section)),
      index_(index) {}

std::vector<std::uint8_t> encode_verifying_key(const verifying_key& vk) {
  buffer_writer out;
  write_vk_to(out, vk);
  return std::move(out.out);
}

verifying_key decode_verifying_key(std::span<const std::uint8_t> bytes, const std::string& name,
                                   std::optional<std::size_t> expected_ic) {
  buffer_reader in(bytes, name);
  verifying_key vk = read_vk_from(in, expected_ic);
  in.expect_end();
  return vk;
}

void write_verifying_key(const verifying_key& vk, const std::filesystem::path& path) {
  file_writer out(path);
  write_vk_to(out, vk);
  out.commit();
}

verifying_key read_verifying_key(const std::filesystem::path& path, std::optional<std::size_t> expected_ic) {
  file_reader in(path, "verifying key");
  verifying_key vk = read_vk_from(in, expected_ic);
  in.expect_end();
  return vk;
}

void write_params(const proving_key& pk, const key_shape& shape, const std::filesystem::path& path) {
  pk.check_consistent(&shape);
  if (shape.a_density.size() != pk.a.size() || shape.b_density.size() != pk.b_g1.size())
    throw std::invalid_argument("write_params: the shape's densities do not cover the key's variables");
  file_writer out(path);
  write_vk_to(out, pk.vk);
  write_count(out, pk.h.size(), "h");
  write_points<g1_affine>(out, pk.h);
  write_count(out, pk.l.size(), "l");
  write_points<g1_affine>(out, pk.l);
  write_count(out, shape.a_count(), "a");
  write_points<g1_affine>(out, pk.a, &shape.a_density);
  write_count(out, shape.b_count(), "b_g1");
  write_points<g1_affine>(out, pk.b_g1, &shape.b_density);
  write_count(out, shape.b_count(), "b_g2");
  write_points<g2_affine>(out, pk.b_g2, &shape.b_density);
  out.commit();
}

namespace {

// One proving query: its count checked, then its points, each tested for the subgroup as it is
// decoded (`check`) or, with `bulk`, decoded untested and then tested all at once.
template <class Point>
std::vector<Point> read_query(byte_reader& in, const char* name, std::size_t expected, bool allow_identity,
                              field::subgroup_check check, const bulk_subgroup_test* bulk) {
  const std::size_t count = read_count(in, name);
  check_count(in, name, count, expected);
  if (bulk == nullptr) return read_points<Point>(in, name, count, allow_identity, check);
  std::vector<Point> points = read_points<Point>(in, name, count, allow_identity, field::subgroup_check::skip);
  if (const auto outside = bulk->first_outside(std::span<const Point>(points)))
    throw key_file_error(in.name(), name, outside, make_error_code(field::decode_error::not_in_subgroup).message());
  return points;
}

proving_key read_params_with(const std::filesystem::path& path, const key_shape& shape, field::subgroup_check check,
                             const bulk_subgroup_test* bulk) {
  if (shape.a_density.size() != shape.num_variables() || shape.b_density.size() != shape.num_variables())
    throw std::invalid_argument("read_params: the shape's densities do not cover its variables");
  if (check == field::subgroup_check::skip) {
    COPROVE_LOG(warning, "groth16") << "reading " << path.string()
                                    << " without the subgroup checks of its proving queries (h, l, a, b_g1, b_g2): "
                                       "only for a file this process wrote or checked before";
  }
  file_reader in(path, "params file");
  proving_key pk;
  pk.vk = read_vk_from(in, shape.num_inputs);
  pk.h = read_query<g1_affine>(in, "h", shape.h_count(), false, check, bulk);
  pk.l = read_query<g1_affine>(in, "l", shape.num_aux, true, check, bulk);
  pk.a = expand(read_query<g1_affine>(in, "a", shape.a_count(), false, check, bulk), shape.a_density);
  pk.b_g1 = expand(read_query<g1_affine>(in, "b_g1", shape.b_count(), false, check, bulk), shape.b_density);
  pk.b_g2 = expand(read_query<g2_affine>(in, "b_g2", shape.b_count(), false, check, bulk), shape.b_density);
  in.expect_end();
  return pk;
}

}  // namespace

proving_key read_params(const std::filesystem::path& path, const key_shape& shape, field::subgroup_check check) {
  return read_params_with(path, shape, check, nullptr);
}

proving_key read_params(const std::filesystem::path& path, const key_shape& shape, const bulk_subgroup_test& bulk) {
  if (!bulk.g1 || !bulk.g2) throw std::invalid_argument("read_params: the bulk subgroup test needs both groups' tests");
  const auto start = std::chrono::steady_clock::now();
  proving_key pk = read_params_with(path, shape, field::subgroup_check::check, &bulk);
  COPROVE_LOG(info, "groth16") << "read " << path.string() << " in "
                               << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                               << " s, the proving queries' subgroup tests on " << bulk.where;
  return pk;
}

boost::json::object verifying_key_to_snarkjs_json(const verifying_key& vk) {
  boost::json::object out;
  out["protocol"] = "groth16";
  out["curve"] = "bls12381";
  out["nPublic"] = vk.num_public_inputs();
  out["vk_alpha_1"] = field::to_snarkjs_json(vk.alpha_g1);
  out["vk_beta_2"] = field::to_snarkjs_json(vk.beta_g2);
  out["vk_gamma_2"] = field::to_snarkjs_json(vk.gamma_g2);
  out["vk_delta_2"] = field::to_snarkjs_json(vk.delta_g2);
  out["IC"] = decimal(vk.ic);
  return out;
}

void write_verifying_key_json(const verifying_key& vk, const std::filesystem::path& path) {
  write_text(path, boost::json::serialize(verifying_key_to_snarkjs_json(vk)) + "\n");
}

verifying_key read_verifying_key_json(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::string text;
  try {
    text = runtime::read_input_text(path, runtime::input_limits::small_json_bytes, "verifying key (JSON)");
  } catch (const runtime::input_file_error& e) {
    throw key_file_error(name, "", std::nullopt, e.why());
  }
  boost::system::error_code ec;
  const boost::json::value root = boost::json::parse(text, ec);
  if (ec || !root.is_object()) throw key_file_error(name, "", std::nullopt, "not a JSON object");
  const auto& object = root.as_object();
  const auto field_of = [&](const char* key) -> const boost::json::value& {
    const auto* v = object.if_contains(key);
    if (v == nullptr) throw key_file_error(name, key, std::nullopt, "missing");
    return *v;
  };
  const auto is_text = [](const boost::json::value& v, std::string_view text) {
    return v.is_string() && v.as_string() == text;
  };
  if (!is_text(field_of("protocol"), "groth16") || !is_text(field_of("curve"), "bls12381"))
    throw key_file_error(name, "", std::nullopt, "not a groth16 bls12381 key");
  const auto g1 = [&](const boost::json::value& v, const char* section, std::optional<std::size_t> index) {
    const auto r = field::g1_from_snarkjs_json(v);
    if (!r.ok()) throw key_file_error(name, section, index, r.error.message());
    return r.point;
  };
  const auto g2 = [&](const char* section) {
    const auto r = field::g2_from_snarkjs_json(field_of(section));
    if (!r.ok()) throw key_file_error(name, section, std::nullopt, r.error.message());
    return r.point;
  };
  verifying_key vk;
  vk.alpha_g1 = g1(field_of("vk_alpha_1"), "vk_alpha_1", std::nullopt);
  vk.beta_g2 = g2("vk_beta_2");
  vk.gamma_g2 = g2("vk_gamma_2");
  vk.delta_g2 = g2("vk_delta_2");
  // beta_g1 and delta_g1 are not in snarkjs's file; verification needs neither.
  vk.beta_g1 = field::g1_affine::identity();
  vk.delta_g1 = field::g1_affine::identity();
  const auto& ic = field_of("IC");
  if (!ic.is_array() || ic.as_array().empty()) throw key_file_error(name, "IC", std::nullopt, "not a non-empty array");
  for (std::size_t i = 0; i < ic.as_array().size(); ++i) vk.ic.push_back(g1(ic.as_array()[i], "IC", i));
  const auto& n_public = field_of("nPublic");
  if (!n_public.is_number() || n_public.to_number<std::size_t>() + 1 != vk.ic.size())
    throw key_file_error(name, "nPublic", std::nullopt, "does not match the IC count");
  check_verifying_key_named(vk, name, snarkjs_name);
  return vk;
}

}  // namespace coprove::groth16
