// kiln/ir/expr.hpp - writes a kernel's arithmetic as C++ expressions.
//
//   Builder b;
//   Memory x{b, b.param(ParamKind::Global, DType::F32, n)};
//   Memory y{b, b.param(ParamKind::GlobalMut, DType::F32, n)};
//   Expr i{b, b.group_index(0, n)};
//   Expr v = x[i];
//   y.store(i, 0.5 * v * (1 + tanh(0.79788456 * (v + 0.044715 * v * v * v))));
//
// An Expr is a Value bound to the Builder that made it, so an operator knows
// where to append its op; every operator appends exactly the op its Builder
// method would (a + b is b.add(a, b)). C++ leaves the order of an operator's
// two operands open, so where both append ops (f(a) * g(b)) their order in
// the kernel is the compiler's; the values are the same. A literal takes
// the dtype and lanes of the other operand (an f16x4 value * 0.5 appends an
// f16 CONST and broadcasts it), so a formula reads the same for every dtype.
//
// Mistakes that the type system cannot catch throw std::invalid_argument when
// the expression is built, before any op is appended: operands of two
// builders, an Expr with no builder, or a floating literal that an integer
// operand would truncate (i * 0.5). Everything else (say, f32 + f16) is built
// as written and reported by verify(), as with the Builder's methods.
#pragma once

#include "kiln/ir/builder.hpp"

#include <concepts>
#include <cstdint>

namespace kiln::ir {

// A C++ number used as an operand: takes the type of the other operand.
template <class T>
concept Literal = std::integral<T> || std::floating_point<T>;

class Expr {
 public:
  Expr() = default;
  Expr(Builder& builder, Value value) : builder_(&builder), value_(value) {}

  Value value() const { return value_; }
  operator Value() const { return value_; }  // passes straight to Builder methods
  // The builder; throws std::invalid_argument when there is none.
  Builder& builder() const;
  ValueType type() const { return builder().type_of(value_); }

  // `literal` as a constant of this value's dtype and lanes.
  template <Literal T>
  Expr literal(T literal) const {
    if constexpr (std::floating_point<T>) check_float_literal(static_cast<double>(literal));
    return splat(builder().constant(type().dtype, literal));
  }

 private:
  void check_float_literal(double literal) const;
  Expr splat(Value scalar) const;

  Builder* builder_ = nullptr;
  Value value_;
};

// The one builder of two operands; throws std::invalid_argument when they differ.
Builder& common_builder(const Expr& x, const Expr& y);

// A buffer (PARAM or STORAGE) bound to its builder: m[i] loads one element.
class Memory {
 public:
  Memory(Builder& builder, Value memory) : builder_(&builder), memory_(memory) {}

  Value value() const { return memory_; }
  Expr operator[](const Expr& index) const { return load(index); }
  Expr operator[](std::int64_t index) const { return load(Expr(*builder_, builder_->constant_i64(index))); }
  Expr load(const Expr& index, std::uint8_t lanes = 1) const;
  void store(const Expr& index, const Expr& value) const;

 private:
  Builder* builder_;
  Value memory_;
};

// --- operators -------------------------------------------------------------
// Each takes (Expr, Expr), (Expr, literal) and (literal, Expr).
#define KILN_EXPR_LITERALS(OPERATOR)  \
  template <Literal T>                \
  Expr OPERATOR(const Expr& x, T y) { \
    return OPERATOR(x, x.literal(y)); \
  }                                   \
  template <Literal T>                \
  Expr OPERATOR(T x, const Expr& y) { \
    return OPERATOR(y.literal(x), y); \
  }
#define KILN_EXPR_BINARY(OPERATOR, METHOD)             \
  inline Expr OPERATOR(const Expr& x, const Expr& y) { \
    Builder& b = common_builder(x, y);                 \
    return Expr(b, b.METHOD(x, y));                    \
  }                                                    \
  KILN_EXPR_LITERALS(OPERATOR)

KILN_EXPR_BINARY(operator+, add)
KILN_EXPR_BINARY(operator-, sub)
KILN_EXPR_BINARY(operator*, mul)
KILN_EXPR_BINARY(operator/, div)
KILN_EXPR_BINARY(operator%, mod)
KILN_EXPR_BINARY(operator<, cmplt)
KILN_EXPR_BINARY(operator>, cmpgt)
KILN_EXPR_BINARY(operator==, eq)
KILN_EXPR_BINARY(operator!=, not_eq_)
KILN_EXPR_BINARY(operator^, bit_xor)
KILN_EXPR_BINARY(operator<<, shl)
KILN_EXPR_BINARY(operator>>, shr)
KILN_EXPR_BINARY(min, min)
KILN_EXPR_BINARY(max, max)
KILN_EXPR_BINARY(pow, pow)

// On bool operands AND / OR; on integers BIT_AND / BIT_OR.
Expr operator&(const Expr& x, const Expr& y);
Expr operator|(const Expr& x, const Expr& y);
// x <= y is (x < y) | (x == y): false when either is NaN, as in C++.
Expr operator<=(const Expr& x, const Expr& y);
Expr operator>=(const Expr& x, const Expr& y);
KILN_EXPR_LITERALS(operator&)
KILN_EXPR_LITERALS(operator|)
KILN_EXPR_LITERALS(operator<=)
KILN_EXPR_LITERALS(operator>=)
#undef KILN_EXPR_BINARY
#undef KILN_EXPR_LITERALS

Expr operator-(const Expr& x);
Expr operator~(const Expr& x);

// --- functions -------------------------------------------------------------
// kiln::ir::tanh(x) etc.; found by argument lookup, so tanh(x) works unqualified.
#define KILN_EXPR_UNARY(NAME) \
  inline Expr NAME(const Expr& x) { return Expr(x.builder(), x.builder().NAME(x)); }
KILN_EXPR_UNARY(exp)
KILN_EXPR_UNARY(exp2)
KILN_EXPR_UNARY(ln)
KILN_EXPR_UNARY(log2)
KILN_EXPR_UNARY(recip)
KILN_EXPR_UNARY(sqrt)
KILN_EXPR_UNARY(sin)
KILN_EXPR_UNARY(cos)
KILN_EXPR_UNARY(floor)
KILN_EXPR_UNARY(trunc)
KILN_EXPR_UNARY(abs)
KILN_EXPR_UNARY(tanh)
KILN_EXPR_UNARY(erf)
KILN_EXPR_UNARY(sigmoid)
KILN_EXPR_UNARY(rsqrt)
KILN_EXPR_UNARY(log1p)
KILN_EXPR_UNARY(expm1)
#undef KILN_EXPR_UNARY

// condition ? if_true : if_false, lane by lane; a literal branch takes the
// other branch's type.
Expr select(const Expr& condition, const Expr& if_true, const Expr& if_false);
template <Literal T>
Expr select(const Expr& condition, const Expr& if_true, T if_false) {
  return select(condition, if_true, if_true.literal(if_false));
}
template <Literal T>
Expr select(const Expr& condition, T if_true, const Expr& if_false) {
  return select(condition, if_false.literal(if_true), if_false);
}
// The same as select, under numpy's name.
template <class True, class False>
Expr where(const Expr& condition, const True& if_true, const False& if_false) {
  return select(condition, if_true, if_false);
}
Expr cast(DType dtype, const Expr& x);
Expr mad(const Expr& a, const Expr& b, const Expr& c);  // one MAD op: a * b + c

}  // namespace kiln::ir
