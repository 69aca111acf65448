#include "json_document.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>

#include <algorithm>
#include <charconv>
#include <optional>
#include <tuple>
#include <vector>

namespace kiln::detail {

namespace json = boost::json;

namespace {

json::parse_options lenient_options() {
  json::parse_options options;
  options.allow_comments = true;
  options.allow_trailing_commas = true;
  options.max_depth = kMaxJsonDepth;
  return options;
}

// `text` (JSON the lenient parser accepted) with each comment's bytes but its
// line breaks made blanks: the same offsets, lines and columns, no comments.
std::string without_comments(std::string_view text) {
  std::string out(text);
  enum class State { Json, String, LineComment, BlockComment } state = State::Json;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const char next = i + 1 < out.size() ? out[i + 1] : '\0';
    switch (state) {
      case State::Json:
        if (c == '"') state = State::String;
        if (c == '/' && (next == '/' || next == '*')) {
          state = next == '/' ? State::LineComment : State::BlockComment;
          out[i] = out[i + 1] = ' ';
          ++i;
        }
        break;
      case State::String:
        if (c == '\\') ++i;  // the escaped byte cannot end the string
        else if (c == '"') state = State::Json;
        break;
      case State::LineComment:
        if (c == '\n') state = State::Json;
        else out[i] = ' ';
        break;
      case State::BlockComment:
        if (c == '*' && next == '/') {
          out[i] = out[i + 1] = ' ';
          ++i;
          state = State::Json;
        } else if (c != '\n') {
          out[i] = ' ';
        }
        break;
    }
  }
  return out;
}

// A basic_parser handler that records, for every object key and array
// element, the byte offset where it starts, as a node of the document's
// tree. The text is fed one byte at a time, so the offset of the byte being
// parsed is known in every callback. Each callback does work proportional to
// the bytes it is given (a key's parts are appended, never re-copied), so
// the whole pass is linear in the text.
class LocationRecorder {
 public:
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);

  struct Start {
    std::uint32_t node;
    std::size_t offset;
  };
  // A key given twice in one object: the first and the second occurrence.
  struct Duplicate {
    std::uint32_t first;
    std::size_t second_offset;
    std::string key;
  };

  std::size_t offset = 0;  // the byte being fed
  std::vector<JsonDocument::Node> nodes{JsonDocument::Node{}};
  JsonDocument::Children keys;
  std::vector<Start> starts;  // offsets of nodes[1..], for their line and column
  std::optional<Duplicate> duplicate;

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_array_begin(json::error_code&) { return container_begins(false); }
  bool on_array_end(std::size_t, json::error_code&) { return container_ends(); }
  bool on_object_begin(json::error_code&) { return container_begins(true); }
  bool on_object_end(std::size_t, json::error_code&) { return container_ends(); }
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
    Frame& f = frames_.back();
    if (!f.key_started) {
      f.key_started = true;
      f.key.clear();
      f.key_offset = offset - n;  // the opening quote
    }
    f.key.append(part.data(), part.size());
    return true;
  }
  bool on_key(json::string_view part, std::size_t n, json::error_code& ec) {
    Frame& f = frames_.back();
    if (!f.key_started) {
      f.key.clear();
      f.key_offset = offset - n - 1;
    }
    f.key.append(part.data(), part.size());
    f.key_started = false;
    const std::uint32_t id = add_node(f.node, f.key, f.key_offset);
    auto [it, inserted] = keys.try_emplace({f.node, f.key}, id);
    if (!inserted && !duplicate) {
      duplicate = Duplicate{it->second, f.key_offset, f.key};
      ec = json::error::syntax;  // stop: parse() reports the duplicate
      return false;
    }
    f.current = id;
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
    std::uint32_t node = 0;     // the object or array
    bool is_object = false;
    bool started = false;       // arrays: the current element has begun
    std::uint32_t current = 0;  // the current key's or element's node
    bool key_started = false;   // objects: a key is being read in parts
    std::size_t key_offset = 0;
    std::string key;
  };

  std::uint32_t add_node(std::uint32_t parent, std::string key, std::size_t at) {
    const auto id = static_cast<std::uint32_t>(nodes.size());
    JsonDocument::Node node;
    node.parent = parent;
    node.key = std::move(key);
    nodes.push_back(std::move(node));
    starts.push_back({id, at});
    return id;
  }
  bool container_begins(bool is_object) {
    element_begins(offset);
    const std::uint32_t node = frames_.empty() ? 0 : frames_.back().current;
    Frame frame;
    frame.node = node;
    frame.is_object = is_object;
    frames_.push_back(std::move(frame));
    return true;
  }
  bool container_ends() {
    frames_.pop_back();
    element_ends();
    return true;
  }
  void element_begins(std::size_t start) {
    if (frames_.empty() || frames_.back().is_object || frames_.back().started) return;
    Frame& f = frames_.back();
    f.started = true;
    f.current = add_node(f.node, {}, start);
    nodes[f.node].elements.push_back(f.current);
  }
  void element_ends() {
    if (frames_.empty() || frames_.back().is_object) return;
    frames_.back().started = false;
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

// The path of `node` as the config code writes it ("plugins.c.devices[1]").
std::string path_of(const std::vector<JsonDocument::Node>& nodes, std::uint32_t node) {
  std::vector<std::string> parts;
  for (; node != 0; node = nodes[node].parent) {
    const JsonDocument::Node& n = nodes[node];
    if (!n.key.empty() || nodes[n.parent].elements.empty()) {
      parts.push_back(n.key);
      continue;
    }
    const auto& siblings = nodes[n.parent].elements;
    const auto index = std::find(siblings.begin(), siblings.end(), node) - siblings.begin();
    parts.push_back("[" + std::to_string(index) + "]");
  }
  std::string path;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!path.empty() && !it->starts_with("[")) path += ".";
    path += *it;
  }
  return path;
}

std::string parse_error_text(const json::error_code& ec) {
  std::string text = ec.message();
  if (ec == json::error::incomplete) text = "unexpected end of file (an unclosed { or [ ?)";
  if (ec == json::error::too_deep)
    text = "objects and arrays nested deeper than " + std::to_string(kMaxJsonDepth) + " levels (the limit)";
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

LineTable::LineTable(std::string_view text) {
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') line_starts_.push_back(i + 1);
}

std::pair<int, int> LineTable::at(std::size_t offset) const {
  const auto after = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const std::size_t line = static_cast<std::size_t>(after - line_starts_.begin());  // >= 1
  return {static_cast<int>(line), static_cast<int>(offset - line_starts_[line - 1] + 1)};
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

  // Second pass for key positions, fed byte by byte (linear, about 50 ns a
  // byte: a config of the 16 MiB limit takes under a second). Only an object
  // or an array has positions to record: a scalar document (the caller
  // refuses it) is left out, because Boost.JSON 1.74 fed a top-level number
  // byte by byte reads past an empty buffer at the end (an assertion there;
  // found by fuzzing, regressions/config/top-level-number-fed-byte-by-byte).
  // Its comments are blanked first (offsets kept): fed byte by byte, a number
  // that starts right after a comment trips the same assertion
  // (regressions/config/number-after-a-comment-fed-byte-by-byte).
  json::basic_parser<LocationRecorder> locator(lenient_options());
  if (doc.root_.is_object() || doc.root_.is_array()) {
    const std::string blanked = without_comments(text);
    for (std::size_t i = 0; i < blanked.size() && !ec; ++i) {
      locator.handler().offset = i;
      locator.write_some(true, blanked.data() + i, 1, ec);
    }
    if (!ec) locator.write_some(false, nullptr, 0, ec);
  }
  LocationRecorder& recorded = locator.handler();
  const LineTable lines(text);
  for (const auto& [node, offset] : recorded.starts)
    std::tie(recorded.nodes[node].line, recorded.nodes[node].column) = lines.at(offset);
  doc.nodes_ = std::move(recorded.nodes);
  doc.keys_ = std::move(recorded.keys);
  if (recorded.duplicate) {
    const JsonDocument::Node& first = doc.nodes_[recorded.duplicate->first];
    const auto [line, column] = lines.at(recorded.duplicate->second_offset);
    std::string path = path_of(doc.nodes_, first.parent);
    path += path.empty() ? recorded.duplicate->key : "." + recorded.duplicate->key;
    return make_error(ErrorCode::Config,
                      file.string() + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + path +
                          ": duplicate key (first given at " + file.string() + ":" + std::to_string(first.line) +
                          ":" + std::to_string(first.column) + ")");
  }
  return doc;
}

// Walks the tree along `path`: "[N]" is an array element; otherwise the
// longest remaining text if it is a key (keys may contain '.'), else the
// shortest key ending before a '.' or '['.
SourceLocation JsonDocument::location(std::string_view path) const {
  SourceLocation where;
  where.file = file_.string();
  std::uint32_t node = 0;
  auto key_child = [&](std::string_view key) -> std::optional<std::uint32_t> {
    const auto it = keys_.find(std::pair<std::uint32_t, std::string_view>(node, key));
    if (it == keys_.end()) return std::nullopt;
    return it->second;
  };
  std::string_view rest = path;
  while (!rest.empty() && !nodes_.empty()) {
    if (rest.front() == '[') {
      const std::size_t close = rest.find(']');
      std::size_t index = 0;
      const auto digits = rest.substr(1, close == std::string_view::npos ? 0 : close - 1);
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
      if (close == std::string_view::npos || ec != std::errc() || end != digits.data() + digits.size() ||
          index >= nodes_[node].elements.size())
        break;
      node = nodes_[node].elements[index];
      rest.remove_prefix(close + 1);
    } else if (auto whole = key_child(rest)) {
      node = *whole;
      rest = {};
    } else {
      std::optional<std::uint32_t> found;
      std::size_t cut = rest.find_first_of(".[");
      for (; cut != std::string_view::npos && !found; cut = rest.find_first_of(".[", cut + 1))
        if ((found = key_child(rest.substr(0, cut)))) break;
      if (!found) break;
      node = *found;
      rest.remove_prefix(cut);
    }
    if (rest.starts_with(".")) rest.remove_prefix(1);
  }
  if (!nodes_.empty() && node != 0) {
    where.line = nodes_[node].line;
    where.column = nodes_[node].column;
  }
  return where;
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
