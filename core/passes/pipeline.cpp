// The lowering pipeline as lists of named steps (pipeline.hpp). The order
// and the reasons for it are written in docs/passes.md.
#include "kiln/passes/pipeline.hpp"

#include "always_on.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

#include <functional>
#include <initializer_list>
#include <optional>

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

// A list of passes run once, or in rounds until the kernel stops changing.
struct Stage {
  const std::vector<Pass>& passes;
  bool to_fixed_point;
};

// What a checked lowering asks after each pass that changed the kernel: an
// error stops it.
using PassCheck = std::function<std::optional<Error>(const Pass& pass, const ir::Kernel& before, const ir::Kernel& after)>;

Result<ir::Kernel> run_stages(const ir::Kernel& kernel, std::initializer_list<Stage> stages, const DeviceInfo& device,
                              const PassCheck& check) {
  ir::Kernel current = kernel;
  for (const Stage& stage : stages) {
    for (int round = 0; round < (stage.to_fixed_point ? kMaxNormalizeRounds : 1); ++round) {
      std::optional<ir::Kernel> round_start;  // kept at the round's first change
      for (const Pass& pass : stage.passes) {
        ir::Kernel next = pass.run(current, device);
        if (next == current) continue;
        if (check)
          if (std::optional<Error> error = check(pass, current, next)) return std::move(*error);
        if (!round_start) round_start = std::move(current);
        current = std::move(next);
      }
      // A fixed point: no pass changed the kernel, or the round changed it back.
      if (!round_start || *round_start == current) break;
    }
  }
  return current;
}

// Whether every op's operands name earlier ops: what the passes index by
// without checking (kernel[op.src[i]]), so the next pass can read it.
bool operands_precede(const ir::Kernel& kernel) {
  for (ir::ValueId id = 0; id < kernel.size(); ++id)
    for (const ir::ValueId v : kernel[id].operands())
      if (v >= id) return false;
  return true;
}

// The stages, verified: the result once (ir::verify walks the whole kernel,
// and a tuning lowers hundreds of candidates of thousands of ops, each pass
// of each round after each step), and between passes only that operands
// precede their ops. When the result fails, the input is verified (an
// invalid input is the caller's: ErrorCode::Verify, e.g. an optimization's
// output), and otherwise the stages run again from it, each pass's output
// verified, so the error names the first pass that broke the kernel.
Result<ir::Kernel> run_stages_checked(const ir::Kernel& kernel, std::initializer_list<Stage> stages,
                                      const DeviceInfo& device) {
  if (!operands_precede(kernel)) return ir::verify(kernel).error();
  bool intact = true;
  Result<ir::Kernel> lowered = run_stages(kernel, stages, device, [&](const Pass&, const ir::Kernel&, const ir::Kernel& after) {
    intact = operands_precede(after);
    return intact ? std::nullopt : std::optional(make_error(ErrorCode::Internal, "operands out of order"));
  });
  if (intact && ir::verify(*lowered).ok()) return lowered;
  if (Result<void> valid = ir::verify(kernel); !valid.ok()) return std::move(valid).error();
  lowered = run_stages(kernel, stages, device, [](const Pass& pass, const ir::Kernel& before, const ir::Kernel& after) {
    std::optional<Error> error;
    if (Result<void> valid = ir::verify(after); !valid.ok()) {
      error = make_error(ErrorCode::Internal, "pass '" + std::string(pass.name) +
                                                  "' produced an invalid kernel (a bug in the pass): " +
                                                  valid.error().to_string() + "\nkernel before the pass:\n" + ir::print(before));
      error->function = "normalize";
    }
    return error;
  });
  if (!lowered.ok()) return lowered;
  return make_error(ErrorCode::Internal, "the passes gave an invalid kernel once and a valid one when run again "
                                         "(a pass that is not deterministic)");
}

}  // namespace

ir::Kernel normalize(const ir::Kernel& kernel, const DeviceInfo& device) {
  if (!ir::verify(kernel).ok()) return kernel;  // the passes rely on the IR rules
  return run_stages(kernel, {{always_on_passes(), true}}, device, nullptr).value();  // cannot fail unchecked
}

ir::Kernel finalize(const ir::Kernel& kernel, const DeviceInfo& device) {
  if (!ir::verify(kernel).ok()) return kernel;
  return run_stages(kernel, {{finalize_passes(), false}, {always_on_passes(), true}}, device, nullptr).value();
}

namespace detail {

Result<ir::Kernel> normalize_checked(const ir::Kernel& kernel, const DeviceInfo& device) {
  return run_stages_checked(kernel, {{always_on_passes(), true}}, device);
}

Result<ir::Kernel> finalize_checked(const ir::Kernel& kernel, const DeviceInfo& device) {
  return run_stages_checked(kernel, {{finalize_passes(), false}, {always_on_passes(), true}}, device);
}

Result<ir::Kernel> run_passes_checked(const ir::Kernel& kernel, const std::vector<Pass>& passes, const DeviceInfo& device) {
  return run_stages_checked(kernel, {{passes, false}}, device);
}

}  // namespace detail

}  // namespace kiln::passes
