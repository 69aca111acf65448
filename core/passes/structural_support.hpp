// What the structural optimizations (split_local, coarsen, split_loop,
// unroll, merge_loops, swap_loops, swap_axes, pad, reassociate) share
// (internal to libkiln): parameter checks, the last check on a result, the
// facts about loops and grid axes they test before rewriting, and copying a
// range of ops more than once (unrolling).
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/ir/rewriter.hpp"
#include "kiln/passes/optimization.hpp"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace kiln::passes::opts {

// The step's parameters, in `keys` order, or a step_error when one is
// missing or the step has one that is not in `keys` (a misspelt key must not
// silently take a default).
Result<std::vector<std::int64_t>> step_params(const OptStep& step, std::initializer_list<std::string_view> keys);

// Whether the kernel verifies: configs() lists nothing for one that does
// not (it would only be refused).
bool is_valid(const ir::Kernel& kernel);
// The kernel an apply() starts from must verify: a step never turns a broken
// kernel into a different broken one (nor crashes on it).
Result<void> check_input(const OptStep& step, const ir::Kernel& kernel);
// The last check on a rewritten kernel: a rule it would break (a barrier
// that a split made thread-dependent, ...) is a step that does not fit.
Result<ir::Kernel> checked_output(const OptStep& step, ir::Kernel kernel);

// A LOOP by its position among the kernel's LOOPs (step parameter `loop`).
struct LoopSite {
  ir::ValueId loop = ir::kNoValue;  // the LOOP op (also its counter)
  ir::ValueId end = ir::kNoValue;   // its END_LOOP
  std::optional<std::int64_t> count;  // the trip count when it is a constant
};
// Every LOOP in program order (the index is the `loop` parameter).
std::vector<LoopSite> loop_sites(const ir::Kernel& kernel);
std::optional<LoopSite> loop_at(const ir::Kernel& kernel, std::int64_t position);
// The step's LOOP at `position`, or a step_error saying the kernel has none.
Result<LoopSite> step_loop(const OptStep& step, const ir::Kernel& kernel, std::int64_t position);
// The same, for steps that need a constant trip count (`count` is then set).
Result<LoopSite> step_counted_loop(const OptStep& step, const ir::Kernel& kernel, std::int64_t position);

// The LOOP directly inside loop_sites()[outer] when the two form a perfect
// nest: between the outer LOOP and the inner one only pure ops (arithmetic,
// no memory, no control), and nothing between the two END_LOOPs.
std::optional<LoopSite> perfectly_nested_loop(const ir::Kernel& kernel, std::span<const LoopSite> sites,
                                              std::size_t outer);

// Whether `op` computes a value from its operands alone: no memory access,
// no control flow, nothing that could differ if it ran more or fewer times.
bool is_pure_value(const ir::Op& op);

// How a GROUP axis's length is known.
struct GroupLength {
  ir::ValueId op = ir::kNoValue;       // the length operand of the INDEX
  std::optional<std::int64_t> value;   // a constant length
  // A dynamic length written as `base * multiple` (MUL by a constant, or
  // SHL by one): pad leaves lengths in this form, which lets split_local and
  // coarsen divide them exactly. base = kNoValue when not of that form.
  ir::ValueId base = ir::kNoValue;
  std::int64_t multiple = 0;
};
GroupLength group_length(const ir::Kernel& kernel, ir::ValueId index);

// Whether `length` is a known multiple of `factor` (constant, or dynamic in
// the base * multiple form); and `length / factor`, emitted at the end of
// rw.out() (as a CONST, or from the mapped base).
bool divides(const GroupLength& length, std::int64_t factor);
ir::Value emit_divided_length(ir::Rewriter& rw, const GroupLength& length, std::int64_t factor);

// Ops that must stay at the top level of the kernel when its body is wrapped
// in a LOOP or IF: PARAMs, STORAGEs, INDEXes and everything their operands
// are computed from (a GROUP length's expression).
std::vector<bool> top_level_declarations(const ir::Kernel& kernel);

bool has_local_storage(const ir::Kernel& kernel);
bool has_local_index(const ir::Kernel& kernel);
bool has_barrier(const ir::Kernel& kernel, ir::ValueId first = 0, ir::ValueId last = UINT32_MAX);

// Emits a copy of old ops [first, last) at the end of rw.out(). Operands are
// looked up in `overrides` first (old id -> new id; kNoValue = not
// overridden), then through rw.map(). Every op copied is entered into
// `overrides`, so a later copy of the same range sees its own values.
// `overrides` has one entry per old op. rw's own mapping is not changed.
void clone_ops(ir::Rewriter& rw, ir::ValueId first, ir::ValueId last, std::vector<ir::ValueId>& overrides);

// Marks old ops [first, last] handled without emitting them (their uses lie
// inside the range, which the caller has emitted some other way).
void drop_range(ir::Rewriter& rw, ir::ValueId first, ir::ValueId last);

}  // namespace kiln::passes::opts
