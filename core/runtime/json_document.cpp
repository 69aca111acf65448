#include "json_document.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>

#include <vector>

namespace kiln::detail {

namespace json = boost::json;

namespace {

json::parse_options lenient_options() {
  json::parse_options options;
  options.allow_comments = true;
  options.allow_trailing_commas = true;
  return options;
}

// A basic_parser handler that records, for every object key and array
// element, the byte offset where it starts. The text is fed one byte at a
// time, so the offset of the byte being parsed is known in every callback.
class LocationRecorder {
 public:
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);

  std::size_t offset = 0;                        // the byte being fed
  std::vector<std::pair<std::string, std::size_t>> starts;  // path -> offset

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_array_begin(json::error_code&) {
    element_begins(offset);
    frames_.push_back({path(), false, 0, false, {}});
    return true;
  }
  bool on_array_end(std::size_t, json::error_code&) {
    frames_.pop_back();
    element_ends();
    return true;
  }
  bool on_object_begin(json::error_code&) {
    element_begins(offset);
    frames_.push_back({path(), true, 0, false, {}});
    return true;
  }
  bool on_object_end(std::size_t, json::error_code&) {
    frames_.pop_back();
    element_ends();
    return true;
  }
  bool on_string_part(json::string_view, std::size_t n, json::error_code&) {
    element_begins(offset - n);
    return true;
  }
  bool on_string(json::string_view, std::size_t n, json::error_code&) {
    element_begins(offset - n - 1);
    element_ends();
    return true;
  }
  bool on_key_part(json::string_view part, std::size_t n, json::error_code&) {
    key_begins(part, n, offset - n);
    return true;
  }
  bool on_key(json::string_view part, std::size_t n, json::error_code&) {
    key_begins(part, n, offset - n - 1);
    frames_.back().key_started = false;
    return true;
  }
  bool on_number_part(json::string_view s, json::error_code&) {
    element_begins(offset + 1 - s.size());
    return true;
  }
  bool on_int64(std::int64_t, json::string_view s, json::error_code&) { return number_ends(s); }
  bool on_uint64(std::uint64_t, json::string_view s, json::error_code&) { return number_ends(s); }
  bool on_double(double, json::string_view s, json::error_code&) { return number_ends(s); }
  bool on_bool(bool b, json::error_code&) { return literal_ends(b ? 4 : 5); }
  bool on_null(json::error_code&) { return literal_ends(4); }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  struct Frame {
    std::string path;
    bool is_object;
    std::size_t index;    // arrays: the current element
    bool started;         // arrays: the current element has begun
    std::string key;      // objects: the current key (accumulated from parts)
    bool key_started = false;
  };

  std::string path() const {
    if (frames_.empty()) return "";
    const Frame& f = frames_.back();
    if (f.is_object) return f.path.empty() ? f.key : f.path + "." + f.key;
    return f.path + "[" + std::to_string(f.index) + "]";
  }
  void key_begins(json::string_view part, std::size_t n, std::size_t start) {
    Frame& f = frames_.back();
    if (!f.key_started) {
      f.key.clear();
      f.key_started = true;
      f.key.append(part.data(), part.size());
      starts.emplace_back(path(), start);
      return;
    }
    f.key.append(part.data(), part.size());
    starts.back() = {path(), starts.back().second};
    (void)n;
  }
  void element_begins(std::size_t start) {
    if (frames_.empty() || frames_.back().is_object || frames_.back().started) return;
    frames_.back().started = true;
    starts.emplace_back(path(), start);
  }
  void element_ends() {
    if (frames_.empty() || frames_.back().is_object) return;
    frames_.back().started = false;
    ++frames_.back().index;
  }
  bool number_ends(json::string_view s) {
    // The number ends at the byte before the one being fed (its terminator).
    element_begins(offset - s.size());
    element_ends();
    return true;
  }
  bool literal_ends(std::size_t length) {
    element_begins(offset + 1 - length);
    element_ends();
    return true;
  }

  std::vector<Frame> frames_;
};

std::string parse_error_text(const json::error_code& ec) {
  std::string text = ec.message();
  if (ec == json::error::incomplete) text = "unexpected end of file (an unclosed { or [ ?)";
  return text;
}

}  // namespace

std::pair<int, int> line_column(std::string_view text, std::size_t offset) {
  int line = 1;
  int column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

std::string_view json_kind_name(const json::value& value) {
  switch (value.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64: return "an integer";
    case json::kind::double_: return "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "a value";
}

Result<JsonDocument> JsonDocument::parse(std::string_view text, const std::filesystem::path& file) {
  JsonDocument doc;
  doc.file_ = file;
  // Editors on some systems start UTF-8 files with a byte-order mark, which
  // JSON does not allow; it carries no meaning, so it is skipped (lines and
  // columns are then those an editor shows).
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);

  json::stream_parser parser({}, lenient_options());
  json::error_code ec;
  const std::size_t consumed = parser.write_some(text.data(), text.size(), ec);
  if (!ec) parser.finish(ec);
  if (ec) {
    const std::size_t at = ec == json::error::incomplete ? text.size() : consumed;
    const auto [line, column] = line_column(text, at);
    return make_error(ErrorCode::Config, file.string() + ":" + std::to_string(line) + ":" +
                                             std::to_string(column) + ": malformed JSON: " + parse_error_text(ec));
  }
  doc.root_ = parser.release();

  // Second pass for key positions (config files are small: byte-wise is cheap).
  json::basic_parser<LocationRecorder> locator(lenient_options());
  for (std::size_t i = 0; i < text.size() && !ec; ++i) {
    locator.handler().offset = i;
    locator.write_some(true, text.data() + i, 1, ec);
  }
  if (!ec) locator.write_some(false, nullptr, 0, ec);
  for (const auto& [path, offset] : locator.handler().starts)
    doc.positions_.emplace(path, line_column(text, offset));
  return doc;
}

SourceLocation JsonDocument::location(std::string_view path) const {
  SourceLocation where;
  where.file = file_.string();
  std::string key(path);
  while (true) {
    if (auto it = positions_.find(key); it != positions_.end()) {
      where.line = it->second.first;
      where.column = it->second.second;
      return where;
    }
    const std::size_t cut = key.find_last_of(".[");
    if (cut == std::string::npos) return where;
    key.resize(cut);
  }
}

std::string JsonDocument::message(std::string_view path, std::string_view what) const {
  std::string out = location(path).to_string() + ": ";
  if (!path.empty()) out += std::string(path) + ": ";
  return out + std::string(what);
}

Error JsonDocument::error(std::string_view path, std::string_view what) const {
  return make_error(ErrorCode::Config, message(path, what));
}

}  // namespace kiln::detail
