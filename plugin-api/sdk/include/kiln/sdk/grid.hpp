// kiln/sdk/grid.hpp - launch geometry of a wire kernel.
//
// The host computes kiln_launch_args.groups/local from the kernel's INDEX ops
// with these functions; plugins may use them to check what they were given.
// GROUP lengths are host-evaluable expressions (CONST, VARIABLE params, and
// integer UNARY/BINARY/CAST over them); LOCAL lengths are CONSTs.
#pragma once

#include <kiln/plugin.h>

#include <array>
#include <cstdint>
#include <span>

namespace kiln::sdk {

struct LaunchGrid {
  std::array<std::uint64_t, 3> groups = {1, 1, 1};
  std::array<std::uint32_t, 3> local = {1, 1, 1};

  std::uint64_t total_groups() const { return groups[0] * groups[1] * groups[2]; }
  std::uint64_t threads_per_group() const {
    return std::uint64_t{local[0]} * local[1] * local[2];
  }
};

// Evaluates the integer value of op `id` from constants and VARIABLE
// arguments (args[slot].scalar_bits). Throws PluginError(INVALID_ARGUMENT)
// naming the op when the expression is not host-evaluable or an argument is
// missing.
std::int64_t eval_host_expr(std::span<const kiln_op> ops, std::uint32_t id, std::span<const kiln_arg> args);

// The grid for one launch. Throws PluginError naming the INDEX op when a
// length is not evaluable or not positive.
LaunchGrid compute_grid(std::span<const kiln_op> ops, std::span<const kiln_arg> args);

// Sign-extends or zero-extends `bits` of dtype `dt` (an integer or bool type)
// to int64.
std::int64_t int_from_bits(std::uint64_t bits, unsigned dt);

}  // namespace kiln::sdk
