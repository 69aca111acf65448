// Internal: a parsed JSON file with the source location of every key, so
// config errors can name file:line:col as well as the key path.
#pragma once

#include "kiln/result.hpp"
#include "kiln/runtime/config.hpp"

#include <boost/json/value.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::detail {

// Objects and arrays may nest this deep in a config file (or a manifest):
// far beyond any real config, and a bound on the parser's stack.
inline constexpr std::size_t kMaxJsonDepth = 64;

class JsonDocument {
 public:
  // Parses `text` (comments and trailing commas allowed). A syntax error, a
  // key given twice in one object, or nesting deeper than kMaxJsonDepth
  // becomes ErrorCode::Config "<file>:<line>:<col>: <what>". Time and memory
  // are linear in the size of the text.
  static Result<JsonDocument> parse(std::string_view text, const std::filesystem::path& file);

  const boost::json::value& root() const { return root_; }
  const std::filesystem::path& file() const { return file_; }

  // Where the key at `path` ("plugins.c.priority", "plugin_paths[2]") starts;
  // for a path never seen, the nearest enclosing one that was.
  SourceLocation location(std::string_view path) const;

  // Where each key and array element starts: a tree (each node holds only
  // its own key), so memory stays linear however long the keys are.
  struct Node {
    int line = 0;  // 0: the document itself (no position)
    int column = 0;
    std::uint32_t parent = 0;
    std::string key;                      // "" for array elements
    std::vector<std::uint32_t> elements;  // arrays: node of element i
  };
  struct ChildOrder {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      if (a.first != b.first) return a.first < b.first;
      return std::string_view(a.second) < std::string_view(b.second);
    }
  };
  using Children = std::map<std::pair<std::uint32_t, std::string>, std::uint32_t, ChildOrder>;
  // "<file>:<line>:<col>: <path>: <message>"
  std::string message(std::string_view path, std::string_view message) const;
  Error error(std::string_view path, std::string_view message) const;

 private:
  boost::json::value root_;
  std::filesystem::path file_;
  std::vector<Node> nodes_;  // nodes_[0]: the document
  Children keys_;            // (object node, key) -> node of that key
};

// "a string", "an integer", ... for type errors.
std::string_view json_kind_name(const boost::json::value& value);

// Line and column (1-based) of byte `offset` in `text`.
std::pair<int, int> line_column(std::string_view text, std::size_t offset);

// Line and column of many offsets in one text: O(log lines) each.
class LineTable {
 public:
  explicit LineTable(std::string_view text);
  std::pair<int, int> at(std::size_t offset) const;

 private:
  std::vector<std::size_t> line_starts_;
};

}  // namespace kiln::detail
