// Internal: text a plugin hands the host (device names, vendor, driver
// version, error messages, log lines, its own name and description) is
// sanitised once, where it enters (loader, host_api.cpp, device_info.cpp),
// so that neither `kiln devices --json` nor a terminal ever sees it raw.
#pragma once

#include <string>
#include <string_view>

namespace kiln::detail {

enum class TextKind {
  Line,       // one line: a name, a version, a bus id
  Paragraph,  // may span lines: error messages (compiler output), log lines
};

// Valid UTF-8 with no control codes: each byte of an invalid UTF-8 sequence
// (overlong forms, surrogates and code points past U+10FFFF included) becomes
// U+FFFD; C0 and C1 control characters, DEL and the Unicode bidirectional
// overrides (which reorder what a terminal shows) become visible escapes
// such as "\x1b" or "\u202e". Paragraphs keep '\n' and '\t'; lines turn them
// into escapes too.
std::string sanitize_plugin_text(std::string_view text, TextKind kind);

}  // namespace kiln::detail
