// Internal: which op of the kernel a user gave corresponds to an op of the
// kernel lowered from it (what a plugin saw and names in its errors).
//
// Ops have no identity across passes (kernel.hpp: two kernels that print
// the same are equal), so the trace is by shape: the ops of the given kernel
// with the lowered op's kind, code and dtype (lanes aside: vectorizing
// changes them). One match names the op; several are all candidates; none
// means the lowering made the op (an index computation, a tile loop).
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/result.hpp"

#include <vector>

namespace kiln::ir {

std::vector<ValueId> ops_shaped_like(const Kernel& given, const Op& lowered);

// Rewrites a compile error about op `error.op` of `lowered` so that it names
// the op of `given`: error.op becomes that index when the trace is unique,
// and stays the lowered index otherwise; the message always says which
// lowered op the plugin named and, when several fit, every candidate.
Error trace_to_given(Error error, const Kernel& given, const Kernel& lowered);

}  // namespace kiln::ir
