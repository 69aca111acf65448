// kiln/ir/verify.hpp - checks a kernel against every rule of kernel_ir.h.
//
// The host hands plugins only kernels that pass verify(), so plugins may rely
// on these rules. Each error is ErrorCode::Verify with Error::op set to the
// op index and a message naming the rule and showing the op:
//   "rule binary-type: operands of add must have one type, got f32 and f64:
//    `%12 = add f32 %10, %11`"
// The rules and their names are listed in docs/ir.md.
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/result.hpp"

#include <cstdint>
#include <vector>

namespace kiln::ir {

// The most LOOPs and IFs one op may sit inside (rule nesting-depth). Tuned
// kernels nest a few tens deep; 20000 levels cost seconds and gigabytes in
// every tool that walks them, and recursion in plugins' compilers.
inline constexpr std::uint32_t kMaxBlockDepth = 256;

// The first violation in op order, or success.
Result<void> verify(const Kernel& kernel);

// Every violation, at most one per op, in op order (empty when valid).
std::vector<Error> verify_all(const Kernel& kernel);

}  // namespace kiln::ir
