// Expr and Memory (kiln/ir/expr.hpp): the checks that keep an expression on
// one builder, and the operators that are more than one Builder call.
#include "kiln/ir/expr.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace kiln::ir {

Builder& Expr::builder() const {
  if (builder_ == nullptr) throw std::invalid_argument("kiln::ir::Expr: an operand has no builder (default-constructed Expr)");
  return *builder_;
}

void Expr::check_float_literal(double literal) const {
  const DType dtype = type().dtype;
  // A float literal on an integer operand would be truncated silently (i * 0.5
  // would multiply by 0); whole numbers are exact and allowed.
  if (!is_float(dtype) && literal != std::trunc(literal))
    throw std::invalid_argument("kiln::ir::Expr: the literal " + std::to_string(literal) + " is not exact in " +
                                type_name(type()) + " (write it as a " + type_name(type()) + " value or cast the operand)");
}

Expr Expr::splat(Value scalar) const {
  const std::uint8_t lanes = type().lanes;
  return Expr(builder(), lanes > 1 ? builder().broadcast(scalar, lanes) : scalar);
}

Builder& common_builder(const Expr& x, const Expr& y) {
  Builder& b = x.builder();
  if (&b != &y.builder()) throw std::invalid_argument("kiln::ir::Expr: the operands belong to two different builders");
  return b;
}

Expr Memory::load(const Expr& index, std::uint8_t lanes) const {
  if (&index.builder() != builder_) throw std::invalid_argument("kiln::ir::Memory: the index belongs to another builder");
  return Expr(*builder_, builder_->load(memory_, index, lanes));
}

void Memory::store(const Expr& index, const Expr& value) const {
  if (&index.builder() != builder_ || &value.builder() != builder_)
    throw std::invalid_argument("kiln::ir::Memory: the index or value belongs to another builder");
  builder_->store(memory_, index, value);
}

Expr operator&(const Expr& x, const Expr& y) {
  Builder& b = common_builder(x, y);
  return Expr(b, x.type().dtype == DType::Bool ? b.and_(x, y) : b.bit_and(x, y));
}

Expr operator|(const Expr& x, const Expr& y) {
  Builder& b = common_builder(x, y);
  return Expr(b, x.type().dtype == DType::Bool ? b.or_(x, y) : b.bit_or(x, y));
}

Expr operator<=(const Expr& x, const Expr& y) { return (x < y) | (x == y); }
Expr operator>=(const Expr& x, const Expr& y) { return (x > y) | (x == y); }

Expr operator-(const Expr& x) { return Expr(x.builder(), x.builder().neg(x)); }
Expr operator~(const Expr& x) { return Expr(x.builder(), x.builder().bit_not(x)); }

Expr select(const Expr& condition, const Expr& if_true, const Expr& if_false) {
  Builder& b = common_builder(condition, if_true);
  common_builder(if_true, if_false);
  return Expr(b, b.select(condition, if_true, if_false));
}

Expr cast(DType dtype, const Expr& x) { return Expr(x.builder(), x.builder().cast(dtype, x)); }

Expr mad(const Expr& a, const Expr& b, const Expr& c) {
  Builder& builder = common_builder(a, b);
  common_builder(b, c);
  return Expr(builder, builder.mad(a, b, c));
}

}  // namespace kiln::ir
