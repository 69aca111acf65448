#include "text_lexer.hpp"

namespace kiln::ir::text_detail {

namespace {
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word_char(char c) { return is_alpha(c) || is_digit(c); }
bool is_name_char(char c) { return is_word_char(c) || c == '.'; }
}  // namespace

std::vector<Token> lex_line(std::string_view line, std::uint32_t line_number) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  auto push = [&](Token::Kind kind, std::size_t begin, std::size_t end) {
    tokens.push_back({kind, line.substr(begin, end - begin), line_number, static_cast<std::uint32_t>(begin + 1)});
  };
  while (i < line.size()) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') break;  // a comment runs to the end of the line
    const std::size_t begin = i;
    if (is_alpha(c)) {
      while (i < line.size() && is_word_char(line[i])) ++i;
      push(Token::Kind::Word, begin, i);
    } else if (c == '%' || c == '@') {
      ++i;
      while (i < line.size() && (c == '%' ? is_name_char(line[i]) : is_digit(line[i]))) ++i;
      push(c == '%' ? Token::Kind::Name : Token::Kind::Absolute, begin, i);
    } else if (is_digit(c) || c == '-' || c == '+' || c == '.') {
      // A number: sign, then letters/digits/dots, and a sign right after the
      // exponent letter of a decimal (1e-5); "-inf" is a number too.
      ++i;
      const bool hex = i + 1 < line.size() && line[begin] == '0' && (line[i] == 'x' || line[i] == 'X');
      while (i < line.size()) {
        const char d = line[i];
        const bool exponent_sign = (d == '-' || d == '+') && !hex && (line[i - 1] == 'e' || line[i - 1] == 'E');
        if (!is_name_char(d) && !exponent_sign) break;
        ++i;
      }
      push(Token::Kind::Number, begin, i);
    } else if (c == '[' || c == ']' || c == ',' || c == '=' || c == '(' || c == ')' || c == '?') {
      ++i;
      push(Token::Kind::Punct, begin, i);
    } else {
      ++i;
      while (i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0u) == 0x80u) ++i;  // rest of a UTF-8 character
      push(Token::Kind::Invalid, begin, i);
    }
  }
  tokens.push_back({Token::Kind::End, {}, line_number, static_cast<std::uint32_t>(i + 1)});
  return tokens;
}

}  // namespace kiln::ir::text_detail
