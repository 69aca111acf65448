// kiln/ir/analysis.hpp - facts about a kernel that passes and the verifier
// ask for: block structure, uses, loop invariance, constants, affine index
// forms, and which values may differ between the threads of a work-group.
//
// Every function accepts any kernel (also one that fails verify()); where the
// kernel is malformed the answers are conservative, never a crash. Expression
// walks visit each op once (shared subexpressions are not re-walked), so
// they stay linear on any kernel.
#pragma once

#include "kiln/ir/kernel.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::ir {

// The LOOP/IF structure. Nesting is taken from the marker kinds alone (an
// END pops the innermost open block), so a kernel with broken nesting still
// gets an answer; verify() reports the breakage.
struct Blocks {
  // The innermost LOOP/IF enclosing each op (kNoValue at top level). A LOOP
  // or IF op lies in its outer block; its END marker lies inside it.
  std::vector<ValueId> parent;
  // For each LOOP/IF: its END marker (kNoValue when never closed).
  std::vector<ValueId> end;
  // Enclosing LOOPs and IFs, and enclosing LOOPs only, of each op.
  std::vector<std::uint32_t> depth;
  std::vector<std::uint32_t> loop_depth;

  // Whether `block` (a LOOP/IF) encloses op `id` (not counting `block` itself).
  bool encloses(ValueId block, ValueId id) const;
  // Where a value can be used: inside its defining op's block. A LOOP's
  // counter lives inside the loop.
  ValueId value_block(const Kernel& kernel, ValueId id) const;
};
Blocks analyze_blocks(const Kernel& kernel);

// How many operand slots name each op (END markers count as uses of their
// LOOP/IF).
std::vector<std::uint32_t> use_counts(const Kernel& kernel);

// For every op: whether its value is the same in every iteration of `loop`
// (defined outside it, or computed inside from such values without reading
// memory that the loop writes). The loop's own counter and ops without a
// value are not invariant.
std::vector<bool> loop_invariant_values(const Kernel& kernel, const Blocks& blocks, ValueId loop);
bool is_loop_invariant(const Kernel& kernel, ValueId value, ValueId loop);

// The value of a scalar integer or bool expression over CONSTs (CAST, NEG,
// ABS, BIT_NOT and the integer BINARY ops, wrapping as the kernel would), as
// int64; nullopt when it reads anything else or divides by zero.
std::optional<std::int64_t> constant_int(const Kernel& kernel, ValueId id);
// A CONST of any dtype (floats decoded), or constant_int's answer.
std::optional<double> constant_double(const Kernel& kernel, ValueId id);

// Why the host could not compute op `id` before a launch (as a GROUP index
// length), or nullopt when it can: it must be an integer or bool scalar
// expression of CONSTs, VARIABLE params, CAST, NEG/ABS/BIT_NOT and the
// integer BINARY ops, at most 64 ops deep. This is the set
// kiln::sdk::eval_host_expr (sdk/grid.hpp) evaluates.
std::optional<std::string> not_host_evaluable(const Kernel& kernel, ValueId id);

// An i64 index as constant + sum(coefficient * atom): decomposed through
// i64 ADD, SUB, NEG, MUL by a constant and SHL by a constant. Atoms are the
// values it cannot decompose (INDEX, LOOP counters, loads, ...), each once.
struct AffineForm {
  std::int64_t constant = 0;
  std::vector<std::pair<ValueId, std::int64_t>> terms;  // (atom, coefficient), atom ascending
};
// nullopt when the expression is not i64 or a coefficient overflows.
std::optional<AffineForm> affine_form(const Kernel& kernel, ValueId id);
// affine_form of many values of one kernel, each subexpression decomposed
// once (the verifier asks for every LOAD's and STORE's index, and unrolled
// kernels' indices share most of their terms). The kernel must outlive it
// and not change.
class AffineForms {
 public:
  explicit AffineForms(const Kernel& kernel) : kernel_(kernel) {}
  std::optional<AffineForm> of(ValueId id);

 private:
  const Kernel& kernel_;
  std::vector<bool> known_;  // by op: whether forms_ holds its answer
  std::vector<std::optional<AffineForm>> forms_;
};

// The values an atom takes in every launch, when that is known: an INDEX
// with a constant length L or a LOOP with a constant count L covers [0, L-1]
// (nullopt otherwise, and for L <= 0).
std::optional<std::pair<std::int64_t, std::int64_t>> atom_range(const Kernel& kernel, ValueId id);

// For every op: whether its value may differ between the threads of one
// work-group (it depends on a LOCAL index, directly or through memory that
// was written with thread-dependent data, index or control flow).
std::vector<bool> thread_varying(const Kernel& kernel, const Blocks& blocks);

// For every op: whether its value may differ between the threads of one
// warp (32 consecutive threads of LOCAL axis 0, whose length is a multiple
// of 32: the MMA op's rule). As thread_varying, except that LOCAL axes 1 and
// 2 and the warp number (axis-0 index / 32c or >> (5 + c)) are the same in a
// whole warp. Conservative: other warp-uniform expressions count as varying.
std::vector<bool> warp_varying(const Kernel& kernel, const Blocks& blocks);

}  // namespace kiln::ir
