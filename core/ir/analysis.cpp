#include "kiln/ir/analysis.hpp"

#include "kiln/ir/dtype.hpp"

#include <kiln/sdk/wire.hpp>

#include <array>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>

namespace kiln::ir {

namespace {

// The deepest GROUP length expression the host evaluates (sdk/grid.cpp).
constexpr int kMaxExpressionDepth = 64;

bool valid_operand(const Kernel& kernel, ValueId user, ValueId operand) {
  return operand < user && operand < kernel.size();
}

std::int64_t wrap(DType dtype, std::int64_t value) { return decode_int(dtype, encode_int(dtype, value)); }

std::int64_t wrapping(DType dtype, std::uint64_t bits) { return wrap(dtype, static_cast<std::int64_t>(bits)); }

// Integer semantics of kernel_ir.h for one BINARY op; nullopt for division
// by zero and for ops that are not integer ops.
std::optional<std::int64_t> integer_binary(BinaryOp op, DType dtype, std::int64_t x, std::int64_t y) {
  const bool is_signed = is_signed_int(dtype);
  const auto ux = static_cast<std::uint64_t>(x);
  const auto uy = static_cast<std::uint64_t>(y);
  const unsigned shift = static_cast<unsigned>(uy % dtype_bits(dtype));
  switch (op) {
    case BinaryOp::Add: return wrapping(dtype, ux + uy);
    case BinaryOp::Sub: return wrapping(dtype, ux - uy);
    case BinaryOp::Mul: return wrapping(dtype, ux * uy);
    case BinaryOp::Div:
    case BinaryOp::Mod: {
      if (y == 0) return std::nullopt;
      const bool is_div = op == BinaryOp::Div;
      if (!is_signed) return wrapping(dtype, is_div ? ux / uy : ux % uy);
      if (y == -1) return is_div ? wrapping(dtype, std::uint64_t{0} - ux) : 0;  // INT_MIN / -1 wraps
      return wrap(dtype, is_div ? x / y : x % y);
    }
    case BinaryOp::Max: return is_signed ? std::max(x, y) : wrapping(dtype, std::max(ux, uy));
    case BinaryOp::Min: return is_signed ? std::min(x, y) : wrapping(dtype, std::min(ux, uy));
    case BinaryOp::And: case BinaryOp::BitAnd: return wrapping(dtype, ux & uy);
    case BinaryOp::Or: case BinaryOp::BitOr: return wrapping(dtype, ux | uy);
    case BinaryOp::BitXor: return wrapping(dtype, ux ^ uy);
    case BinaryOp::Shl: return dtype == DType::Bool ? std::nullopt : std::optional(wrapping(dtype, ux << shift));
    case BinaryOp::Shr:
      if (dtype == DType::Bool) return std::nullopt;
      return is_signed ? wrap(dtype, x >> shift) : wrapping(dtype, ux >> shift);
    case BinaryOp::CmpLt: return is_signed ? x < y : ux < uy;
    case BinaryOp::CmpGt: return is_signed ? x > y : ux > uy;
    case BinaryOp::Eq: return x == y;
    case BinaryOp::NotEq: return x != y;
    default: return std::nullopt;
  }
}

// The ops evaluate_expression walks through to their operands.
bool is_expression(OpKind kind) { return kind == OpKind::Cast || kind == OpKind::Unary || kind == OpKind::Binary; }

// Evaluates `compute` on `root` and on every op it reaches through the
// operands of CAST, UNARY and BINARY ops (the expression ops), each op once
// and without recursion: shared subexpressions (x1 = x0 + x0, x2 = x1 + x1,
// ...) cost one visit each, and long chains cannot overflow the stack.
// `compute(id, operand)` gets a function giving each operand's result
// (nullptr when the operand does not name an earlier op).
// `done` holds results already computed for this kernel (shared by calls
// that evaluate many roots, e.g. AffineForms): an unordered_map from op to
// result, or anything with its count, at and emplace.
template <class T, class Compute, class Memo>
std::optional<T> evaluate_expression(const Kernel& kernel, ValueId root, Compute&& compute, Memo& done) {
  if (root >= kernel.size()) return std::nullopt;
  auto expands = [&](ValueId id) { return is_expression(kernel[id].kind); };
  std::vector<std::pair<ValueId, bool>> stack = {{root, false}};
  while (!stack.empty()) {
    const ValueId id = stack.back().first;  // not a structured binding: lambdas below capture it
    const bool operands_done = stack.back().second;
    if (done.count(id) != 0) {
      stack.pop_back();
      continue;
    }
    if (!operands_done && expands(id)) {
      stack.back().second = true;
      for (ValueId v : kernel[id].operands())
        if (valid_operand(kernel, id, v) && done.count(v) == 0) stack.emplace_back(v, false);
      continue;
    }
    stack.pop_back();
    auto operand = [&](std::size_t i) -> const std::optional<T>* {
      const ValueId v = kernel[id].src[i];
      if (!valid_operand(kernel, id, v) || !expands(id)) return nullptr;
      return &done.at(v);
    };
    done.emplace(id, compute(id, operand));
  }
  return done.at(root);
}

template <class T, class Compute>
std::optional<T> evaluate_expression(const Kernel& kernel, ValueId root, Compute&& compute) {
  // A leaf (a CONST, a loop's counter, a PARAM) has no operands to walk: no
  // table. Most questions are about leaves (a loop's constant trip count,
  // asked by the verifier for every access inside the loop).
  if (root < kernel.size() && !is_expression(kernel[root].kind))
    return compute(root, [](std::size_t) -> const std::optional<T>* { return nullptr; });
  std::unordered_map<ValueId, std::optional<T>> done;
  return evaluate_expression<T>(kernel, root, std::forward<Compute>(compute), done);
}

std::optional<std::int64_t> fold_one(const Kernel& kernel, ValueId id,
                                     const std::function<const std::optional<std::int64_t>*(std::size_t)>& operand) {
  const Op& op = kernel[id];
  if (op.lanes != 1 || !(is_int(op.dtype) || op.dtype == DType::Bool)) return std::nullopt;
  auto value = [&](std::size_t i) -> std::optional<std::int64_t> {
    const auto* v = operand(i);
    return v != nullptr ? *v : std::nullopt;
  };
  switch (op.kind) {
    case OpKind::Const:
      return decode_int(op.dtype, op.imm);
    case OpKind::Cast: {
      const auto x = value(0);  // nullopt for float sources: not an integer expression
      return x ? std::optional(wrap(op.dtype, *x)) : std::nullopt;
    }
    case OpKind::Unary: {
      const auto x = value(0);
      if (!x || op.dtype == DType::Bool) return x && op.unary() == UnaryOp::BitNot ? std::optional<std::int64_t>(*x == 0) : std::nullopt;
      const auto negated = wrapping(op.dtype, 0 - static_cast<std::uint64_t>(*x));
      switch (op.unary()) {
        case UnaryOp::Neg: return negated;
        case UnaryOp::Abs: return *x < 0 ? negated : *x;
        case UnaryOp::BitNot: return wrap(op.dtype, ~*x);
        default: return std::nullopt;
      }
    }
    case OpKind::Binary: {
      const auto x = value(0);
      const auto y = value(1);
      if (!x || !y || kernel[op.src[0]].dtype != kernel[op.src[1]].dtype) return std::nullopt;
      return integer_binary(op.binary(), kernel[op.src[0]].dtype, *x, *y);
    }
    default:
      return std::nullopt;
  }
}

// into += scale * from; both forms' terms are ascending by atom, and so is
// the sum (merged in one pass: the verifier forms every access's index).
bool add_scaled(AffineForm& into, const AffineForm& from, std::int64_t scale) {
  std::int64_t c = 0;
  if (__builtin_mul_overflow(from.constant, scale, &c) || __builtin_add_overflow(into.constant, c, &into.constant))
    return false;
  std::vector<std::pair<ValueId, std::int64_t>> merged;
  merged.reserve(into.terms.size() + from.terms.size());
  auto mine = into.terms.begin();
  for (const auto& [atom, coefficient] : from.terms) {
    for (; mine != into.terms.end() && mine->first < atom; ++mine) merged.push_back(*mine);
    std::int64_t sum = 0;
    if (__builtin_mul_overflow(coefficient, scale, &sum)) return false;
    if (mine != into.terms.end() && mine->first == atom) {
      if (__builtin_add_overflow(mine->second, sum, &sum)) return false;
      ++mine;
    }
    if (sum != 0) merged.emplace_back(atom, sum);
  }
  merged.insert(merged.end(), mine, into.terms.end());
  into.terms = std::move(merged);
  return true;
}

std::optional<AffineForm> affine_one(const Kernel& kernel, ValueId id,
                                     const std::function<const std::optional<AffineForm>*(std::size_t)>& operand) {
  const Op& op = kernel[id];
  if (op.dtype != DType::I64 || op.lanes != 1 || !op.has_result()) return std::nullopt;
  if (op.kind == OpKind::Const) return AffineForm{decode_int(DType::I64, op.imm), {}};
  AffineForm atom;
  atom.terms.emplace_back(id, 1);
  auto combine = [&](std::initializer_list<std::pair<std::size_t, std::int64_t>> parts) -> std::optional<AffineForm> {
    AffineForm sum;
    for (const auto& [i, scale] : parts) {
      const auto* part = operand(i);
      if (part == nullptr || !*part || !add_scaled(sum, **part, scale)) return std::nullopt;
    }
    return sum;
  };
  if (op.kind == OpKind::Unary && op.unary() == UnaryOp::Neg) return combine({{0, -1}});
  if (op.kind != OpKind::Binary) return atom;
  switch (op.binary()) {
    case BinaryOp::Add: return combine({{0, 1}, {1, 1}});
    case BinaryOp::Sub: return combine({{0, 1}, {1, -1}});
    case BinaryOp::Mul: {
      if (!valid_operand(kernel, id, op.src[0]) || !valid_operand(kernel, id, op.src[1])) return std::nullopt;
      if (auto c = constant_int(kernel, op.src[1])) return combine({{0, *c}});
      if (auto c = constant_int(kernel, op.src[0])) return combine({{1, *c}});
      return atom;
    }
    case BinaryOp::Shl: {
      const auto s = valid_operand(kernel, id, op.src[1]) ? constant_int(kernel, op.src[1]) : std::nullopt;
      if (s && *s >= 0 && *s < 63) return combine({{0, std::int64_t{1} << *s}});
      return atom;
    }
    default:
      return atom;
  }
}

}  // namespace

bool Blocks::encloses(ValueId block, ValueId id) const {
  // Blocks nest as a stack (analyze_blocks), so a block encloses exactly the
  // ops after it up to its END (to the kernel's end when never closed). A
  // LOOP/IF is the parent of the op after it; no other op is.
  if (id >= parent.size() || block >= id || parent[block + 1] != block) return false;
  return end[block] == kNoValue || id <= end[block];
}

ValueId Blocks::value_block(const Kernel& kernel, ValueId id) const {
  if (id >= parent.size()) return kNoValue;
  return kernel[id].kind == OpKind::Loop ? id : parent[id];
}

Blocks analyze_blocks(const Kernel& kernel) {
  const std::size_t n = kernel.size();
  Blocks blocks;
  blocks.parent.assign(n, kNoValue);
  blocks.end.assign(n, kNoValue);
  blocks.depth.assign(n, 0);
  blocks.loop_depth.assign(n, 0);
  std::vector<ValueId> open;
  std::uint32_t loops_open = 0;
  for (ValueId id = 0; id < n; ++id) {
    const Op& op = kernel[id];
    blocks.parent[id] = open.empty() ? kNoValue : open.back();
    blocks.depth[id] = static_cast<std::uint32_t>(open.size());
    blocks.loop_depth[id] = loops_open;
    if ((op.kind == OpKind::EndLoop || op.kind == OpKind::EndIf) && !open.empty()) {
      blocks.end[open.back()] = id;
      if (kernel[open.back()].kind == OpKind::Loop) --loops_open;
      open.pop_back();
    }
    if (op.kind == OpKind::Loop || op.kind == OpKind::If) {
      open.push_back(id);
      if (op.kind == OpKind::Loop) ++loops_open;
    }
  }
  return blocks;
}

std::vector<std::uint32_t> use_counts(const Kernel& kernel) {
  std::vector<std::uint32_t> counts(kernel.size(), 0);
  for (const Op& op : kernel.ops)
    for (ValueId v : op.operands())
      if (v < counts.size()) ++counts[v];
  return counts;
}

std::vector<bool> loop_invariant_values(const Kernel& kernel, const Blocks& blocks, ValueId loop) {
  const std::size_t n = kernel.size();
  std::vector<bool> written_in_loop(n, false);
  for (ValueId id = 0; id < n; ++id) {
    const Op& op = kernel[id];
    if ((op.kind == OpKind::Store || op.kind == OpKind::CopyAsync) && op.src[0] < n && blocks.encloses(loop, id))
      written_in_loop[op.src[0]] = true;
    if (op.kind == OpKind::Wgmma && op.src[2] < n && blocks.encloses(loop, id)) written_in_loop[op.src[2]] = true;
  }
  std::vector<bool> invariant(n, false);
  for (ValueId id = 0; id < n; ++id) {
    const Op& op = kernel[id];
    if (!op.has_result() || id == loop) continue;
    if (!blocks.encloses(loop, id)) {
      invariant[id] = true;
      continue;
    }
    bool operands_invariant = true;
    for (ValueId v : op.operands()) operands_invariant = operands_invariant && valid_operand(kernel, id, v) && invariant[v];
    switch (op.kind) {
      case OpKind::Const:
        invariant[id] = true;
        break;
      case OpKind::Unary: case OpKind::Binary: case OpKind::Cast: case OpKind::Mad: case OpKind::Select:
      case OpKind::Broadcast: case OpKind::Insert: case OpKind::Extract:
        invariant[id] = operands_invariant;
        break;
      case OpKind::Load:
        invariant[id] = operands_invariant && !written_in_loop[op.src[0]];
        break;
      default:
        break;
    }
  }
  return invariant;
}

bool is_loop_invariant(const Kernel& kernel, ValueId value, ValueId loop) {
  if (value >= kernel.size()) return false;
  return loop_invariant_values(kernel, analyze_blocks(kernel), loop)[value];
}

namespace {

// False when op `root` cannot fold to a constant, found within a few ops:
// fold_one needs every operand of the ops it folds, so one op on the way
// that cannot fold (not an integer scalar, or a LOAD, an INDEX, a loop's
// counter) decides it. The passes ask constant_int of nearly every operand,
// and most are not constants. True means "maybe": the full walk decides.
bool may_fold(const Kernel& kernel, ValueId root) {
  constexpr std::size_t kMostOps = 32;
  std::array<ValueId, kMostOps> stack;
  std::size_t size = 0, visited = 0;
  stack[size++] = root;
  while (size > 0) {
    const ValueId id = stack[--size];
    if (id >= kernel.size()) return false;
    const Op& op = kernel[id];
    if (op.lanes != 1 || !(is_int(op.dtype) || op.dtype == DType::Bool)) return false;
    if (op.kind == OpKind::Const) continue;
    if (!is_expression(op.kind)) return false;
    if (++visited > kMostOps) return true;
    for (const ValueId v : op.operands()) {
      if (!valid_operand(kernel, id, v)) return false;
      if (size == kMostOps) return true;
      stack[size++] = v;
    }
  }
  return true;
}

}  // namespace

std::optional<std::int64_t> constant_int(const Kernel& kernel, ValueId id) {
  if (!may_fold(kernel, id)) return std::nullopt;
  return evaluate_expression<std::int64_t>(kernel, id, [&](ValueId at, const auto& operand) {
    return fold_one(kernel, at, operand);
  });
}

std::optional<double> constant_double(const Kernel& kernel, ValueId id) {
  if (id < kernel.size() && kernel[id].kind == OpKind::Const && kernel[id].lanes == 1 && dtype_valid(kernel[id].dtype))
    return decode_double(kernel[id].dtype, kernel[id].imm);
  if (auto value = constant_int(kernel, id)) {
    if (kernel[id].dtype == DType::U64) return static_cast<double>(static_cast<std::uint64_t>(*value));
    return static_cast<double>(*value);
  }
  return std::nullopt;
}

std::optional<AffineForm> affine_form(const Kernel& kernel, ValueId id) {
  return evaluate_expression<AffineForm>(kernel, id, [&](ValueId at, const auto& operand) {
    return affine_one(kernel, at, operand);
  });
}

namespace {

// AffineForms' table: a slot per op of the kernel, as unordered_map's
// count, at and emplace (no hashing or node per entry).
struct DenseForms {
  std::vector<bool>& known;
  std::vector<std::optional<AffineForm>>& forms;
  std::size_t count(ValueId id) const { return known[id] ? 1 : 0; }
  const std::optional<AffineForm>& at(ValueId id) const { return forms[id]; }
  void emplace(ValueId id, std::optional<AffineForm> form) {
    forms[id] = std::move(form);
    known[id] = true;
  }
};

}  // namespace

std::optional<AffineForm> AffineForms::of(ValueId id) {
  if (known_.size() != kernel_.size()) {
    known_.assign(kernel_.size(), false);
    forms_.assign(kernel_.size(), std::nullopt);
  }
  DenseForms done{known_, forms_};
  return evaluate_expression<AffineForm>(
      kernel_, id, [&](ValueId at, const auto& operand) { return affine_one(kernel_, at, operand); }, done);
}

std::optional<std::string> not_host_evaluable(const Kernel& kernel, ValueId id) {
  // The reason, or "" when evaluable; depth = the longest operand chain.
  struct Verdict {
    std::string why;
    int depth = 0;
  };
  const auto verdict = evaluate_expression<Verdict>(kernel, id, [&](ValueId at, const auto& operand) {
    const Op& op = kernel[at];
    const std::string name = "op " + std::to_string(at);
    auto no = [](std::string why) { return Verdict{std::move(why), 0}; };
    if (op.lanes != 1 || !(is_int(op.dtype) || op.dtype == DType::Bool))
      return no(name + " is " + std::string(dtype_name(op.dtype)) + (op.lanes != 1 ? " x" + std::to_string(op.lanes) : "") +
                ", not an integer scalar");
    auto from_operands = [&]() {
      Verdict v;
      for (std::size_t i = 0; i < op.operand_count(); ++i) {
        const auto* sub = operand(i);
        if (sub == nullptr) return no(name + ": operand " + std::to_string(i) + " does not precede it");
        if (!(*sub)->why.empty()) return **sub;
        v.depth = std::max(v.depth, (*sub)->depth + 1);
      }
      if (v.depth > kMaxExpressionDepth) return no(name + ": expression deeper than " + std::to_string(kMaxExpressionDepth));
      return v;
    };
    switch (op.kind) {
      case OpKind::Const: return Verdict{};
      case OpKind::Param:
        return op.param_kind() == ParamKind::Variable ? Verdict{} : no(name + " is a buffer");
      case OpKind::Cast: return from_operands();
      case OpKind::Unary:
        if (op.unary() == UnaryOp::Neg || op.unary() == UnaryOp::Abs || op.unary() == UnaryOp::BitNot) return from_operands();
        return no(name + " is " + std::string(sdk::unary_name(op.code)));
      case OpKind::Binary:
        switch (op.binary()) {
          case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Mod:
          case BinaryOp::Max: case BinaryOp::Min: case BinaryOp::And: case BinaryOp::Or: case BinaryOp::BitAnd:
          case BinaryOp::BitOr: case BinaryOp::BitXor: case BinaryOp::Shl: case BinaryOp::Shr:
            return from_operands();
          default:
            return no(name + " is " + std::string(sdk::binary_name(op.code)));
        }
      default:
        return no(name + " is a " + std::string(sdk::op_kind_name(static_cast<unsigned>(op.kind))) +
                  " (only consts, var params and integer arithmetic on them)");
    }
  });
  if (!verdict) return "op " + std::to_string(id) + " does not exist";
  if (verdict->why.empty()) return std::nullopt;
  return verdict->why;
}

std::optional<std::pair<std::int64_t, std::int64_t>> atom_range(const Kernel& kernel, ValueId id) {
  if (id >= kernel.size()) return std::nullopt;
  const Op& op = kernel[id];
  if (op.kind != OpKind::Index && op.kind != OpKind::Loop) return std::nullopt;
  if (!valid_operand(kernel, id, op.src[0])) return std::nullopt;
  const auto length = constant_int(kernel, op.src[0]);
  if (!length || *length <= 0) return std::nullopt;
  return std::pair<std::int64_t, std::int64_t>{0, *length - 1};
}

namespace {

// Whether the value of op `id` is the same in every thread of a warp of 32
// even though an operand varies: x / (32 c) and x >> (5 + c) of the LOCAL
// axis-0 index x (with axis 0 a multiple of 32, a warp is 32 consecutive x of
// one row, so its x / 32 is one number).
bool warp_index_quotient(const Kernel& kernel, const Op& op) {
  if (op.kind != OpKind::Binary || (op.binary() != BinaryOp::Div && op.binary() != BinaryOp::Shr)) return false;
  const ValueId x = op.src[0];
  if (x >= kernel.size() || kernel[x].kind != OpKind::Index || kernel[x].scope() != Scope::Local || kernel[x].attr != 0)
    return false;
  const auto by = constant_int(kernel, op.src[1]);
  if (!by) return false;
  return op.binary() == BinaryOp::Div ? *by > 0 && *by % 32 == 0 : *by >= 5 && *by < 64;
}

// Values that may differ between the threads of a group (warp = false) or
// of a warp (warp = true).
std::vector<bool> varying_values(const Kernel& kernel, const Blocks& blocks, bool warp) {
  const std::size_t n = kernel.size();
  std::vector<bool> varying(n, false);
  std::vector<bool> tainted(n, false);  // memory written with thread-dependent data
  auto control_varies = [&](ValueId id) {
    for (ValueId p = blocks.parent[id]; p != kNoValue; p = blocks.parent[p]) {
      const ValueId controller = kernel[p].src[0];
      if (controller < n && varying[controller]) return true;
    }
    return false;
  };
  // Taint only grows, so this settles within (number of memories + 1) rounds.
  for (bool changed = true; changed;) {
    changed = false;
    for (ValueId id = 0; id < n; ++id) {
      const Op& op = kernel[id];
      bool any_operand = false;
      for (ValueId v : op.operands()) any_operand = any_operand || (v < n && varying[v]);
      if (op.kind == OpKind::Index) {
        varying[id] = (op.scope() == Scope::Local && (!warp || op.attr == 0)) || any_operand;
      } else if (op.kind == OpKind::Load) {
        varying[id] = any_operand || (op.src[0] < n && tainted[op.src[0]]);
      } else if (op.kind == OpKind::Store || op.kind == OpKind::CopyAsync) {
        if (op.src[0] < n && !tainted[op.src[0]] && (any_operand || control_varies(id))) {
          tainted[op.src[0]] = true;
          changed = true;
        }
      } else if (op.kind == OpKind::Wgmma) {
        if (op.src[2] < n && !tainted[op.src[2]]) {  // each thread holds its own part of D
          tainted[op.src[2]] = true;
          changed = true;
        }
      } else if (op.kind == OpKind::Mma || op.kind == OpKind::LoadMatrix) {
        varying[id] = true;  // each thread holds its own part of D (of the matrices)
      } else if (op.has_result()) {
        varying[id] = any_operand && !(warp && warp_index_quotient(kernel, op));
      }
    }
  }
  return varying;
}

}  // namespace

std::vector<bool> thread_varying(const Kernel& kernel, const Blocks& blocks) {
  return varying_values(kernel, blocks, false);
}

std::vector<bool> warp_varying(const Kernel& kernel, const Blocks& blocks) {
  return varying_values(kernel, blocks, true);
}

}  // namespace kiln::ir
