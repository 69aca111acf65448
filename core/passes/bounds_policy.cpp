// The host's bounds policy (kiln/passes/bounds.hpp): what Device::compile
// lets through, and the launch-time proof of accesses that depend on
// VARIABLE params or on buffers of unknown length.
#include "kiln/passes/bounds.hpp"

#include "kiln/ir/dtype.hpp"

namespace kiln::passes {

using ir::OpKind;
using ir::ValueId;

std::string_view bounds_policy_name(BoundsPolicy policy) {
  switch (policy) {
    case BoundsPolicy::Prove: return "prove";
    case BoundsPolicy::Trust: return "trust";
    default: return "guard";
  }
}

std::optional<BoundsPolicy> parse_bounds_policy(std::string_view name) {
  if (name == "guard") return BoundsPolicy::Guard;
  if (name == "prove") return BoundsPolicy::Prove;
  if (name == "trust") return BoundsPolicy::Trust;
  return std::nullopt;
}

namespace {

Error refused(const ir::Kernel& kernel, const AccessBounds& access, const std::string& why) {
  Error e = make_error(ErrorCode::Verify, "bounds: " + describe_access(kernel, access) + why);
  e.function = "bounds";
  e.op = access.op;
  return e;
}

bool unknown_length(const ir::Kernel& kernel, const AccessBounds& access) {
  const ir::Op& memory = kernel[kernel[access.op].src[0]];
  return memory.kind == OpKind::Param && memory.imm == 0;
}

}  // namespace

Result<BoundedKernel> apply_bounds_policy(const ir::Kernel& kernel, BoundsPolicy policy) {
  const std::vector<AccessBounds> accesses = classify_accesses(kernel);
  std::vector<ValueId> guard;
  for (const AccessBounds& a : accesses) {
    if (a.verdict == AccessVerdict::OutOfRange) return refused(kernel, a, "");
    if (policy == BoundsPolicy::Trust || a.verdict == AccessVerdict::InRange) continue;
    const bool guardable = !unknown_length(kernel, a);
    if (a.verdict == AccessVerdict::Unknown && (policy == BoundsPolicy::Prove || !guardable))
      return refused(kernel, a,
                     policy == BoundsPolicy::Prove
                         ? " (bounds policy \"prove\"; \"guard\" would make it safe at a cost)"
                         : " (bounds policy \"guard\" needs the memory's length: declare it, or use \"trust\")");
    // Under "guard", what would be proved at launch is guarded instead when
    // it can be: the kernel then runs with any scalars.
    if (policy == BoundsPolicy::Guard && guardable) guard.push_back(a.op);
  }
  BoundedKernel out;
  out.kernel = guard.empty() ? kernel : guard_accesses(kernel, guard);
  out.guarded = guard.size();
  if (policy == BoundsPolicy::Trust) return out;
  for (const AccessBounds& a : guard.empty() ? accesses : classify_accesses(out.kernel)) {
    if (a.verdict == AccessVerdict::AtLaunch) out.launch_checks.push_back(a.op);
    if (a.verdict == AccessVerdict::Unknown || a.verdict == AccessVerdict::OutOfRange) {
      Error e = refused(out.kernel, a, " (after the bounds guard: a kiln bug)");
      e.code = ErrorCode::Internal;
      return e;
    }
  }
  return out;
}

Result<void> check_launch_bounds(const ir::Kernel& kernel, std::span<const ValueId> checks,
                                 std::span<const std::uint64_t> scalars, std::span<const std::uint64_t> elements) {
  if (checks.empty()) return {};
  // The kernel as this launch runs it: VARIABLE params become their values,
  // buffers of unknown length get the length of the buffer bound.
  ir::Kernel launched = kernel;
  for (ir::Op& op : launched.ops) {
    if (op.kind != OpKind::Param) continue;
    const std::uint32_t slot = op.attr;
    if (op.param_kind() == ir::ParamKind::Variable) {
      if (slot >= scalars.size() || !ir::bits_canonical(op.dtype, scalars[slot])) continue;
      const ir::DType dtype = op.dtype;
      op = ir::Op{};
      op.kind = OpKind::Const;
      op.dtype = dtype;
      op.imm = scalars[slot];
    } else if (op.imm == 0 && slot < elements.size()) {
      op.imm = elements[slot];
    }
  }
  const std::vector<AccessBounds> accesses = classify_accesses(launched);
  for (ValueId check : checks) {
    for (const AccessBounds& a : accesses) {
      if (a.op != check || a.verdict == AccessVerdict::InRange) continue;
      Error e = make_error(ErrorCode::InvalidArgument,
                           "bounds: with this launch's scalars and buffers, " + describe_access(launched, a));
      e.function = "launch";
      e.op = a.op;
      return e;
    }
  }
  return {};
}

}  // namespace kiln::passes
