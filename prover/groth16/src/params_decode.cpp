// Reading params once with its digest (see params_decode.hpp). Two buffers take turns: while the
// pool decodes the points of one, a thread of its own reads the next chunk of the file into the
// other and hashes it, so a load costs about the slowest of reading, hashing and decoding.
#include <coprove/groth16/params_decode.hpp>

#include <coprove/field/encoding.hpp>
#include <coprove/field/parallel.hpp>
#include <coprove/runtime/input_file.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <future>
#include <mutex>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

namespace coprove::groth16 {

namespace {

using field::g1_affine;
using field::g2_affine;

/// The bytes read (and hashed) at a time; two such buffers are held during a load. A multiple of
/// leaf_bytes.
constexpr std::size_t chunk_bytes = std::size_t{8} << 20;
static_assert(chunk_bytes % leaf_bytes == 0);
/// bellman's VerifyingKey before its ic points: six points and the ic count.
constexpr std::size_t vk_head_bytes = 3 * 96 + 3 * 192 + 4;

std::size_t big_endian_u32(std::span<const std::uint8_t> b) {
  return (std::size_t{b[0]} << 24) | (std::size_t{b[1]} << 16) | (std::size_t{b[2]} << 8) | std::size_t{b[3]};
}

/// A regular file read front to back in chunks, each hashed as it arrives, one chunk ahead of
/// the reader of the chunks.
class hashed_chunks {
 public:
  hashed_chunks(const std::filesystem::path& path, bool with_sha256) : name_(path.string()), with_sha256_(with_sha256) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw key_file_error(name_, "", std::nullopt, std::string("cannot open for reading: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw key_file_error(name_, "", std::nullopt, "is not a regular file");
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
    if (size_ > runtime::input_limits::binary_file_bytes) {
      ::close(fd_);
      throw key_file_error(name_, "", std::nullopt,
                           "is " + runtime::describe_bytes(size_) + ", more than the limit of " +
                               runtime::describe_bytes(runtime::input_limits::binary_file_bytes) + " for a key file");
    }
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  hashed_chunks(const hashed_chunks&) = delete;
  hashed_chunks& operator=(const hashed_chunks&) = delete;
  ~hashed_chunks() {
    if (pending_.valid()) pending_.wait();
    ::close(fd_);
  }

  const std::string& name() const noexcept { return name_; }
  std::uint64_t size() const noexcept { return size_; }

  /// The next chunk (empty at the end of the file), hashed. The previous chunk's bytes are
  /// overwritten from here on: take what is needed of them first.
  std::span<const std::uint8_t> next() {
    if (!started_) {
      started_ = true;
      start(0);
    }
    if (!pending_.valid()) return {};  // the last chunk was taken
    pending_.get();
    const int current = pending_index_;
    if (read_ < size_) start(1 - current);
    return std::span<const std::uint8_t>(buffers_[current].data(), filled_[current]);
  }

  /// The SHA-256 of every byte (zero without with_sha256), once every chunk has been taken;
  /// refuses a file that grew.
  field::sha256::digest finish() {
    std::uint8_t probe = 0;
    const ssize_t got = ::pread(fd_, &probe, 1, static_cast<off_t>(size_));
    if (got != 0) throw key_file_error(name_, "", std::nullopt, "changed while it was read (it grew past " + std::to_string(size_) + " bytes)");
    return with_sha256_ ? hasher_.finish() : field::sha256::digest{};
  }

 private:
  void start(int which) {
    pending_index_ = which;
    pending_ = std::async(std::launch::async, [this, which] {
      auto& buffer = buffers_[which];
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes, size_ - read_));
      buffer.resize(want);
      std::size_t have = 0;
      while (have < want) {
        const ssize_t got = ::pread(fd_, buffer.data() + have, want - have, static_cast<off_t>(read_ + have));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) throw key_file_error(name_, "", std::nullopt, std::string("read error: ") + std::strerror(errno));
        if (got == 0) {
          throw key_file_error(name_, "", std::nullopt,
                               "changed while it was read (it ends at byte " + std::to_string(read_ + have) + " of " +
                                   std::to_string(size_) + ")");
        }
        have += static_cast<std::size_t>(got);
      }
      read_ += have;
      filled_[which] = have;
      if (with_sha256_) hasher_.update(std::as_bytes(std::span<const std::uint8_t>(buffer.data(), have)));
    });
  }

  std::string name_;
  bool with_sha256_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::uint64_t read_ = 0;  // bytes read (and hashed) by the finished and pending chunks
  std::array<std::vector<std::uint8_t>, 2> buffers_;
  std::array<std::size_t, 2> filled_{};
  std::future<void> pending_;
  int pending_index_ = 0;
  bool started_ = false;
  field::sha256 hasher_;
};

template <class Point>
constexpr std::size_t encoded_size = std::is_same_v<Point, g1_affine> ? 96 : 192;

template <class Point>
field::decode_result<Point> decode_unchecked_subgroup(std::span<const std::uint8_t> bytes) {
  if constexpr (std::is_same_v<Point, g1_affine>) {
    return field::decode_g1_uncompressed(bytes, field::subgroup_check::skip);
  } else {
    return field::decode_g2_uncompressed(bytes, field::subgroup_check::skip);
  }
}

/// The params file as a stream of counts and points over hashed_chunks.
class params_stream {
 public:
  params_stream(const std::filesystem::path& path, bool with_sha256) : chunks_(path, with_sha256) {}

  const std::string& name() const noexcept { return chunks_.name(); }
  std::uint64_t size() const noexcept { return chunks_.size(); }

  /// Copies the next out.size() bytes; truncated when the file ends first.
  void read(std::span<std::uint8_t> out, const std::string& section, std::optional<std::size_t> index) {
    std::size_t done = 0;
    while (done < out.size()) {
      if (at_ == chunk_.size() && !advance()) {
        throw key_file_error(name(), section, index,
                             "truncated: " + std::to_string(out.size()) + " bytes needed at offset " +
                                 std::to_string(offset_ - done) + ", " + std::to_string(done) + " left");
      }
      const std::size_t n = std::min(out.size() - done, chunk_.size() - at_);
      std::copy_n(chunk_.begin() + static_cast<std::ptrdiff_t>(at_), n, out.begin() + static_cast<std::ptrdiff_t>(done));
      at_ += n;
      offset_ += n;
      done += n;
    }
  }

  std::size_t count(const std::string& section) {
    std::array<std::uint8_t, 4> b{};
    read(b, section, std::nullopt);
    return big_endian_u32(b);
  }

  /// `count` points, decoded on all cores straight from the chunk that holds them; the first bad
  /// point (lowest index) is the one reported.
  template <class Point>
  std::vector<Point> points(const std::string& section, std::size_t count, bool allow_identity) {
    constexpr std::size_t size = encoded_size<Point>;
    // The bytes must be there before anything the size of the count is allocated.
    if (static_cast<std::uint64_t>(count) * size > chunks_.size() - offset_) {
      throw key_file_error(name(), section, std::nullopt,
                           "truncated: " + std::to_string(count) + " points need " + std::to_string(count * size) +
                               " bytes at offset " + std::to_string(offset_) + ", " +
                               std::to_string(chunks_.size() - offset_) + " left");
    }
    std::vector<Point> out(count);
    std::size_t next = 0;
    while (next < count) {
      const std::size_t whole = std::min(count - next, (chunk_.size() - at_) / size);
      if (whole == 0) {  // a point across two chunks (or none left in this one)
        std::array<std::uint8_t, size> bytes{};
        read(bytes, section, next);
        decode_range<Point>(bytes, out, next, 1, section, allow_identity);
        ++next;
        continue;
      }
      decode_range<Point>(chunk_.subspan(at_, whole * size), out, next, whole, section, allow_identity);
      at_ += whole * size;
      offset_ += whole * size;
      next += whole;
    }
    return out;
  }

  /// The digests of the whole file (see hashed_params); refuses trailing bytes.
  void end(hashed_params& out) {
    if (offset_ != chunks_.size()) {
      throw key_file_error(name(), "", std::nullopt,
                           std::to_string(chunks_.size() - offset_) + " trailing bytes after the last section (offset " +
                               std::to_string(offset_) + ")");
    }
    while (advance()) {
    }
    out.sha256 = chunks_.finish();
    std::vector<std::uint8_t> leaves(leaves_.size() * sizeof(field::sha256::digest));
    for (std::size_t i = 0; i < leaves_.size(); ++i)
      std::memcpy(leaves.data() + i * sizeof(field::sha256::digest), leaves_[i].data(), sizeof(field::sha256::digest));
    out.leaf_digest = field::sha256::hash(std::as_bytes(std::span<const std::uint8_t>(leaves)));
  }

 private:
  bool advance() {
    chunk_ = chunks_.next();
    at_ = 0;
    // The chunk's leaves, hashed on all cores (chunks hold whole leaves: only the file's last
    // leaf is short).
    const std::size_t first = leaves_.size(), count = (chunk_.size() + leaf_bytes - 1) / leaf_bytes;
    leaves_.resize(first + count);
    field::parallel_for(0, count, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) {
        const auto leaf = chunk_.subspan(i * leaf_bytes, std::min(leaf_bytes, chunk_.size() - i * leaf_bytes));
        leaves_[first + i] = field::sha256::hash(std::as_bytes(leaf));
      }
    });
    return !chunk_.empty();
  }

  template <class Point>
  void decode_range(std::span<const std::uint8_t> bytes, std::vector<Point>& out, std::size_t first, std::size_t n,
                    const std::string& section, bool allow_identity) {
    constexpr std::size_t size = encoded_size<Point>;
    std::mutex mutex;
    std::optional<std::size_t> bad_index;
    std::string bad_reason;
    field::parallel_for(0, n, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) {
        const auto decoded = decode_unchecked_subgroup<Point>(bytes.subspan(i * size, size));
        if (decoded.ok() && (allow_identity || !decoded.point.is_identity())) {
          out[first + i] = decoded.point;
          continue;
        }
        std::lock_guard lock(mutex);
        if (!bad_index || first + i < *bad_index) {
          bad_index = first + i;
          bad_reason = decoded.ok() ? "the point at infinity, which this section may not hold" : decoded.error.message();
        }
        return;
      }
    }, 256);
    if (bad_index) throw key_file_error(name(), section, bad_index, bad_reason);
  }

  hashed_chunks chunks_;
  std::vector<field::sha256::digest> leaves_;
  std::span<const std::uint8_t> chunk_;
  std::size_t at_ = 0;       // position in chunk_
  std::uint64_t offset_ = 0;  // position in the file
};

template <class Point>
std::vector<Point> read_query(params_stream& in, const char* section, std::size_t expected, bool allow_identity) {
  const std::size_t count = in.count(section);
  if (count != expected) {
    throw key_file_error(in.name(), section, std::nullopt,
                         "holds " + std::to_string(count) + " points, the circuit needs " + std::to_string(expected));
  }
  return in.points<Point>(section, count, allow_identity);
}

/// One point per variable: the stored points where the density bit is set, the identity elsewhere.
template <class Point>
std::vector<Point> expand(const std::vector<Point>& packed, const std::vector<bool>& density) {
  std::vector<Point> out(density.size());
  std::size_t next = 0;
  for (std::size_t i = 0; i < density.size(); ++i)
    if (density[i]) out[i] = packed[next++];
  return out;
}

/// The index among the stored points of variable `i` of a section stored packed by `density`.
std::size_t packed_index(const std::vector<bool>* density, std::size_t i) {
  if (density == nullptr) return i;
  return static_cast<std::size_t>(std::count(density->begin(), density->begin() + static_cast<std::ptrdiff_t>(i), true));
}

template <class Point>
void check_query(std::span<const Point> points, const std::vector<bool>* density, const char* section,
                 const std::string& file, const bulk_subgroup_test* bulk) {
  std::optional<std::size_t> outside;
  if (bulk != nullptr) {
    // The expanded points, identities of empty columns included (they pass any subgroup test),
    // so that a multi-GiB section is not copied to leave them out.
    outside = bulk->first_outside(points);
  } else {
    std::mutex mutex;
    field::parallel_for(0, points.size(), [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) {
        if (points[i].is_torsion_free()) continue;
        std::lock_guard lock(mutex);
        if (!outside || i < *outside) outside = i;
        return;
      }
    }, 64);
  }
  if (outside) outside = packed_index(density, *outside);
  if (outside) {
    throw key_file_error(file, section, outside, make_error_code(field::decode_error::not_in_subgroup).message());
  }
}

}  // namespace

hashed_params read_params_hashed(const std::filesystem::path& path, const key_shape& shape) {
  return read_params_hashed(path, params_counts{shape.num_inputs, shape.h_count(), shape.num_aux},
                            [&shape]() -> const key_shape& { return shape; }, true);
}

hashed_params read_params_hashed(const std::filesystem::path& path, const params_counts& early,
                                 const std::function<const key_shape&()>& shape_when_needed, bool with_sha256) {
  params_stream in(path, with_sha256);
  hashed_params out;
  out.bytes = in.size();

  // The verifying key is small: it is taken whole and decoded with every check.
  std::vector<std::uint8_t> vk(vk_head_bytes);
  in.read(vk, "", std::nullopt);
  const std::size_t ic = big_endian_u32(std::span<const std::uint8_t>(vk).last(4));
  if (ic == 0) throw key_file_error(in.name(), "ic", std::nullopt, "is empty (the constant one's point is missing)");
  if (ic != early.num_inputs) {
    throw key_file_error(in.name(), "ic", std::nullopt,
                         "holds " + std::to_string(ic) + " points, the circuit needs " + std::to_string(early.num_inputs));
  }
  vk.resize(vk_head_bytes + ic * 96);
  in.read(std::span<std::uint8_t>(vk).subspan(vk_head_bytes), "ic", std::nullopt);
  out.pk.vk = decode_verifying_key(vk, in.name(), early.num_inputs);

  out.pk.h = read_query<g1_affine>(in, "h", early.h_count, false);
  out.pk.l = read_query<g1_affine>(in, "l", early.num_aux, true);

  const key_shape& shape = shape_when_needed();
  if (shape.num_inputs != early.num_inputs || shape.h_count() != early.h_count || shape.num_aux != early.num_aux)
    throw std::invalid_argument("read_params_hashed: the shape's counts are not the early counts");
  if (shape.a_density.size() != shape.num_variables() || shape.b_density.size() != shape.num_variables())
    throw std::invalid_argument("read_params_hashed: the shape's densities do not cover its variables");
  out.pk.a = expand(read_query<g1_affine>(in, "a", shape.a_count(), false), shape.a_density);
  out.pk.b_g1 = expand(read_query<g1_affine>(in, "b_g1", shape.b_count(), false), shape.b_density);
  out.pk.b_g2 = expand(read_query<g2_affine>(in, "b_g2", shape.b_count(), false), shape.b_density);
  in.end(out);
  return out;
}

void check_params_subgroups(const proving_key& pk, const key_shape& shape, const std::string& file,
                            const bulk_subgroup_test* bulk) {
  if (bulk != nullptr && (!bulk->g1 || !bulk->g2))
    throw std::invalid_argument("check_params_subgroups: the bulk subgroup test needs both groups' tests");
  check_query<g1_affine>(pk.h, nullptr, "h", file, bulk);
  check_query<g1_affine>(pk.l, nullptr, "l", file, bulk);
  check_query<g1_affine>(pk.a, &shape.a_density, "a", file, bulk);
  check_query<g1_affine>(pk.b_g1, &shape.b_density, "b_g1", file, bulk);
  check_query<g2_affine>(pk.b_g2, &shape.b_density, "b_g2", file, bulk);
}

}  // namespace coprove::groth16
