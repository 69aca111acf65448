// The parser: one op per line, recursive descent over the tokens of a line.
// Failures are thrown as Failure inside this file and returned as a Parse
// error ("LINE:COL: expected WHAT, got TOKEN") at the API edge.
#include "kiln/ir/builder.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "scalar_text.hpp"
#include "text_lexer.hpp"

#include <kiln/sdk/wire.hpp>

#include <limits>
#include <optional>
#include <unordered_map>

namespace kiln::ir {

namespace {

using text_detail::Token;

struct Failure {
  std::string message;
};

[[noreturn]] void fail_at(const Token& at, const std::string& what, const std::string& detail = {}) {
  std::string message = std::to_string(at.line) + ":" + std::to_string(at.col) + ": expected " + what + ", got " +
                        at.describe();
  if (!detail.empty()) message += " (" + detail + ")";
  throw Failure{std::move(message)};
}

template <std::size_t N>
std::optional<std::uint8_t> code_named(const std::array<std::string_view, N>& names, std::string_view word) {
  for (std::size_t i = 1; i < N; ++i)
    if (names[i] == word) return static_cast<std::uint8_t>(i);
  return std::nullopt;
}

std::optional<ValueType> type_named(std::string_view word) {
  if (auto dtype = dtype_from_name(word)) return ValueType{*dtype, 1};
  const std::size_t x = word.rfind('x');
  if (x == std::string_view::npos || x + 1 >= word.size()) return std::nullopt;
  const auto dtype = dtype_from_name(word.substr(0, x));
  if (!dtype) return std::nullopt;
  unsigned lanes = 0;
  for (char c : word.substr(x + 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    lanes = lanes * 10 + static_cast<unsigned>(c - '0');
    if (lanes > 255) return std::nullopt;
  }
  if (lanes == 0) return std::nullopt;
  return ValueType{*dtype, static_cast<std::uint8_t>(lanes)};
}

class Parser {
 public:
  SourceKernel parse(std::string_view text) {
    std::uint32_t line_number = 0;
    while (!text.empty()) {
      const std::size_t newline = text.find('\n');
      const std::string_view line = text.substr(0, newline);
      text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
      ++line_number;
      tokens_ = text_detail::lex_line(line, line_number);
      at_ = 0;
      parse_line(line_number);
      if (builder_.open_blocks().size() > kMaxTextNesting)
        fail_at(tokens_.front(), "at most " + std::to_string(kMaxTextNesting) + " nested loop and if blocks",
                "the text form's nesting limit");
    }
    SourceKernel out;
    out.kernel = builder_.finish();
    out.lines = std::move(lines_);
    return out;
  }

 private:
  // ---- tokens
  const Token& peek() const { return tokens_[at_]; }
  const Token& next() {
    const Token& t = tokens_[at_];
    if (t.kind != Token::Kind::End) ++at_;
    return t;
  }
  void expect(char c) {
    if (!peek().is(c)) fail_at(peek(), std::string("'") + c + "'");
    next();
  }
  std::string_view word(const std::string& what) {
    if (peek().kind != Token::Kind::Word) fail_at(peek(), what);
    return next().text;
  }
  std::uint64_t unsigned_number(const std::string& what, std::uint64_t max) {
    const Token& t = peek();
    if (t.kind != Token::Kind::Number) fail_at(t, what);
    auto value = text_detail::parse_unsigned(t.text, max);
    if (!value.ok()) fail_at(t, what, value.error().message);
    next();
    return *value;
  }

  // ---- values and types
  ValueId value() {
    const Token& t = peek();
    if (t.kind != Token::Kind::Name) fail_at(t, "a value (%name)");
    const auto found = names_.find(std::string(t.text));
    if (found == names_.end()) fail_at(t, "a value defined above", std::string(t.text) + " is not defined before this line");
    next();
    return found->second;
  }
  ValueType type() {
    const Token& t = peek();
    const auto parsed = t.kind == Token::Kind::Word ? type_named(t.text) : std::nullopt;
    if (!parsed) fail_at(t, "a type (f32, i64, f32x4, bool, ...)");
    next();
    return *parsed;
  }
  std::optional<ValueType> optional_type() {
    if (peek().kind != Token::Kind::Word) return std::nullopt;
    return type();
  }
  DType scalar_type(const std::string& of) {
    const Token& t = peek();
    const ValueType v = type();
    if (v.lanes != 1) fail_at(t, "a scalar type", of + " elements are scalars");
    return v.dtype;
  }
  std::uint64_t element_count(bool unknown_allowed) {
    expect('[');
    std::uint64_t count = 0;
    if (unknown_allowed && peek().is('?')) {
      next();
    } else {
      count = unsigned_number(unknown_allowed ? "an element count or '?'" : "an element count",
                              std::numeric_limits<std::uint64_t>::max());
    }
    expect(']');
    return count;
  }

  // Appends `op`, typed as written or, when no type was written, as its
  // operands imply.
  ValueId emit(Op op, std::optional<ValueType> written) {
    if (!written) return builder_.append_inferred(op).id;
    op.dtype = written->dtype;
    op.lanes = written->lanes;
    return builder_.append(op).id;
  }

  static Op op_of(OpKind kind, std::uint8_t code = 0) {
    Op op;
    op.kind = kind;
    op.code = code;
    return op;
  }

  // ---- lines
  void parse_line(std::uint32_t line_number) {
    if (peek().kind == Token::Kind::End) return;
    std::optional<Token> label;
    if (peek().kind == Token::Kind::Name) {
      label = next();
      expect('=');
    }
    const Token& head = peek();
    if (head.kind != Token::Kind::Word) fail_at(head, label ? "an op name" : "an op name or %name =");
    const std::string_view op_name = next().text;
    const ValueId id = parse_op(head, op_name);
    if (peek().kind != Token::Kind::End) fail_at(peek(), "end of line");
    lines_.push_back(line_number);
    if (!label) return;
    const Op& op = builder_.kernel()[id];
    if (!op.has_result() && op_name != "raw")
      fail_at(*label, "an op name", std::string(op_name) + " has no value to name; remove '" +
                                        std::string(label->text) + " ='");
    const auto [it, inserted] = names_.emplace(std::string(label->text), id);
    if (!inserted)
      fail_at(*label, "a new name", std::string(label->text) + " is already defined on line " +
                                        std::to_string(name_lines_[it->first]));
    name_lines_[it->first] = line_number;
  }

  ValueId parse_op(const Token& head, std::string_view name) {
    if (name == "const") return parse_const();
    if (name == "param") return parse_param();
    if (name == "storage") {
      const Token& at = peek();
      const auto scope = code_named(sdk::kScopeNames, word("a storage scope (local or register)"));
      if (scope != static_cast<std::uint8_t>(Scope::Local) && scope != static_cast<std::uint8_t>(Scope::Register))
        fail_at(at, "a storage scope (local or register)");
      const DType dtype = scalar_type("storage");
      return builder_.storage(static_cast<Scope>(*scope), dtype, element_count(false)).id;
    }
    if (name == "load" || name == "store" || name == "copy_async") {
      // load|store [unaligned] <type> %mem[%index][, %value]
      const bool unaligned = name != "copy_async" && peek().kind == Token::Kind::Word && peek().text == "unaligned";
      if (unaligned) next();
      const auto written = optional_type();
      Op op = op_of(name == "load" ? OpKind::Load : name == "store" ? OpKind::Store : OpKind::CopyAsync);
      if (unaligned) op.attr = KILN_ACCESS_UNALIGNED;
      op.src[0] = value();
      expect('[');
      op.src[1] = value();
      expect(']');
      if (op.kind != OpKind::Load) {
        expect(',');
        op.src[2] = value();
      }
      return emit(op, written);
    }
    if (name == "index") {
      const Token& at = peek();
      const auto scope = code_named(sdk::kScopeNames, word("an index scope (group or local)"));
      if (scope != static_cast<std::uint8_t>(Scope::Group) && scope != static_cast<std::uint8_t>(Scope::Local))
        fail_at(at, "an index scope (group or local)");
      Op op = op_of(OpKind::Index, *scope);
      op.attr = static_cast<std::uint32_t>(unsigned_number("an axis (0, 1 or 2)", UINT32_MAX));
      op.src[0] = value();
      return emit(op, std::nullopt);
    }
    if (name == "loop" || name == "if") {
      Op op = op_of(name == "loop" ? OpKind::Loop : OpKind::If);
      op.src[0] = value();
      return emit(op, std::nullopt);
    }
    if (name == "endloop" || name == "endif") return parse_end(head, name == "endloop");
    if (name == "barrier") return builder_.append(op_of(OpKind::Barrier, static_cast<std::uint8_t>(Scope::Local))).id;
    if (name == "copy_commit") return builder_.append(op_of(OpKind::CopyCommit)).id;
    if (name == "prefetch") {
      // prefetch [type] %buffer[%index]
      const auto written = optional_type();
      Op op = op_of(OpKind::Prefetch);
      op.src[0] = value();
      expect('[');
      op.src[1] = value();
      expect(']');
      return emit(op, written);
    }
    if (name == "load_matrix") {
      // load_matrix x<1|2|4> [trans] [type] %mem[%row]
      const Token& at = peek();
      const std::string_view count = word("a matrix count (x1, x2 or x4)");
      if (count != "x1" && count != "x2" && count != "x4") fail_at(at, "a matrix count (x1, x2 or x4)");
      Op op = op_of(OpKind::LoadMatrix);
      op.attr = static_cast<std::uint32_t>(count[1] - '0');
      op.lanes = static_cast<std::uint8_t>(2 * op.attr);
      if (peek().kind == Token::Kind::Word && peek().text == "trans") {
        next();
        op.code = 1;
      }
      // The element type only (the lanes are the count's): u16, f16, ...
      const Token& type_at = peek();
      const auto written = optional_type();
      if (written && written->lanes != 1) fail_at(type_at, "a scalar type", "load_matrix gives 2 elements per matrix");
      op.src[0] = value();
      expect('[');
      op.src[1] = value();
      expect(']');
      if (!written) return builder_.append_inferred(op).id;
      op.dtype = written->dtype;
      return builder_.append(op).id;
    }
    if (name == "wgmma_fence") return builder_.append(op_of(OpKind::WgmmaFence)).id;
    if (name == "wgmma_commit") return builder_.append(op_of(OpKind::WgmmaCommit)).id;
    if (name == "wgmma_wait") {
      Op op = op_of(OpKind::WgmmaWait);
      op.attr = static_cast<std::uint32_t>(unsigned_number("a count of wgmma groups left pending (0..7)", UINT32_MAX));
      return builder_.append(op).id;
    }
    if (name == "wgmma") {
      // wgmma n<N> [a_regs] <type> %mem[%tiles], %accumulator
      const Token& at = peek();
      const std::string_view n = word("a tile width (n8 .. n256)");
      if (n.size() < 2 || n[0] != 'n' || n.find_first_not_of("0123456789", 1) != std::string_view::npos || n.size() > 4)
        fail_at(at, "a tile width (n8 .. n256)");
      Op op = op_of(OpKind::Wgmma);
      op.attr = static_cast<std::uint32_t>(std::stoul(std::string(n.substr(1))));
      if (peek().kind == Token::Kind::Word && peek().text == "a_regs") {  // A's fragments in the accumulator's storage
        next();
        op.code = 1;
      }
      const Token& type_at = peek();
      const ValueType written = type();
      if (written.lanes != 1) fail_at(type_at, "a scalar type", "wgmma's type is its storage's element type");
      op.dtype = written.dtype;
      op.src[0] = value();
      expect('[');
      op.src[1] = value();
      expect(']');
      expect(',');
      op.src[2] = value();
      return builder_.append(op).id;
    }
    if (name == "copy_wait") {
      Op op = op_of(OpKind::CopyWait);
      op.attr = static_cast<std::uint32_t>(unsigned_number("a count of copy groups left pending (0..7)", UINT32_MAX));
      return builder_.append(op).id;
    }
    if (auto u = code_named(sdk::kUnaryNames, name)) return operands(op_of(OpKind::Unary, *u), 1, optional_type());
    if (auto b = code_named(sdk::kBinaryNames, name)) return operands(op_of(OpKind::Binary, *b), 2, optional_type());
    if (name == "cast" || name == "broadcast") {
      const auto written = type();
      return operands(op_of(name == "cast" ? OpKind::Cast : OpKind::Broadcast), 1, written);
    }
    if (name == "mad") return operands(op_of(OpKind::Mad), 3, optional_type());
    if (name == "select") return operands(op_of(OpKind::Select), 3, optional_type());
    if (name == "dot_bf16") return operands(op_of(OpKind::DotBf16), 3, optional_type());
    if (name == "bf16_pair") return operands(op_of(OpKind::Bf16Pair), 2, optional_type());
    if (name == "insert" || name == "extract") {
      const auto written = optional_type();
      Op op = op_of(name == "insert" ? OpKind::Insert : OpKind::Extract);
      op.src[0] = value();
      expect('[');
      op.attr = static_cast<std::uint32_t>(unsigned_number("a lane number", UINT32_MAX));
      expect(']');
      if (op.kind == OpKind::Insert) {
        expect(',');
        op.src[1] = value();
      }
      return emit(op, written);
    }
    if (name == "mma") return parse_mma();
    if (name == "subgroup_reduce") return parse_subgroup_reduce();
    if (name == "raw") return parse_raw();
    fail_at(head, "an op name (const, param, load, add, ...)");
  }

  ValueId operands(Op op, int count, std::optional<ValueType> written) {
    for (int i = 0; i < count; ++i) {
      if (i > 0) expect(',');
      op.src[static_cast<std::size_t>(i)] = value();
    }
    return emit(op, written);
  }

  ValueId parse_const() {
    const Token& type_token = peek();
    const ValueType t = type();
    if (t.lanes != 1) fail_at(type_token, "a scalar type", "const is a scalar; use broadcast for vectors");
    const Token& at = peek();
    std::uint64_t bits = 0;
    if (at.is_word("nan") && tokens_[at_ + 1].is('(')) {
      next();
      next();
      const Token& bits_token = peek();
      bits = unsigned_number("the bits of a NaN (0x...)", std::numeric_limits<std::uint64_t>::max());
      if (!text_detail::is_nan_bits(t.dtype, bits))
        fail_at(bits_token, "the bits of a " + std::string(dtype_name(t.dtype)) + " NaN");
      expect(')');
    } else {
      if (at.kind != Token::Kind::Number && at.kind != Token::Kind::Word) fail_at(at, "a constant value");
      auto parsed = text_detail::parse_scalar(t.dtype, at.text);
      if (!parsed.ok()) fail_at(at, "a " + std::string(dtype_name(t.dtype)) + " value", parsed.error().message);
      bits = *parsed;
      next();
    }
    return builder_.constant_bits(t.dtype, bits).id;
  }

  // mma <m16n8k16|m16n8k8> <f16|bf16|tf32> %a, %b, %c  (the result is f32x4)
  ValueId parse_mma() {
    const Token& shape_at = peek();
    const auto shape = code_named(sdk::kMmaShapeNames, word("an mma shape (m16n8k16 or m16n8k8)"));
    if (!shape || *shape == KILN_MMA_SHAPE_INVALID) fail_at(shape_at, "an mma shape (m16n8k16 or m16n8k8)");
    const Token& input_at = peek();
    const std::string_view input = word("an mma input type (f16, bf16 or tf32)");
    std::uint32_t dtype = KILN_DTYPE_INVALID;
    if (input == "f16") dtype = KILN_DTYPE_F16;
    if (input == "bf16") dtype = KILN_DTYPE_BF16;
    if (input == "tf32") dtype = KILN_DTYPE_F32;
    if (!sdk::mma_input_allowed(*shape, dtype))
      fail_at(input_at, *shape == KILN_MMA_M16N8K16 ? "f16 or bf16 (the inputs of m16n8k16)" : "tf32 (the inputs of m16n8k8)");
    Op op = op_of(OpKind::Mma, *shape);
    op.attr = dtype;
    return operands(op, 3, std::nullopt);
  }

  // subgroup_reduce <add|mul|max|min> <width> [type] %x
  ValueId parse_subgroup_reduce() {
    const Token& at = peek();
    const auto reduction = code_named(sdk::kBinaryNames, word("a reduction (add, mul, max or min)"));
    if (!reduction || !sdk::subgroup_reduction_allowed(*reduction)) fail_at(at, "a reduction (add, mul, max or min)");
    Op op = op_of(OpKind::SubgroupReduce, *reduction);
    op.attr = static_cast<std::uint32_t>(unsigned_number("a subgroup width (2, 4, ... 64)", UINT32_MAX));
    return operands(op, 1, optional_type());
  }

  ValueId parse_param() {
    std::optional<std::uint32_t> slot;
    if (peek().kind == Token::Kind::Number)
      slot = static_cast<std::uint32_t>(unsigned_number("a slot number", UINT32_MAX));
    const Token& at = peek();
    const auto kind = code_named(sdk::kParamKindNames, word("a param kind (global, global_mut or var)"));
    if (!kind) fail_at(at, "a param kind (global, global_mut or var)");
    const DType dtype = scalar_type("param");
    std::uint64_t count = 0;
    if (*kind != static_cast<std::uint8_t>(ParamKind::Variable) && peek().is('[')) count = element_count(true);
    return builder_.param(static_cast<ParamKind>(*kind), dtype, count, slot).id;
  }

  ValueId parse_end(const Token& head, bool is_loop) {
    Op op = op_of(is_loop ? OpKind::EndLoop : OpKind::EndIf);
    const auto& open = builder_.open_blocks();
    if (is_loop && peek().kind == Token::Kind::Name) {
      op.src[0] = value();
    } else {
      const OpKind wanted = is_loop ? OpKind::Loop : OpKind::If;
      if (open.empty()) fail_at(head, "an op name", std::string(head.text) + " closes nothing: no loop or if is open");
      if (builder_.kernel()[open.back()].kind != wanted)
        fail_at(head, is_loop ? "endif" : "endloop",
                "the innermost open block is the " + std::string(is_loop ? "if" : "loop") + " on line " +
                    std::to_string(lines_[open.back()]));
      op.src[0] = open.back();
    }
    return builder_.append(op).id;
  }

  // raw kind=N dtype=N lanes=N code=N attr=N src=A,B,C reserved=N imm=N
  ValueId parse_raw() {
    Op op;
    bool seen[8] = {};
    static constexpr std::string_view kKeys[] = {"kind", "dtype", "lanes", "code", "attr", "src", "reserved", "imm"};
    while (peek().kind != Token::Kind::End) {
      const Token& key_token = peek();
      const std::string_view key = word("a raw field (kind=, dtype=, lanes=, code=, attr=, src=, reserved=, imm=)");
      std::size_t k = 0;
      while (k < 8 && kKeys[k] != key) ++k;
      if (k == 8) fail_at(key_token, "a raw field (kind, dtype, lanes, code, attr, src, reserved, imm)");
      if (seen[k]) fail_at(key_token, "a raw field not given before");
      seen[k] = true;
      expect('=');
      switch (k) {
        case 0: op.kind = static_cast<OpKind>(unsigned_number("a kind number", 255)); break;
        case 1: op.dtype = static_cast<DType>(unsigned_number("a dtype number", 255)); break;
        case 2: op.lanes = static_cast<std::uint8_t>(unsigned_number("a lane count", 255)); break;
        case 3: op.code = static_cast<std::uint8_t>(unsigned_number("a code number", 255)); break;
        case 4: op.attr = static_cast<std::uint32_t>(unsigned_number("an attr number", UINT32_MAX)); break;
        case 5:
          for (std::size_t i = 0; i < 3; ++i) {
            if (i > 0) expect(',');
            op.src[i] = raw_operand();
          }
          break;
        case 6: op.reserved = static_cast<std::uint32_t>(unsigned_number("a reserved number", UINT32_MAX)); break;
        default: op.imm = unsigned_number("an imm number", std::numeric_limits<std::uint64_t>::max()); break;
      }
    }
    if (!seen[0]) fail_at(peek(), "kind=");
    return builder_.append(op).id;
  }

  ValueId raw_operand() {
    const Token& t = peek();
    if (t.kind == Token::Kind::Name) return value();
    if (t.is_word("_")) {
      next();
      return kNoValue;
    }
    if (t.kind != Token::Kind::Absolute || t.text.size() < 2) fail_at(t, "an operand (%name, @N or _)");
    auto id = text_detail::parse_unsigned(t.text.substr(1), UINT32_MAX - 1);
    if (!id.ok()) fail_at(t, "an operand (%name, @N or _)", id.error().message);
    next();
    return static_cast<ValueId>(*id);
  }

  std::vector<Token> tokens_;
  std::size_t at_ = 0;
  Builder builder_;
  std::unordered_map<std::string, ValueId> names_;
  std::unordered_map<std::string, std::uint32_t> name_lines_;
  std::vector<std::uint32_t> lines_;
};

}  // namespace

Result<SourceKernel> parse_with_lines(std::string_view text) {
  try {
    return Parser().parse(text);
  } catch (const Failure& failure) {
    return make_error(ErrorCode::Parse, failure.message);
  }
}

Result<Kernel> parse(std::string_view text) {
  auto parsed = parse_with_lines(text);
  if (!parsed.ok()) return std::move(parsed).error();
  return std::move(parsed->kernel);
}

}  // namespace kiln::ir
