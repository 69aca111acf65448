// The rules of SUBGROUP_REDUCE (kernel_ir.h): the reduction and width, the
// type (a non-bool scalar, the operand's), a work-group of a multiple of
// `width` threads, and no enclosing IF or LOOP whose condition or trip count
// may differ between the group's threads. The last is stricter than MMA's
// warp rule on purpose: subgroups follow the linear local index and may be
// up to 64 wide, so the warp analysis (32 consecutive threads of axis 0)
// does not describe them; a condition the same in the whole group is
// uniform in every subgroup whatever its width.
#include "verifier.hpp"

#include <kiln/sdk/wire.hpp>

namespace kiln::ir::verify_detail {

bool Verifier::check_subgroup_reduce(ValueId id, const Op& op) {
  if (!sdk::subgroup_reduction_allowed(op.code))
    return fail(id, "subgroup-reduction", "subgroup_reduce takes add, mul, max or min, not " +
                                              std::string(sdk::binary_name(op.code)));
  const std::string name = "subgroup_reduce " + std::string(sdk::binary_name(op.code));
  if (!sdk::subgroup_width_allowed(op.attr))
    return fail(id, "subgroup-width", name + ": the width must be a power of two from 2 to " +
                                          std::to_string(sdk::kMaxSubgroupWidth) + ", not " + std::to_string(op.attr));
  if (op.lanes != 1 || op.dtype == DType::Bool)
    return fail(id, "subgroup-type", name + " reduces a scalar number, not " + type_name(type(id)));
  if (type(op.src[0]) != type(id))
    return fail(id, "subgroup-type", name + " gives its operand's type " + type_name(type(op.src[0])) + ", not " +
                                         type_name(type(id)));
  std::int64_t threads = 1;
  for (ValueId i = 0; i < kernel_.size(); ++i)
    if (kernel_[i].kind == OpKind::Index && kernel_[i].scope() == Scope::Local)
      threads *= constant_int(kernel_, kernel_[i].src[0]).value_or(1);
  if (threads % op.attr != 0)
    return fail(id, "subgroup-group", name + " runs in subgroups of " + std::to_string(op.attr) +
                                          " threads: the work-group's " + std::to_string(threads) +
                                          " threads are not a multiple");
  for (ValueId p = blocks_.parent[id]; p != kNoValue; p = blocks_.parent[p]) {
    const ValueId controller = kernel_[p].src[0];
    if (controller < varying_.size() && varying_[controller])
      return fail(id, "subgroup-uniform", name + " is inside the " +
                                              std::string(sdk::op_kind_name(static_cast<unsigned>(kernel_[p].kind))) +
                                              " at op " + std::to_string(p) + ", whose " +
                                              (kernel_[p].kind == OpKind::If ? "condition" : "trip count") +
                                              " may differ between the threads of a work-group (every thread of a "
                                              "subgroup must execute it together)");
  }
  return true;
}

}  // namespace kiln::ir::verify_detail
