// Process metrics: counters, gauges and log-linear histograms in a registry that renders the
// Prometheus text format. Recording is lock-free (relaxed atomics); only creating a metric and
// rendering take the registry lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace coprove::runtime {

using labels = std::vector<std::pair<std::string, std::string>>;

/// A monotonically increasing count.
class counter {
 public:
  counter() = default;
  counter(const counter&) = delete;
  counter& operator=(const counter&) = delete;

  /// Adds n.
  void inc(std::uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  /// The current count.
  std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

/// A value that goes up and down.
class gauge {
 public:
  gauge() = default;
  gauge(const gauge&) = delete;
  gauge& operator=(const gauge&) = delete;

  /// Sets the value.
  void set(double v) noexcept { value_.store(v, std::memory_order_relaxed); }
  /// Adds v (negative to subtract).
  void add(double v) noexcept;
  /// Raises the value to v if v is larger (a high-water mark).
  void set_max(double v) noexcept;
  /// The current value.
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

/// A distribution of non-negative values in log-linear buckets: every power-of-two octave from
/// 2^-16 to 2^64 is split into 128 equal buckets, so a percentile is within 0.4% of the exact
/// sample (values below 2^-16, including zero, share one bucket; NaN is ignored).
class histogram {
 public:
  static constexpr int sub_bucket_bits = 7;
  static constexpr std::size_t sub_buckets = std::size_t{1} << sub_bucket_bits;
  static constexpr int min_exponent = -16;
  static constexpr int max_exponent = 64;  // exclusive
  static constexpr std::size_t bucket_count =
      static_cast<std::size_t>(max_exponent - min_exponent) * sub_buckets + 2;

  histogram();
  histogram(const histogram&) = delete;
  histogram& operator=(const histogram&) = delete;

  /// Records one value (lock-free).
  void record(double v) noexcept;
  /// Number of values recorded.
  std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
  /// Sum of the values recorded.
  double sum() const noexcept { return sum_.load(std::memory_order_relaxed); }
  /// Smallest value recorded (0 when empty).
  double min() const noexcept;
  /// Largest value recorded (0 when empty).
  double max() const noexcept;
  /// Mean of the values recorded (0 when empty).
  double mean() const noexcept;
  /// The q-quantile (q in [0, 1], nearest rank), 0 when empty; throws std::invalid_argument for
  /// q outside [0, 1].
  double percentile(double q) const;
  /// Forgets every value (not atomic with respect to concurrent record calls).
  void reset() noexcept;

 private:
  static std::size_t bucket_of(double v) noexcept;
  static double bucket_value(std::size_t index) noexcept;

  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;
  std::atomic<std::uint64_t> count_{0};
  std::atomic<double> sum_{0.0};
  std::atomic<double> min_;
  std::atomic<double> max_;
};

/// Owns named metrics and renders them as Prometheus text. References returned by get_* stay
/// valid for the registry's lifetime; asking again with the same name and labels returns the same
/// metric. Names must match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*;
/// a bad name, or reusing a name for another metric type, throws std::invalid_argument.
class registry {
 public:
  /// The process-wide registry.
  static registry& global();

  registry();
  ~registry();
  registry(const registry&) = delete;
  registry& operator=(const registry&) = delete;

  counter& get_counter(std::string name, std::string help, labels l = {});
  gauge& get_gauge(std::string name, std::string help, labels l = {});
  /// Rendered as a Prometheus summary (quantiles 0.5, 0.9, 0.99, 0.999, _sum and _count).
  histogram& get_histogram(std::string name, std::string help, labels l = {});

  /// The Prometheus text exposition format (version 0.0.4) of every metric.
  std::string prometheus_text() const;

 private:
  enum class kind { counter, gauge, histogram };
  struct entry {
    labels label_set;
    std::unique_ptr<counter> c;
    std::unique_ptr<gauge> g;
    std::unique_ptr<histogram> h;
  };
  struct family {
    kind type;
    std::string help;
    std::vector<std::unique_ptr<entry>> entries;
  };
  entry& find_or_add(std::string& name, std::string& help, labels& l, kind k);

  mutable std::mutex mutex_;
  std::map<std::string, family> families_;
};

}  // namespace coprove::runtime
