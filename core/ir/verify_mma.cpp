// The rules of the MMA op (kernel_ir.h, KILN_OP_MMA): shape and input dtype,
// the fragment types of A, B, C and D, and that it runs in whole warps: a
// LOCAL axis 0 of a multiple of 32 threads, and no enclosing IF or LOOP
// whose condition or trip count may differ between a warp's threads (the
// threads of a warp exchange their fragments, so all of them must be there).
#include "verifier.hpp"

#include <kiln/sdk/wire.hpp>

namespace kiln::ir::verify_detail {

bool Verifier::check_mma(ValueId id, const Op& op) {
  const unsigned shape = op.code;
  const sdk::MmaShapeInfo info = sdk::mma_shape_info(shape);
  if (info.m == 0) return fail(id, "mma-shape", "unknown mma shape " + std::to_string(shape) + " (m16n8k16 or m16n8k8)");
  const std::string name = "mma " + std::string(sdk::mma_shape_name(shape));
  if (!sdk::mma_input_allowed(shape, op.attr))
    return fail(id, "mma-type", name + " takes " + (shape == KILN_MMA_M16N8K16 ? "f16 or bf16" : "f32 (as tf32)") +
                                    " inputs, not dtype " + std::to_string(op.attr));
  const auto input = static_cast<DType>(op.attr);
  const ValueType a{input, static_cast<std::uint8_t>(info.a_lanes)};
  const ValueType b{input, static_cast<std::uint8_t>(info.b_lanes)};
  const ValueType c{DType::F32, static_cast<std::uint8_t>(info.c_lanes)};
  if (type(id) != c) return fail(id, "mma-type", name + " gives " + type_name(c) + ", not " + type_name(type(id)));
  if (type(op.src[0]) != a) return fail(id, "mma-type", name + ": A must be " + type_name(a) + ", got " + type_name(type(op.src[0])));
  if (type(op.src[1]) != b) return fail(id, "mma-type", name + ": B must be " + type_name(b) + ", got " + type_name(type(op.src[1])));
  if (type(op.src[2]) != c) return fail(id, "mma-type", name + ": C must be " + type_name(c) + ", got " + type_name(type(op.src[2])));

  std::optional<std::int64_t> threads;
  for (ValueId i = 0; i < kernel_.size(); ++i)
    if (kernel_[i].kind == OpKind::Index && kernel_[i].scope() == Scope::Local && kernel_[i].attr == 0)
      threads = constant_int(kernel_, kernel_[i].src[0]);
  if (!threads || *threads % sdk::kMmaWarp != 0)
    return fail(id, "mma-warp", name + " runs in warps of 32 threads: the kernel needs a local index on axis 0 of a "
                                       "multiple of 32 threads" +
                                       (threads ? " (it has " + std::to_string(*threads) + ")" : std::string(" (it has none)")));
  if (warp_varying_.empty()) warp_varying_ = warp_varying(kernel_, blocks_);
  for (ValueId p = blocks_.parent[id]; p != kNoValue; p = blocks_.parent[p]) {
    const ValueId controller = kernel_[p].src[0];
    if (controller < warp_varying_.size() && warp_varying_[controller])
      return fail(id, "mma-uniform", name + " is inside the " + std::string(sdk::op_kind_name(static_cast<unsigned>(kernel_[p].kind))) +
                                         " at op " + std::to_string(p) + ", whose " +
                                         (kernel_[p].kind == OpKind::If ? "condition" : "trip count") +
                                         " may differ between the threads of a warp (all 32 must execute it together)");
  }
  return true;
}

}  // namespace kiln::ir::verify_detail
