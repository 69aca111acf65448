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

  return check_warp_collective(id, name);
}

// A warp collective (MMA, LOAD_MATRIX): whole warps, warp-uniform control flow.
bool Verifier::check_warp_collective(ValueId id, const std::string& name) {
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

bool Verifier::check_load_matrix(ValueId id, const Op& op) {
  const std::string name = "load_matrix x" + std::to_string(op.attr) + (op.code == 1 ? " trans" : "");
  const Op& memory = kernel_[op.src[0]];
  if (memory.kind != OpKind::Storage || memory.scope() != Scope::Local)
    return fail(id, "load-matrix-source", name + " reads LOCAL storage, not %" + std::to_string(op.src[0]));
  if (op.attr != 1 && op.attr != 2 && op.attr != 4)
    return fail(id, "load-matrix-count", "load_matrix loads 1, 2 or 4 matrices, not " + std::to_string(op.attr));
  if (op.code > 1) return fail(id, "load-matrix-count", "load_matrix's code is 0 or 1 (transposed), not " + std::to_string(op.code));
  if (dtype_bytes(op.dtype) != 2 || op.dtype != memory.dtype || op.lanes != 2 * op.attr)
    return fail(id, "load-matrix-type", name + " gives " + std::to_string(2 * op.attr) + " 16-bit elements of the storage's dtype (" +
                                            std::string(dtype_name(memory.dtype)) + "), not " + type_name(type(id)));
  if (!is_i64_scalar(op.src[1])) return fail(id, "index-type", "the row index must be i64, got " + type_name(type(op.src[1])));
  if (const auto form = affine_forms_.of(op.src[1]); form) {
    bool residue_known = true;
    for (const auto& [atom, coefficient] : form->terms) residue_known = residue_known && coefficient % 8 == 0;
    if (residue_known && ((form->constant % 8) + 8) % 8 != 0)
      return fail(id, "alignment", name + " needs row indices that are multiples of 8 (16 bytes)");
  }
  return check_warp_collective(id, name);
}

}  // namespace kiln::ir::verify_detail
