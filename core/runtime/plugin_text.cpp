#include "plugin_text.hpp"

#include <cstdint>
#include <cstdio>

namespace kiln::detail {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence at text[at] and its code point, or
// 0 when the bytes there are not one (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF).
std::size_t utf8_sequence(std::string_view text, std::size_t at, char32_t& code) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  char32_t min = 0;
  if (lead < 0x80) {
    code = lead;
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2, code = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

bool needs_escape(char32_t code, TextKind kind) {
  if (code == '\n' || code == '\t') return kind == TextKind::Line;
  if (code < 0x20 || code == 0x7F) return true;
  if (code >= 0x80 && code <= 0x9F) return true;  // C1: 0x9B is a terminal's CSI
  // Bidirectional embeddings, overrides and isolates.
  return (code >= 0x202A && code <= 0x202E) || (code >= 0x2066 && code <= 0x2069);
}

void append_escape(std::string& out, char32_t code) {
  char buffer[12];
  if (code < 0x80) std::snprintf(buffer, sizeof buffer, "\\x%02x", static_cast<unsigned>(code));
  else std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(code));
  out += buffer;
}

}  // namespace

std::string sanitize_plugin_text(std::string_view text, TextKind kind) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    char32_t code = 0;
    const std::size_t length = utf8_sequence(text, at, code);
    if (length == 0) {
      out += kReplacement;
      ++at;
      continue;
    }
    if (needs_escape(code, kind)) append_escape(out, code);
    else out.append(text.substr(at, length));
    at += length;
  }
  return out;
}

}  // namespace kiln::detail
