// kiln/passes/bounds.hpp - which memory accesses of a kernel stay inside
// their memory, and the host's policy for those that cannot be proved to.
//
// Every LOAD and STORE (the only ops that address memory: MMA, vector and
// the other ops take values) is classified from the integer ranges of its
// index (value_range.hpp, narrowed inside an IF by comparisons of its
// condition):
//   in range       every index it can take lies inside its memory;
//   out of range   every index it can take lies outside: refused always;
//   at launch      it depends only on VARIABLE params or on the length of a
//                  param declared `[?]`: proved (or refused) at every launch
//                  with the launch's scalars and buffer sizes;
//   unknown        anything else (an index read from memory, arithmetic the
//                  ranges cannot follow).
// docs/ir.md ("Memory safety") describes the policies and their cost.
#pragma once

#include <kiln/ir/kernel.hpp>
#include <kiln/result.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::passes {

// What the host does with accesses that are not proved in range.
enum class BoundsPolicy : std::uint8_t {
  Guard,  // unknown accesses are rewritten to be safe (the default)
  Prove,  // unknown accesses are refused
  Trust,  // unknown accesses are compiled as written (unsafe: memory corruption)
};
std::string_view bounds_policy_name(BoundsPolicy policy);
std::optional<BoundsPolicy> parse_bounds_policy(std::string_view name);

enum class AccessVerdict : std::uint8_t { InRange, OutOfRange, AtLaunch, Unknown };

struct AccessBounds {
  ir::ValueId op = ir::kNoValue;        // the LOAD or STORE
  AccessVerdict verdict = AccessVerdict::Unknown;
  std::optional<std::int64_t> low, high;  // first and last element it may touch, when known
  bool reads_memory = false;            // the index is computed from a LOAD
};

// One entry per LOAD/STORE, in op order. The kernel should verify.
std::vector<AccessBounds> classify_accesses(const ir::Kernel& kernel);

// "op 7 (`store f32 %1[%6], %5`): the index reaches [10000001, 10000999] but
// param slot 1 (%1) has 1000 f32 elements"
std::string describe_access(const ir::Kernel& kernel, const AccessBounds& access);

// The kernel a plugin may receive under `policy`, and the accesses the host
// must prove at every launch (check_launch_bounds).
struct BoundedKernel {
  ir::Kernel kernel;
  std::vector<ir::ValueId> launch_checks;
  std::size_t guarded = 0;  // accesses the guard rewrote
};
// Refuses (ErrorCode::Verify, Error::op set) an access proved out of range
// under every policy, and under Prove an unknown one; under Guard rewrites
// unknown accesses (guard_accesses). Accesses proved at launch are listed,
// except under Trust.
Result<BoundedKernel> apply_bounds_policy(const ir::Kernel& kernel, BoundsPolicy policy);

// The guard rewrite, for the accesses listed (each a LOAD or STORE of
// memory with a known length): a STORE runs only when its index is inside
// (IF 0 <= i <= n - lanes); a LOAD reads at its index clamped into the
// memory (MIN(MAX(i, 0), last aligned start)). Other ops are copied.
ir::Kernel guard_accesses(const ir::Kernel& kernel, std::span<const ir::ValueId> accesses);

// Launch-time proof of `checks` (accesses of BoundedKernel::launch_checks):
// `scalars[slot]` holds the bits of each VARIABLE param, `elements[slot]`
// the element count of each buffer param's buffer. An error names the
// access, its index range and the buffer.
Result<void> check_launch_bounds(const ir::Kernel& kernel, std::span<const ir::ValueId> checks,
                                 std::span<const std::uint64_t> scalars, std::span<const std::uint64_t> elements);

}  // namespace kiln::passes
