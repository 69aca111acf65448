// The rules of the warp-group MMA ops (kernel_ir.h, KILN_OP_WGMMA and its
// fence, commit and wait): A and B in f16/bf16 LOCAL storage (or f32, the
// tf32 form, whose A may come from registers: code 1), the tile pair an
// i64 x 2 vector, the accumulator REGISTER f32 storage of N / 2 elements or
// more, and warp-group collectives: LOCAL axis 0 a multiple of 128 threads,
// no enclosing IF or LOOP whose condition or trip count may differ between
// the threads of the work-group (the group-level analysis: warp groups are
// 4 warps, so the warp analysis does not describe them).
#include "verifier.hpp"

#include <kiln/sdk/wire.hpp>

namespace kiln::ir::verify_detail {

bool Verifier::check_wgmma(ValueId id, const Op& op) {
  const std::string name = "wgmma n" + std::to_string(op.attr);
  if (!sdk::wgmma_n_allowed(op.attr))
    return fail(id, "wgmma-n", "wgmma's n is a multiple of 8 from 8 to " + std::to_string(sdk::kWgmmaMaxN) + ", not " +
                                   std::to_string(op.attr));
  const Op& memory = kernel_[op.src[0]];
  if (memory.kind != OpKind::Storage || memory.scope() != Scope::Local)
    return fail(id, "wgmma-source", name + " reads A and B from LOCAL storage, not %" + std::to_string(op.src[0]));
  if ((memory.dtype != DType::F16 && memory.dtype != DType::BF16 && memory.dtype != DType::F32) || op.dtype != memory.dtype ||
      op.lanes != 1)
    return fail(id, "wgmma-type", name + " multiplies f16, bf16 or f32 (as tf32) storage, typed as its storage (" +
                                      std::string(dtype_name(memory.dtype)) + "), not " + type_name(type(id)));
  if (type(op.src[1]) != ValueType{DType::I64, 2})
    return fail(id, "wgmma-tiles", name + ": the tile indices (A, B) are an i64x2 vector, not " + type_name(type(op.src[1])));
  if (!sdk::wgmma_code_allowed(op.code, static_cast<unsigned>(op.dtype)))
    return fail(id, "wgmma-a-registers", name + ": A from registers (code 1) is the tf32 form's (f32) only, and the code is 0 or 1, not " +
                                             std::to_string(op.code));
  // Code 1: A's 4 fragment elements a thread follow the accumulator in its storage.
  const std::uint64_t elements = sdk::wgmma_register_elements(op.attr, op.code);
  const Op& acc = kernel_[op.src[2]];
  if (acc.kind != OpKind::Storage || acc.scope() != Scope::Register || acc.dtype != DType::F32 || acc.imm < elements)
    return fail(id, "wgmma-accumulator", name + " accumulates into REGISTER f32 storage of at least " + std::to_string(elements) +
                                             " elements" + (op.code == 1 ? " (A's fragments past the accumulator)" : "") + ", not %" +
                                             std::to_string(op.src[2]));
  return check_wgmma_collective(id, name);
}

bool Verifier::check_wgmma_collective(ValueId id, const std::string& name) {
  std::optional<std::int64_t> threads;
  for (ValueId i = 0; i < kernel_.size(); ++i)
    if (kernel_[i].kind == OpKind::Index && kernel_[i].scope() == Scope::Local && kernel_[i].attr == 0)
      threads = constant_int(kernel_, kernel_[i].src[0]);
  if (!threads || *threads % sdk::kWgmmaGroup != 0)
    return fail(id, "wgmma-group", name + " runs in warp groups of 128 threads: the kernel needs a local index on axis 0 "
                                          "of a multiple of 128 threads" +
                                          (threads ? " (it has " + std::to_string(*threads) + ")" : std::string(" (it has none)")));
  for (ValueId p = blocks_.parent[id]; p != kNoValue; p = blocks_.parent[p]) {
    const ValueId controller = kernel_[p].src[0];
    if (controller < varying_.size() && varying_[controller])
      return fail(id, "wgmma-uniform", name + " is inside the " + std::string(sdk::op_kind_name(static_cast<unsigned>(kernel_[p].kind))) +
                                           " at op " + std::to_string(p) + ", whose " +
                                           (kernel_[p].kind == OpKind::If ? "condition" : "trip count") +
                                           " may differ between the threads of a work-group (a warp group executes it together)");
  }
  return true;
}

}  // namespace kiln::ir::verify_detail
