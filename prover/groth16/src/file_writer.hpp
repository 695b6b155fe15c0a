// Writing key files: a sink of bytes (a buffer, or a temporary file renamed into place once
// complete, so a reader never sees half a key) and the chunked encoding of point sections on all
// cores, shared by the bellman files (key_files.cpp) and snarkjs's zkey (zkey_writer.cpp).
#pragma once

#include <coprove/field/parallel.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/keys.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

namespace coprove::groth16::detail {

/// Points encoded a chunk at a time: the most a section adds to memory while it is written.
inline constexpr std::size_t points_per_chunk = std::size_t{1} << 15;

/// A sink of bytes.
class byte_writer {
 public:
  virtual ~byte_writer() = default;
  virtual void write(std::span<const std::uint8_t> bytes) = 0;
};

class buffer_writer final : public byte_writer {
 public:
  void write(std::span<const std::uint8_t> bytes) override { out.insert(out.end(), bytes.begin(), bytes.end()); }
  std::vector<std::uint8_t> out;
};

/// Writes PATH.tmp and renames it to PATH on commit(); without commit() (an exception on the
/// way) the temporary file is removed. Errors are key_file_error naming PATH.
class file_writer final : public byte_writer {
 public:
  explicit file_writer(const std::filesystem::path& path)
      : path_(path), temporary_(path.string() + ".tmp"), out_(temporary_, std::ios::binary | std::ios::trunc) {
    if (!out_) throw key_file_error(path_.string(), "", std::nullopt, "cannot open " + temporary_.string() + " for writing");
  }
  ~file_writer() override {
    if (!committed_) {
      out_.close();
      std::error_code ignored;
      std::filesystem::remove(temporary_, ignored);
    }
  }
  file_writer(const file_writer&) = delete;
  file_writer& operator=(const file_writer&) = delete;

  void write(std::span<const std::uint8_t> bytes) override {
    out_.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out_) throw key_file_error(path_.string(), "", std::nullopt, "write error");
  }
  void commit() {
    out_.close();
    if (!out_) throw key_file_error(path_.string(), "", std::nullopt, "write error on close");
    std::error_code ec;
    std::filesystem::rename(temporary_, path_, ec);
    if (ec) throw key_file_error(path_.string(), "", std::nullopt, "cannot rename into place: " + ec.message());
    committed_ = true;
  }

 private:
  std::filesystem::path path_, temporary_;
  std::ofstream out_;
  bool committed_ = false;
};

/// Calls f on alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1 and delta_g2: the order in which
/// both bellman's VerifyingKey and a zkey's header hold them.
template <class F>
void for_each_vk_point(const verifying_key& vk, F&& f) {
  f(vk.alpha_g1);
  f(vk.beta_g1);
  f(vk.beta_g2);
  f(vk.gamma_g2);
  f(vk.delta_g1);
  f(vk.delta_g2);
}

/// Writes `count` records of `size` bytes, record i encoded by encode(i, bytes) on all cores,
/// one chunk of points_per_chunk records at a time.
template <class Encode>
void write_records(byte_writer& out, std::size_t count, std::size_t size, const Encode& encode) {
  std::vector<std::uint8_t> buffer;
  for (std::size_t begin = 0; begin < count; begin += points_per_chunk) {
    const std::size_t end = std::min(count, begin + points_per_chunk);
    buffer.resize((end - begin) * size);
    field::parallel_for(begin, end, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i)
        encode(i, std::span<std::uint8_t>(buffer).subspan((i - begin) * size, size));
    }, 256);
    out.write(buffer);
  }
}

}  // namespace coprove::groth16::detail
