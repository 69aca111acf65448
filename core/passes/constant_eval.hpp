// Evaluates one scalar op over constant operands exactly as the reference
// interpreter would (internal to libkiln; used by constant folding).
#pragma once

#include "kiln/ir/kernel.hpp"

#include <cstdint>
#include <optional>
#include <span>

namespace kiln::passes::detail {

// The CONST bits of `op` (a scalar UNARY, BINARY, CAST, MAD or SELECT) when
// its operands are the scalar CONSTs `operands` (in src order); nullopt when
// the op faults (integer division by zero) or is not such an op.
std::optional<std::uint64_t> evaluate_constant_op(const ir::Op& op, std::span<const ir::Op> operands);

}  // namespace kiln::passes::detail
