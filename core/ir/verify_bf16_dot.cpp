// The rules of BF16_PAIR and DOT_BF16 (kernel_ir.h): a pair is made of two
// bf16 values of one type and gives u32 words of their lanes; the dot takes
// an f32 accumulator and two such words of the same lanes and gives the
// accumulator's type. The rule names are bf16-pair-type and dot-bf16-type.
#include "verifier.hpp"

namespace kiln::ir::verify_detail {

bool Verifier::check_bf16_dot(ValueId id, const Op& op) {
  const std::uint8_t lanes = op.lanes;
  if (op.kind == OpKind::Bf16Pair) {
    const ValueType halves{DType::BF16, lanes}, words{DType::U32, lanes};
    if (type(id) != words)
      return fail(id, "bf16-pair-type", "bf16_pair gives u32 words, not " + type_name(type(id)));
    for (ValueId v : op.operands())
      if (type(v) != halves)
        return fail(id, "bf16-pair-type", "bf16_pair " + type_name(words) + " takes two " + type_name(halves) +
                                              " values, got " + type_name(type(v)));
    return true;
  }
  const ValueType acc{DType::F32, lanes}, words{DType::U32, lanes};
  if (type(id) != acc) return fail(id, "dot-bf16-type", "dot_bf16 gives f32, not " + type_name(type(id)));
  if (type(op.src[0]) != acc)
    return fail(id, "dot-bf16-type", "dot_bf16 " + type_name(acc) + ": the accumulator must be " + type_name(acc) +
                                         ", got " + type_name(type(op.src[0])));
  for (int i = 1; i <= 2; ++i)
    if (type(op.src[static_cast<std::size_t>(i)]) != words)
      return fail(id, "dot-bf16-type", "dot_bf16 " + type_name(acc) + ": " + (i == 1 ? "a" : "b") + " must be " +
                                           type_name(words) + " (bf16_pair words), got " +
                                           type_name(type(op.src[static_cast<std::size_t>(i)])));
  return true;
}

}  // namespace kiln::ir::verify_detail
