// A bench's command line, declared once: each flag with the variable it sets, the name of its value
// and its help line. parse() fills the variables, prints the help for --help, and refuses a flag it
// does not know or a value out of its range by naming the flag, the value and what was expected.
// Every bench parses its argv through this, so that flags, lists (`--g1 24,26`), ranges and help read
// alike across the benches.
#pragma once

#include <algorithm>
#include <charconv>
#include <concepts>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace coprove::bench {

/// A command line that cannot be parsed: the message names the flag and what it expected.
class usage_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {

/// The items of a comma-separated list; an empty item is refused.
inline std::vector<std::string> split_list(const std::string& flag, const std::string& text) {
  std::vector<std::string> items;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = text.find(',', at);
    items.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (items.back().empty()) throw usage_error(flag + ": an empty item in the list '" + text + "'");
    if (comma == std::string::npos) return items;
    at = comma + 1;
  }
}

/// text as a T in [lo, hi], the whole of it; usage_error naming flag otherwise.
template <class T>
T parse_number(const std::string& flag, const std::string& text, T lo, T hi) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  std::ostringstream range;
  range << lo << ".." << hi;
  if (text.empty() || ec != std::errc{} || ptr != end)
    throw usage_error(flag + ": expected a number in " + range.str() + ", got '" + text + "'");
  if (value < lo || value > hi) throw usage_error(flag + ": " + text + " is outside " + range.str());
  return value;
}

}  // namespace detail

/// The comma-separated numbers of text, each in [lo, hi]; usage_error naming flag otherwise.
template <std::integral T>
std::vector<T> parse_list(const std::string& flag, const std::string& text, T lo, T hi) {
  std::vector<T> values;
  for (const std::string& item : detail::split_list(flag, text)) values.push_back(detail::parse_number(flag, item, lo, hi));
  return values;
}

/// The comma-separated items of text (none empty); usage_error naming flag otherwise.
inline std::vector<std::string> parse_items(const std::string& flag, const std::string& text) {
  return detail::split_list(flag, text);
}

/// The flags of one bench. Declare each with the variable it sets (its default is the variable's
/// value before parse), then call parse(argc, argv).
class options {
 public:
  /// program: the executable's name, which messages start with; summary: what the bench measures,
  /// one line that --help prints first.
  options(std::string program, std::string summary) : program_(std::move(program)), summary_(std::move(summary)) {}

  /// A flag without a value that sets target to true.
  options& flag(const std::string& name, bool& target, std::string help) {
    return add(name, "", std::move(help), [&target](const std::string&) { target = true; });
  }
  /// A flag without a value that runs apply (e.g. one that clears a setting, or sets several).
  options& flag(const std::string& name, std::function<void()> apply, std::string help) {
    return add(name, "", std::move(help), [apply = std::move(apply)](const std::string&) { apply(); });
  }
  /// A flag whose value is any text.
  options& text(const std::string& name, std::string& target, std::string value_name, std::string help) {
    return add(name, std::move(value_name), std::move(help), [&target](const std::string& v) { target = v; });
  }
  /// A flag whose value is a number in [lo, hi].
  template <class T>
    requires std::integral<T> || std::floating_point<T>
  options& number(const std::string& name, T& target, std::string value_name, std::string help,
                  T lo = std::numeric_limits<T>::lowest(), T hi = std::numeric_limits<T>::max()) {
    return add(name, std::move(value_name), std::move(help),
               [&target, name, lo, hi](const std::string& v) { target = detail::parse_number(name, v, lo, hi); });
  }
  /// A flag whose value is a comma-separated list of numbers, each in [lo, hi]; it replaces the
  /// default list.
  template <std::integral T>
  options& list(const std::string& name, std::vector<T>& target, std::string value_name, std::string help, T lo,
                T hi) {
    return add(name, std::move(value_name), std::move(help),
               [&target, name, lo, hi](const std::string& v) { target = parse_list(name, v, lo, hi); });
  }
  /// A flag whose value is one of allowed.
  options& choice(const std::string& name, std::string& target, std::vector<std::string> allowed, std::string help) {
    std::string value_name;
    for (const std::string& a : allowed) value_name += (value_name.empty() ? "" : "|") + a;
    return add(name, value_name, std::move(help), [&target, name, allowed, value_name](const std::string& v) {
      if (!contains(allowed, v)) throw usage_error(name + ": expected " + value_name + ", got '" + v + "'");
      target = v;
    });
  }
  /// A flag whose value is a comma-separated list of names, each one of allowed; it replaces the
  /// default list.
  options& names(const std::string& name, std::vector<std::string>& target, const std::vector<std::string>& allowed,
                 std::string help) {
    std::string value_name;
    for (const std::string& a : allowed) value_name += (value_name.empty() ? "" : ",") + a;
    return add(name, value_name, std::move(help), [&target, name, allowed, value_name](const std::string& v) {
      std::vector<std::string> values = detail::split_list(name, v);
      for (const std::string& item : values)
        if (!contains(allowed, item)) throw usage_error(name + ": expected items of " + value_name + ", got '" + item + "'");
      target = std::move(values);
    });
  }
  /// A flag whose value apply reads (and may refuse by throwing std::invalid_argument, whose message
  /// is then prefixed with the flag's name). A flag given twice calls apply twice, so apply may
  /// collect repeated values.
  options& value(const std::string& name, std::string value_name, std::string help,
                 std::function<void(const std::string&)> apply) {
    return add(name, std::move(value_name), std::move(help), std::move(apply));
  }
  /// A line of help printed after the flags (what a value means, what a default depends on).
  options& note(std::string line) {
    notes_.push_back(std::move(line));
    return *this;
  }

  /// Applies args (without the program's name) in order. Returns false when --help or -h is among
  /// them (nothing is applied then); throws usage_error for an unknown flag, a missing value or a
  /// value its flag refuses.
  bool apply(const std::vector<std::string>& args) const {
    for (const std::string& a : args)
      if (a == "--help" || a == "-h") return false;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto found = flags_.find(args[i]);
      if (found == flags_.end()) throw usage_error("unknown flag '" + args[i] + "'");
      const entry& e = found->second;
      std::string v;
      if (!e.value_name.empty()) {
        if (i + 1 >= args.size()) throw usage_error(args[i] + ": needs a value (" + e.value_name + ")");
        v = args[++i];
      }
      try {
        e.apply(v);
      } catch (const usage_error&) {
        throw;
      } catch (const std::exception& ex) {
        throw usage_error(args[i - (e.value_name.empty() ? 0 : 1)] + ": " + ex.what());
      }
    }
    return true;
  }

  /// Parses argv: --help prints the help on stdout and exits with status 0; a command line apply()
  /// refuses is said on stderr, with the usage line, and exits with status 2.
  void parse(int argc, char** argv) const {
    try {
      if (!apply(std::vector<std::string>(argv + 1, argv + argc))) {
        std::cout << help();
        std::exit(0);
      }
    } catch (const usage_error& e) {
      refuse(e.what());
    }
  }

  /// Refuses a command line that parse() accepted flag by flag (flags that contradict each other):
  /// says why on stderr, with the usage line, and exits with status 2.
  [[noreturn]] void refuse(const std::string& why) const {
    std::cerr << program_ << ": " << why << "\n" << usage() << "(" << program_ << " --help lists the flags)\n";
    std::exit(2);
  }

  /// "usage: PROGRAM [--flag VALUE] ...", wrapped at 100 columns.
  std::string usage() const {
    std::string out = "usage: " + program_, line = out;
    const std::string indent(program_.size() + 7, ' ');
    for (const std::string& name : order_) {
      const entry& e = flags_.at(name);
      const std::string item = " [" + name + (e.value_name.empty() ? "" : " " + e.value_name) + "]";
      if (line.size() + item.size() > 100) {
        out += "\n" + indent;
        line = indent;
      }
      out += item;
      line += item;
    }
    return out + "\n";
  }

  /// The summary, the usage line, each flag with its help, then the notes.
  std::string help() const {
    std::string out = program_ + ": " + summary_ + "\n" + usage();
    for (const std::string& name : order_) {
      const entry& e = flags_.at(name);
      std::string left = "  " + name + (e.value_name.empty() ? "" : " " + e.value_name);
      left.resize(std::max<std::size_t>(left.size() + 2, 32), ' ');
      out += left + e.help + "\n";
    }
    for (const std::string& n : notes_) out += n + "\n";
    return out;
  }

 private:
  struct entry {
    std::string value_name;  // empty: the flag takes no value
    std::string help;
    std::function<void(const std::string&)> apply;
  };

  static bool contains(const std::vector<std::string>& v, const std::string& s) {
    for (const std::string& x : v)
      if (x == s) return true;
    return false;
  }

  options& add(const std::string& name, std::string value_name, std::string help,
               std::function<void(const std::string&)> apply) {
    if (name.rfind("--", 0) != 0 || flags_.contains(name) || name == "--help")
      throw std::logic_error(program_ + ": flag '" + name + "' declared twice or not starting with --");
    flags_.emplace(name, entry{std::move(value_name), std::move(help), std::move(apply)});
    order_.push_back(name);
    return *this;
  }

  std::string program_;
  std::string summary_;
  std::map<std::string, entry> flags_;
  std::vector<std::string> order_;
  std::vector<std::string> notes_;
};

}  // namespace coprove::bench
