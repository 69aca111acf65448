// Tokens of the kernel text form, one line at a time. Internal to the parser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir::text_detail {

struct Token {
  enum class Kind {
    Word,      // op names, types, keywords: [A-Za-z_][A-Za-z0-9_]*
    Name,      // %name: a value
    Absolute,  // @N: op N by position (raw lines)
    Number,    // 12, -3, 1.5e-3, 0x1f, -inf
    Punct,     // [ ] , = ( ) ?
    Invalid,   // a character that starts no token
    End,       // end of line (or a # comment)
  };
  Kind kind = Kind::End;
  std::string_view text;
  std::uint32_t line = 0;
  std::uint32_t col = 0;  // 1-based

  bool is(char c) const { return kind == Kind::Punct && text.size() == 1 && text[0] == c; }
  bool is_word(std::string_view w) const { return kind == Kind::Word && text == w; }
  // How an error message shows it: 'text' or "end of line".
  std::string describe() const { return kind == Kind::End ? "end of line" : "'" + std::string(text) + "'"; }
};

// Splits one line (without its newline) into tokens, ending with an End token.
std::vector<Token> lex_line(std::string_view line, std::uint32_t line_number);

}  // namespace kiln::ir::text_detail
