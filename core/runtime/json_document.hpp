// Internal: a parsed JSON file with the source location of every key, so
// config errors can name file:line:col as well as the key path.
#pragma once

#include "kiln/result.hpp"
#include "kiln/runtime/config.hpp"

#include <boost/json/value.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace kiln::detail {

class JsonDocument {
 public:
  // Parses `text` (comments and trailing commas allowed). A syntax error
  // becomes ErrorCode::Config "<file>:<line>:<col>: <what>".
  static Result<JsonDocument> parse(std::string_view text, const std::filesystem::path& file);

  const boost::json::value& root() const { return root_; }
  const std::filesystem::path& file() const { return file_; }

  // Where the key at `path` ("plugins.c.priority", "plugin_paths[2]") starts;
  // for a path never seen, the nearest enclosing one that was.
  SourceLocation location(std::string_view path) const;
  // "<file>:<line>:<col>: <path>: <message>"
  std::string message(std::string_view path, std::string_view message) const;
  Error error(std::string_view path, std::string_view message) const;

 private:
  boost::json::value root_;
  std::filesystem::path file_;
  std::map<std::string, std::pair<int, int>, std::less<>> positions_;
};

// "a string", "an integer", ... for type errors.
std::string_view json_kind_name(const boost::json::value& value);

// Line and column (1-based) of byte `offset` in `text`.
std::pair<int, int> line_column(std::string_view text, std::size_t offset);

}  // namespace kiln::detail
