// The text form of optimization steps and sequences (optimization.hpp):
//
//   sequence := [ step { ';' step } ]          blanks allowed around tokens
//   step     := NAME [ '(' [ param { ',' param } ] ')' ]
//   param    := NAME '=' INTEGER                INTEGER: [-]digits, fits int64
//   NAME     := [a-z_][a-z0-9_]*
//
// Printing writes `name(k=v,k=v)` (`name()` without parameters) and steps
// joined by "; ", so print(parse(text)) is the canonical spelling the tuning
// database stores. Errors are ErrorCode::Parse naming the 1-based column.
#include "kiln/passes/optimization.hpp"

#include <cctype>
#include <charconv>
#include <string>

namespace kiln::passes {

namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

// A cursor over the text with error reporting by column.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  void skip_blanks() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool at_end() {
    skip_blanks();
    return pos_ >= text_.size();
  }
  bool accept(char c) {
    skip_blanks();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::size_t column() const { return pos_ + 1; }

  // What stands at the cursor, for error messages.
  std::string describe_here() {
    skip_blanks();
    if (pos_ >= text_.size()) return "end of text";
    std::size_t end = pos_ + 1;
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
    if (word(text_[pos_]) || text_[pos_] == '-')
      while (end < text_.size() && word(text_[end])) ++end;
    return "'" + std::string(text_.substr(pos_, end - pos_)) + "'";
  }

  Error error(std::string_view expected) {
    skip_blanks();
    return make_error(ErrorCode::Parse, "optimization sequence: column " + std::to_string(column()) + ": expected " +
                                            std::string(expected) + ", got " + describe_here());
  }
  Error error_at(std::size_t column, std::string message) {
    return make_error(ErrorCode::Parse,
                      "optimization sequence: column " + std::to_string(column) + ": " + std::move(message));
  }

  Result<std::string> name(std::string_view what) {
    skip_blanks();
    if (pos_ >= text_.size() || !name_start(text_[pos_])) return error(what);
    const std::size_t start = pos_;
    while (pos_ < text_.size() && name_char(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  Result<std::int64_t> integer() {
    skip_blanks();
    const std::size_t start = pos_;
    std::size_t end = pos_;
    if (end < text_.size() && text_[end] == '-') ++end;
    while (end < text_.size() && text_[end] >= '0' && text_[end] <= '9') ++end;
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text_.data() + start, text_.data() + end, value);
    if (ec == std::errc::result_out_of_range)
      return error_at(start + 1, "integer '" + std::string(text_.substr(start, end - start)) + "' does not fit int64");
    if (ec != std::errc() || ptr != text_.data() + end || end == start) return error("an integer");
    if (end < text_.size() && name_char(text_[end])) return error("an integer");  // "12ab"
    pos_ = end;
    return value;
  }

  Result<OptStep> step() {
    OptStep step;
    KILN_TRY_ASSIGN(step.opt, name("an optimization name"));
    if (!accept('(')) return step;
    if (accept(')')) return step;
    do {
      const std::size_t key_column = (skip_blanks(), column());
      KILN_TRY_ASSIGN(std::string key, name("a parameter name"));
      for (const auto& [existing, value] : step.params)
        if (existing == key) return error_at(key_column, "parameter '" + key + "' given twice");
      if (!accept('=')) return error("'=' after '" + key + "'");
      KILN_TRY_ASSIGN(std::int64_t value, integer());
      step.params.emplace_back(std::move(key), value);
    } while (accept(','));
    if (!accept(')')) return error("',' or ')'");
    return step;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::int64_t OptStep::param(std::string_view key, std::int64_t fallback) const {
  for (const auto& [name, value] : params)
    if (name == key) return value;
  return fallback;
}

std::string OptStep::to_string() const {
  std::string out = opt + "(";
  for (std::size_t i = 0; i < params.size(); ++i)
    out += (i == 0 ? "" : ",") + params[i].first + "=" + std::to_string(params[i].second);
  return out + ")";
}

Result<OptStep> OptStep::parse(std::string_view text) {
  Reader reader(text);
  KILN_TRY_ASSIGN(OptStep step, reader.step());
  if (!reader.at_end()) return reader.error("end of step");
  return step;
}

std::string to_string(const OptSequence& sequence) {
  std::string out;
  for (const OptStep& step : sequence) out += (out.empty() ? "" : "; ") + step.to_string();
  return out;
}

Result<OptSequence> parse_sequence(std::string_view text) {
  Reader reader(text);
  OptSequence sequence;
  if (reader.at_end()) return sequence;
  do {
    KILN_TRY_ASSIGN(OptStep step, reader.step());
    sequence.push_back(std::move(step));
  } while (reader.accept(';'));
  if (!reader.at_end()) return reader.error("';' or end of text");
  return sequence;
}

}  // namespace kiln::passes
