// What a bench writes: the table a person reads and the same numbers as JSON. A report holds the
// rows as the JSON objects that are written (keys in the order each row gives them), and its
// columns say which of their values the table shows and how; write_json_file writes any JSON value
// (the benches whose output is one object rather than rows use it alone).
#pragma once

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace coprove::bench {

/// Writes value as one line of JSON to path; false (with a message naming program) when it cannot.
inline bool write_json_file(const std::string& path, const boost::json::value& value, const std::string& program) {
  std::ofstream out(path);
  out << boost::json::serialize(value) << "\n";
  if (!out) std::cerr << program << ": cannot write " << path << "\n";
  return static_cast<bool>(out);
}

/// Rows of results, printed as an aligned table and written as a JSON array of the same objects.
class report {
 public:
  /// One column of the printed table: the row's value at key, divided by scale, with precision
  /// digits after the point (-1: integers and text as they are, other numbers with 2). A row without
  /// the key, or with null there, shows "-".
  struct column {
    std::string header;
    std::string key;
    int precision = -1;
    double scale = 1;
  };

  explicit report(std::vector<column> columns) : columns_(std::move(columns)) {}

  /// Adds a row; it is written to JSON as given, keys the table does not show included.
  void add(boost::json::object row) { rows_.push_back(std::move(row)); }

  [[nodiscard]] const boost::json::array& rows() const { return rows_; }

  /// The table: a header line, then a line a row; text left-aligned, numbers right-aligned, each
  /// column as wide as its widest cell.
  void print(std::FILE* out = stdout) const {
    std::vector<std::vector<std::string>> cells;
    std::vector<bool> text(columns_.size(), true);
    for (const auto& row : rows_) {
      std::vector<std::string> line;
      for (std::size_t c = 0; c < columns_.size(); ++c) {
        const boost::json::value* v = row.as_object().if_contains(columns_[c].key);
        line.push_back(cell(v, columns_[c]));
        if (v && v->is_number()) text[c] = false;
      }
      cells.push_back(std::move(line));
    }
    std::vector<std::size_t> width(columns_.size());
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      width[c] = columns_[c].header.size();
      for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
    }
    const auto print_line = [&](const std::vector<std::string>& line) {
      std::string s;
      for (std::size_t c = 0; c < line.size(); ++c) {
        const std::string pad(width[c] - line[c].size(), ' ');
        s += (c == 0 ? "" : "  ") + (text[c] ? line[c] + pad : pad + line[c]);
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      std::fprintf(out, "%s\n", s.c_str());
    };
    std::vector<std::string> headers;
    for (const auto& col : columns_) headers.push_back(col.header);
    print_line(headers);
    for (const auto& line : cells) print_line(line);
    std::fflush(out);
  }

  /// Writes the rows as one line of JSON to path; false (with a message naming program) when it
  /// cannot.
  bool write_json(const std::string& path, const std::string& program) const {
    return write_json_file(path, rows_, program);
  }

 private:
  static std::string cell(const boost::json::value* v, const column& col) {
    if (!v || v->is_null()) return "-";
    if (v->is_string()) return std::string(v->as_string());
    if (v->is_bool()) return v->as_bool() ? "yes" : "no";
    if (col.precision < 0 && col.scale == 1 && (v->is_int64() || v->is_uint64()))
      return v->is_int64() ? std::to_string(v->as_int64()) : std::to_string(v->as_uint64());
    const double x = v->to_number<double>() / col.scale;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", col.precision < 0 ? 2 : col.precision, x);
    return buf;
  }

  std::vector<column> columns_;
  boost::json::array rows_;
};

}  // namespace coprove::bench
