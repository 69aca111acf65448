// The lowering pipeline as lists of named steps (pipeline.hpp). The order
// and the reasons for it are written in docs/passes.md.
#include "kiln/passes/pipeline.hpp"

#include "always_on.hpp"
#include "kiln/ir/hash.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

namespace kiln::passes {

const std::vector<Pass>& always_on_passes() {
  static const std::vector<Pass> passes = {
      {"remove_unit_loops", detail::remove_unit_loops},
      {"fold_constants", detail::fold_constants},
      {"constants_to_top", detail::constants_to_top},
      {"licm", detail::hoist_loop_invariants},
      {"fold_accumulators", detail::fold_accumulators},
      {"remove_empty_ranges", detail::remove_empty_ranges},
      {"unfold_pows", detail::unfold_pows},
      {"simplify_algebra", detail::simplify_algebra},
      {"simplify_accumulating_loops", detail::simplify_accumulating_loops},
      {"canonicalize_operands", detail::canonicalize_operands},
      {"cse", detail::eliminate_common_subexpressions},
      {"schedule", detail::schedule_instructions},
      {"dce", detail::eliminate_dead_code},  // last: cleans up what the others left
  };
  return passes;
}

const std::vector<Pass>& finalize_passes() {
  static const std::vector<Pass> passes = {
      {"drop_prefetch", detail::drop_unclaimed_prefetch},
      {"lower_math", detail::lower_math},
      {"exp_base", detail::convert_exp_base},
      {"fuse_mad", detail::fuse_multiply_add},
  };
  return passes;
}

const Pass* find_pass(std::string_view name) {
  for (const auto* list : {&always_on_passes(), &finalize_passes()})
    for (const Pass& pass : *list)
      if (pass.name == name) return &pass;
  return nullptr;
}

namespace {

// Runs `passes` once in order; with `check`, verifies after each pass.
Result<ir::Kernel> run_passes(const ir::Kernel& kernel, const std::vector<Pass>& passes, const DeviceInfo& device,
                              bool check) {
  ir::Kernel current = kernel;
  for (const Pass& pass : passes) {
    ir::Kernel next = pass.run(current, device);
    // A pass that changed nothing needs no check (its input passed one, or
    // is the caller's); most passes of a round change nothing, and the
    // round that confirms the fixed point changes nothing at all.
    if (check && !(next == current)) {
      if (Result<void> valid = ir::verify(next); !valid.ok()) {
        Error error = make_error(ErrorCode::Internal, "pass '" + std::string(pass.name) +
                                                          "' produced an invalid kernel (a bug in the pass): " +
                                                          valid.error().to_string() + "\nkernel before the pass:\n" +
                                                          ir::print(current));
        error.function = "normalize";
        return error;
      }
    }
    current = std::move(next);
  }
  return current;
}

Result<ir::Kernel> normalize_impl(const ir::Kernel& kernel, const DeviceInfo& device, bool check) {
  ir::Kernel current = kernel;
  std::uint64_t before = ir::hash(current);
  for (int round = 0; round < kMaxNormalizeRounds; ++round) {
    KILN_TRY_ASSIGN(current, run_passes(current, always_on_passes(), device, check));
    const std::uint64_t after = ir::hash(current);
    if (after == before) break;
    before = after;
  }
  return current;
}

Result<ir::Kernel> finalize_impl(const ir::Kernel& kernel, const DeviceInfo& device, bool check) {
  KILN_TRY_ASSIGN(ir::Kernel lowered, run_passes(kernel, finalize_passes(), device, check));
  return normalize_impl(lowered, device, check);
}

}  // namespace

ir::Kernel normalize(const ir::Kernel& kernel, const DeviceInfo& device) {
  if (!ir::verify(kernel).ok()) return kernel;  // the passes rely on the IR rules
  return normalize_impl(kernel, device, false).value();  // cannot fail unchecked
}

ir::Kernel finalize(const ir::Kernel& kernel, const DeviceInfo& device) {
  if (!ir::verify(kernel).ok()) return kernel;
  return finalize_impl(kernel, device, false).value();
}

namespace detail {

Result<ir::Kernel> normalize_checked(const ir::Kernel& kernel, const DeviceInfo& device) {
  return normalize_impl(kernel, device, true);
}

Result<ir::Kernel> finalize_checked(const ir::Kernel& kernel, const DeviceInfo& device) {
  return finalize_impl(kernel, device, true);
}

}  // namespace detail

}  // namespace kiln::passes
