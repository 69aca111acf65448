// The always-on passes and finalize passes, one per file in core/passes/
// (internal to libkiln; pipeline.cpp lists them in order, tests call them
// directly). Each is a pure function kernel -> kernel that preserves the
// results the reference interpreter gives on every valid kernel, and returns
// a kernel that passes ir::verify when its input does.
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/passes/pipeline.hpp"
#include "kiln/result.hpp"
#include "kiln/runtime/device_info.hpp"

#include <vector>

namespace kiln::passes::detail {

using ir::Kernel;

// --- normalize, in pipeline order (docs/passes.md says why this order) -----
Kernel remove_unit_loops(const Kernel& kernel, const DeviceInfo& device);        // remove_unit_loops.cpp
Kernel fold_constants(const Kernel& kernel, const DeviceInfo& device);           // fold_constants.cpp
Kernel constants_to_top(const Kernel& kernel, const DeviceInfo& device);         // constants_to_top.cpp
Kernel hoist_loop_invariants(const Kernel& kernel, const DeviceInfo& device);    // licm.cpp
Kernel fold_accumulators(const Kernel& kernel, const DeviceInfo& device);        // fold_accumulators.cpp
Kernel remove_empty_ranges(const Kernel& kernel, const DeviceInfo& device);      // remove_empty_ranges.cpp
Kernel unfold_pows(const Kernel& kernel, const DeviceInfo& device);              // unfold_pows.cpp
Kernel simplify_algebra(const Kernel& kernel, const DeviceInfo& device);         // simplify_algebra.cpp
Kernel simplify_accumulating_loops(const Kernel& kernel, const DeviceInfo& device);  // simplify_accumulating_loops.cpp
Kernel canonicalize_operands(const Kernel& kernel, const DeviceInfo& device);    // canonicalize_operands.cpp
Kernel eliminate_common_subexpressions(const Kernel& kernel, const DeviceInfo& device);  // cse.cpp
Kernel schedule_instructions(const Kernel& kernel, const DeviceInfo& device);    // schedule.cpp
Kernel eliminate_dead_code(const Kernel& kernel, const DeviceInfo& device);      // dce.cpp

// --- finalize ----------------------------------------------------------------
Kernel lower_math(const Kernel& kernel, const DeviceInfo& device);               // lower_math.cpp (also Device::compile)
Kernel drop_unclaimed_prefetch(const Kernel& kernel, const DeviceInfo& device);  // drop_prefetch.cpp (also Device::compile)
bool has_unclaimed_prefetch(const Kernel& kernel, const DeviceInfo& device);     // drop_prefetch.cpp
Kernel convert_exp_base(const Kernel& kernel, const DeviceInfo& device);         // exp_base.cpp
Kernel fuse_multiply_add(const Kernel& kernel, const DeviceInfo& device);        // fuse_multiply_add.cpp

// normalize / finalize that verify the kernel they give and, when it fails,
// name the pass that broke it (ErrorCode::Internal, with the kernel before
// that pass): what optimize() and apply_sequence() use, so a pass bug is an
// error, never a wrong kernel. An input that fails ir::verify is
// ErrorCode::Verify, its first violation (apply_sequence: the step's bug).
Result<Kernel> normalize_checked(const Kernel& kernel, const DeviceInfo& device);
Result<Kernel> finalize_checked(const Kernel& kernel, const DeviceInfo& device);
// The same checks over any list of passes, run once in order (tests hand it
// broken passes).
Result<Kernel> run_passes_checked(const Kernel& kernel, const std::vector<Pass>& passes, const DeviceInfo& device);

}  // namespace kiln::passes::detail
