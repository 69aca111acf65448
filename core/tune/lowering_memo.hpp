// Internal: one tuning's lowerings remembered step by step.
//
// A tuning lowers the same prefixes again and again: the row recipes share
// their first steps (reciprocal_divide and the split/unroll chain), the
// heuristic schedule lowers every recipe the search has just applied, and
// each measured candidate is lowered again from the start for the compile.
// Each step is an optimization plus the always-on passes to a fixed point,
// verified after every pass: on the H200 the softmax search spent 2.2 s of
// a 2 s budget there. Passes are deterministic functions of the kernel,
// the step and the device, so within one tuning (one device) a step's
// result is looked up by the input kernel's hash and the step's text.
#pragma once

#include "kiln/tune/search_space.hpp"

namespace kiln::tune::detail {

// `space` with `apply` and `lower` answering from a memo shared by its
// copies (thread-safe: the compile pool lowers in parallel). Meant for the
// default space, whose `lower` is passes::optimize: the memoized lower is
// the same verify, checked normalize, steps and checked finalize.
SearchSpace with_lowering_memo(const SearchSpace& space);

}  // namespace kiln::tune::detail
