#include "opt_local_tile_match.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/text.hpp"
#include "opt_register_block_jam.hpp"
#include "opt_support.hpp"

#include <bit>

namespace kiln::passes::opts::tile {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::ValueId;

std::string describe(const Kernel& kernel, ValueId id) { return "`" + ir::print_op(kernel, id) + "` (op " + std::to_string(id) + ")"; }

std::variant<MatrixProduct, std::string> match_loop(const Kernel& kernel, const ir::Blocks& blocks, ValueId loop,
                                                    const std::array<std::optional<ValueId>, 3>& groups) {
  if (blocks.parent[loop] != ir::kNoValue) return describe(kernel, loop) + " is nested in another block";
  const auto trip_count = ir::constant_int(kernel, kernel[loop].src[0]);
  if (!trip_count) return describe(kernel, loop) + " has a dynamic trip count";
  std::vector<ValueId> roots;
  for (const auto& index : groups) roots.push_back(index.value_or(ir::kNoValue));
  roots.push_back(loop);
  const std::vector<std::uint8_t> deps = jam::dependences(kernel, roots);
  constexpr std::uint8_t kAxes = 7, kCounter = 8;

  MatrixProduct mp;
  mp.loop = loop;
  mp.trip_count = *trip_count;
  std::array<std::vector<ValueId>, 3> by_axis;
  for (ValueId id = loop + 1; id < blocks.end[loop]; ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind == OpKind::Loop || op.kind == OpKind::If)
      return describe(kernel, loop) + " has a block in its body (" + describe(kernel, id) + ")";
    if (op.kind != OpKind::Load || kernel[op.src[0]].kind != OpKind::Param) continue;
    const std::uint8_t axes = deps[id] & kAxes;
    if ((deps[id] & kCounter) == 0 || axes == 0) continue;  // the same for every k, or for the whole tile
    if (std::popcount(axes) > 1) return describe(kernel, id) + " depends on two grid axes";
    if (op.lanes != 1) return describe(kernel, id) + " is a vector load (tile before vectorizing)";
    if (kernel[op.src[0]].param_kind() != ir::ParamKind::Global)
      return describe(kernel, id) + " reads a GLOBAL_MUT buffer (it may change while staged)";
    by_axis[static_cast<std::size_t>(std::countr_zero(axes))].push_back(id);
  }
  std::vector<std::uint32_t> used;
  for (std::uint32_t axis = 0; axis < 3; ++axis)
    if (!by_axis[axis].empty()) used.push_back(axis);
  if (used.size() != 2)
    return describe(kernel, loop) + " loads along " + std::to_string(used.size()) +
           " grid axes; a matrix product loads one operand along each of two";
  // n is the lower (faster) axis, m the higher: the standard matmul's
  // columns on axis 0, rows on axis 1.
  for (unsigned side = 0; side < 2; ++side) {
    const std::uint32_t axis = used[1 - side];
    mp.axes[side] = axis;
    mp.indices[side] = *groups[axis];
    const auto length = ir::constant_int(kernel, kernel[*groups[axis]].src[0]);
    if (!length) return "GROUP axis " + std::to_string(axis) + " has a dynamic length";
    mp.lengths[side] = *length;
    for (ValueId load : by_axis[axis]) {
      bool k_fastest = false;
      if (const auto form = ir::affine_form(kernel, kernel[load].src[1]))
        for (const auto& [atom, coefficient] : form->terms)
          if (atom == loop && coefficient == 1) k_fastest = true;
      mp.staged.push_back({load, side, k_fastest});
    }
  }
  const std::array<ValueId, 3> tile_roots = {mp.indices[0], mp.indices[1], loop};
  mp.deps = jam::dependences(kernel, tile_roots);
  return mp;
}

}  // namespace

std::variant<MatrixProduct, std::string> match_matrix_product(const Kernel& kernel) {
  for (ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind == OpKind::Index && op.scope() == ir::Scope::Local)
      return std::string("the kernel already has LOCAL threads (") + describe(kernel, id) + ")";
    if (op.kind == OpKind::Storage && op.scope() == ir::Scope::Local)
      return std::string("the kernel already uses LOCAL storage (") + describe(kernel, id) + ")";
  }
  std::array<std::optional<ValueId>, 3> groups;
  for (std::uint32_t axis = 0; axis < 3; ++axis) groups[axis] = find_index(kernel, ir::Scope::Group, axis);
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  std::string why = "the kernel has no LOOP";
  for (ValueId loop : loops_in_order(kernel)) {
    auto matched = match_loop(kernel, blocks, loop, groups);
    if (std::holds_alternative<MatrixProduct>(matched)) return matched;
    why = std::get<std::string>(std::move(matched));
  }
  return why;
}

}  // namespace kiln::passes::opts::tile
