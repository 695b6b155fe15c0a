// Counters, gauges, log-linear histograms and the registry's Prometheus text exposition.
#include "coprove/runtime/metrics.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace coprove::runtime {
namespace {

void atomic_min(std::atomic<double>& target, double v) noexcept {
  double current = target.load(std::memory_order_relaxed);
  while (v < current && !target.compare_exchange_weak(current, v, std::memory_order_relaxed)) {
  }
}

void atomic_max(std::atomic<double>& target, double v) noexcept {
  double current = target.load(std::memory_order_relaxed);
  while (v > current && !target.compare_exchange_weak(current, v, std::memory_order_relaxed)) {
  }
}

void append_number(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, end);
  }
}

void append_number(std::string& out, std::uint64_t v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

bool valid_metric_name(const std::string& name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    const bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit))) return false;
  }
  return true;
}

bool valid_label_name(const std::string& name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit))) return false;
  }
  return true;
}

void append_escaped(std::string& out, const std::string& text, bool quote) {
  for (const char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (quote && c == '"') out += "\\\"";
    else out += c;
  }
}

// name{a="x",b="y"[,extra]} (no braces when there is nothing to put in them)
void append_series(std::string& out, const std::string& name, const labels& label_set,
                   const std::string& extra = {}) {
  out += name;
  if (label_set.empty() && extra.empty()) return;
  out += '{';
  bool first = true;
  for (const auto& [key, value] : label_set) {
    if (!first) out += ',';
    first = false;
    out += key;
    out += "=\"";
    append_escaped(out, value, true);
    out += '"';
  }
  if (!extra.empty()) {
    if (!first) out += ',';
    out += extra;
  }
  out += '}';
}

}  // namespace

void gauge::add(double v) noexcept { value_.fetch_add(v, std::memory_order_relaxed); }

void gauge::set_max(double v) noexcept { atomic_max(value_, v); }

histogram::histogram()
    : buckets_(new std::atomic<std::uint64_t>[bucket_count]),
      min_(std::numeric_limits<double>::infinity()),
      max_(-std::numeric_limits<double>::infinity()) {
  for (std::size_t i = 0; i < bucket_count; ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

std::size_t histogram::bucket_of(double v) noexcept {
  if (!(v > 0)) return 0;
  const auto bits = std::bit_cast<std::uint64_t>(v);
  const int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  if (exponent < min_exponent) return 0;
  if (exponent >= max_exponent) return bucket_count - 1;
  const auto sub = static_cast<std::size_t>((bits >> (52 - sub_bucket_bits)) & (sub_buckets - 1));
  return 1 + static_cast<std::size_t>(exponent - min_exponent) * sub_buckets + sub;
}

double histogram::bucket_value(std::size_t index) noexcept {
  if (index == 0) return 0.0;
  if (index == bucket_count - 1) return std::ldexp(1.0, max_exponent);
  const std::size_t octave = (index - 1) / sub_buckets;
  const std::size_t sub = (index - 1) % sub_buckets;
  const int exponent = static_cast<int>(octave) + min_exponent;
  const double mid = 1.0 + (static_cast<double>(sub) + 0.5) / static_cast<double>(sub_buckets);
  return std::ldexp(mid, exponent);
}

void histogram::record(double v) noexcept {
  if (std::isnan(v)) return;
  buckets_[bucket_of(v)].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
  atomic_min(min_, v);
  atomic_max(max_, v);
  count_.fetch_add(1, std::memory_order_relaxed);
}

double histogram::min() const noexcept { return count() == 0 ? 0.0 : min_.load(std::memory_order_relaxed); }
double histogram::max() const noexcept { return count() == 0 ? 0.0 : max_.load(std::memory_order_relaxed); }
double histogram::mean() const noexcept {
  const std::uint64_t n = count();
  return n == 0 ? 0.0 : sum() / static_cast<double>(n);
}

double histogram::percentile(double q) const {
  if (!(q >= 0.0 && q <= 1.0)) throw std::invalid_argument("histogram::percentile: q must be in [0, 1]");
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < bucket_count; ++i) total += buckets_[i].load(std::memory_order_relaxed);
  if (total == 0) return 0.0;
  const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total))));
  const double lo = min_.load(std::memory_order_relaxed);
  const double hi = max_.load(std::memory_order_relaxed);
  if (rank <= 1) return lo;       // the extremes are known exactly
  if (rank >= total) return hi;
  std::uint64_t seen = 0;
  std::size_t index = 0;
  for (; index < bucket_count; ++index) {
    seen += buckets_[index].load(std::memory_order_relaxed);
    if (seen >= rank) break;
  }
  return std::clamp(bucket_value(std::min(index, bucket_count - 1)), lo, std::max(lo, hi));
}

void histogram::reset() noexcept {
  for (std::size_t i = 0; i < bucket_count; ++i) buckets_[i].store(0, std::memory_order_relaxed);
  count_.store(0, std::memory_order_relaxed);
  sum_.store(0.0, std::memory_order_relaxed);
  min_.store(std::numeric_limits<double>::infinity(), std::memory_order_relaxed);
  max_.store(-std::numeric_limits<double>::infinity(), std::memory_order_relaxed);
}

registry& registry::global() {
  static registry* instance = new registry();  // never destroyed: metrics may be touched at exit
  return *instance;
}

registry::registry() = default;
registry::~registry() = default;

registry::entry& registry::find_or_add(std::string& name, std::string& help, labels& l, kind k) {
  if (!valid_metric_name(name)) {
    throw std::invalid_argument("metric name '" + name + "' does not match [a-zA-Z_:][a-zA-Z0-9_:]*");
  }
  for (const auto& [key, value] : l) {
    if (!valid_label_name(key)) {
      throw std::invalid_argument("metric '" + name + "': label name '" + key +
                                  "' does not match [a-zA-Z_][a-zA-Z0-9_]* (or starts with __)");
    }
  }
  std::lock_guard lock(mutex_);
  auto it = families_.find(name);
  if (it == families_.end()) {
    it = families_.emplace(name, family{k, std::move(help), {}}).first;
  } else if (it->second.type != k) {
    throw std::invalid_argument("metric '" + name + "' already exists with another type");
  }
  for (auto& e : it->second.entries) {
    if (e->label_set == l) return *e;
  }
  auto e = std::make_unique<entry>();
  e->label_set = std::move(l);
  switch (k) {
    case kind::counter: e->c = std::make_unique<counter>(); break;
    case kind::gauge: e->g = std::make_unique<gauge>(); break;
    case kind::histogram: e->h = std::make_unique<histogram>(); break;
  }
  it->second.entries.push_back(std::move(e));
  return *it->second.entries.back();
}

counter& registry::get_counter(std::string name, std::string help, labels l) {
  return *find_or_add(name, help, l, kind::counter).c;
}

gauge& registry::get_gauge(std::string name, std::string help, labels l) {
  return *find_or_add(name, help, l, kind::gauge).g;
}

histogram& registry::get_histogram(std::string name, std::string help, labels l) {
  return *find_or_add(name, help, l, kind::histogram).h;
}

std::string registry::prometheus_text() const {
  static constexpr double quantiles[] = {0.5, 0.9, 0.99, 0.999};
  std::string out;
  std::lock_guard lock(mutex_);
  for (const auto& [name, fam] : families_) {
    out += "# HELP ";
    out += name;
    out += ' ';
    append_escaped(out, fam.help, false);
    out += "\n# TYPE ";
    out += name;
    out += fam.type == kind::counter ? " counter\n" : fam.type == kind::gauge ? " gauge\n" : " summary\n";
    for (const auto& e : fam.entries) {
      switch (fam.type) {
        case kind::counter:
          append_series(out, name, e->label_set);
          out += ' ';
          append_number(out, e->c->value());
          out += '\n';
          break;
        case kind::gauge:
          append_series(out, name, e->label_set);
          out += ' ';
          append_number(out, e->g->value());
          out += '\n';
          break;
        case kind::histogram:
          for (const double q : quantiles) {
            std::string extra = "quantile=\"";
            append_number(extra, q);
            extra += '"';
            append_series(out, name, e->label_set, extra);
            out += ' ';
            append_number(out, e->h->percentile(q));
            out += '\n';
          }
          append_series(out, name + "_sum", e->label_set);
          out += ' ';
          append_number(out, e->h->sum());
          out += '\n';
          append_series(out, name + "_count", e->label_set);
          out += ' ';
          append_number(out, e->h->count());
          out += '\n';
          break;
      }
    }
  }
  return out;
}

}  // namespace coprove::runtime
