// Reordering: two optimizations that change the order of work, never the
// work itself.
//
// swap_loops(loop): the loop-th LOOP (program order) and the LOOP perfectly
// nested in it trade places, so iteration (i, j) runs in j-major order. Both
// counts must be constants. Legal only when no two iterations can touch one
// address with a write among them; it is proven, or the step refused, thus:
//   - no BARRIER in the nest;
//   - every memory stored to in the nest is accessed (loaded and stored)
//     there through one and the same scalar index c + ci*i + cj*j + sum of
//     values fixed before the nest, and (i, j) -> ci*i + cj*j is one-to-one
//     on the iteration space; memories only loaded are free.
// A REGISTER accumulator (constant index) therefore refuses the swap: the
// order of a reduction is never changed (floats would round differently).
// Distinct buffer PARAMs are taken not to overlap (a launch binding one
// buffer to two params, one of them written, has no defined result).
//
// swap_axes(a, b): GROUP axes a and b (and their LOCAL axes) exchange
// numbers. Work-groups are independent and threads are named by their index
// values, so results are unchanged; axis 0 varies fastest on every backend
// (C's innermost loop, a warp's neighbouring threads), so putting the
// contiguous output index there matters.
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::Scope;
using ir::ValueId;

// Whether (i, j) -> ci*i + cj*j is one-to-one on [0, n_i) x [0, n_j): true
// when one counter's stride exceeds everything the other can add.
bool one_to_one(std::int64_t ci, std::int64_t cj, std::int64_t n_i, std::int64_t n_j) {
  if (n_i == 1 && n_j == 1) return true;
  if (n_i == 1) return cj != 0;
  if (n_j == 1) return ci != 0;
  if (ci == 0 || cj == 0) return false;
  const __int128 ai = ci < 0 ? -static_cast<__int128>(ci) : ci;
  const __int128 aj = cj < 0 ? -static_cast<__int128>(cj) : cj;
  return ai > aj * (n_j - 1) || aj > ai * (n_i - 1);
}

// Why the nest at `position` cannot be swapped ("" when it can).
std::string swap_blocker(const Kernel& kernel, const std::vector<LoopSite>& sites, std::int64_t position,
                         LoopSite& outer, LoopSite& inner) {
  if (position < 0 || position >= static_cast<std::int64_t>(sites.size()))
    return "the kernel has no LOOP number " + std::to_string(position) + " (counting from 0)";
  outer = sites[static_cast<std::size_t>(position)];
  const auto nested = perfectly_nested_loop(kernel, sites, static_cast<std::size_t>(position));
  if (!nested) return "the loop does not hold exactly one nested LOOP (a perfect nest)";
  inner = *nested;
  if (!outer.count || !inner.count) return "both loop counts must be constants";
  if (*outer.count < 1 || *inner.count < 1) return "a loop of the nest never runs";
  if (has_barrier(kernel, outer.loop, outer.end)) return "the nest holds a BARRIER";

  // The one index form of each memory written in the nest.
  std::set<ValueId> written;
  for (ValueId id = inner.loop; id < inner.end; ++id)
    if (kernel[id].kind == OpKind::Store) written.insert(kernel[id].src[0]);
  std::map<ValueId, ir::AffineForm> form_of;
  for (ValueId id = inner.loop; id < inner.end; ++id) {
    const ir::Op& op = kernel[id];
    if ((op.kind != OpKind::Load && op.kind != OpKind::Store) || !written.count(op.src[0])) continue;
    const std::string memory = "%" + std::to_string(op.src[0]);
    if (op.lanes != 1) return "a vector access to " + memory + ", which the nest writes";
    const auto form = ir::affine_form(kernel, op.src[1]);
    if (!form) return "an index into " + memory + " that is not affine";
    const auto [it, first] = form_of.emplace(op.src[0], *form);
    if (!first && (it->second.constant != form->constant || it->second.terms != form->terms))
      return "two different indices into " + memory + ", which the nest writes";
  }
  for (const auto& [memory, form] : form_of) {
    std::int64_t ci = 0, cj = 0;
    for (const auto& [atom, coefficient] : form.terms) {
      if (atom == outer.loop) ci = coefficient;
      else if (atom == inner.loop) cj = coefficient;
      else if (atom > outer.loop) return "the index into %" + std::to_string(memory) + " varies inside the nest";
    }
    if (!one_to_one(ci, cj, *outer.count, *inner.count))
      return "iterations of the nest share elements of %" + std::to_string(memory) + ", which it writes";
  }
  return "";
}

class SwapLoops final : public Optimization {
 public:
  std::string_view name() const override { return "swap_loops"; }
  std::string_view description() const override {
    return "interchange a LOOP with the LOOP perfectly nested in it, when provably legal";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo&) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    const std::vector<LoopSite> sites = loop_sites(kernel);
    for (std::size_t position = 0; position < sites.size(); ++position) {
      LoopSite outer, inner;
      if (swap_blocker(kernel, sites, static_cast<std::int64_t>(position), outer, inner).empty())
        steps.push_back(make_step(name(), {{"loop", static_cast<std::int64_t>(position)}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo&) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"loop"}));
    LoopSite outer, inner;
    if (std::string why = swap_blocker(kernel, loop_sites(kernel), params[0], outer, inner); !why.empty())
      return step_error(step, why);

    ir::Value new_outer, new_inner;
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      ir::Builder& b = rw.out();
      if (id == outer.loop) {
        new_outer = b.loop(*inner.count);
        new_inner = b.loop(*outer.count);
        rw.replace(outer.loop, new_inner);
        rw.replace(inner.loop, new_outer);
        return true;
      }
      if (id == inner.end) {
        rw.drop(id);
        return true;
      }
      if (id == outer.end) {
        b.end_loop(new_inner);
        b.end_loop(new_outer);
        rw.drop(id);
        return true;
      }
      return false;
    });
    return checked_output(step, std::move(out));
  }
};

// The grid axis whose GROUP index steps through a stored buffer one element
// at a time (the contiguous output index), if any.
std::optional<std::uint32_t> unit_stride_axis(const Kernel& kernel) {
  for (const ir::Op& op : kernel.ops) {
    if (op.kind != OpKind::Store || kernel[op.src[0]].kind != OpKind::Param) continue;
    const auto form = ir::affine_form(kernel, op.src[1]);
    if (!form) continue;
    for (const auto& [atom, coefficient] : form->terms) {
      const ir::Op& a = kernel[atom];
      if (a.kind == OpKind::Index && a.scope() == Scope::Group && std::abs(coefficient) == 1) return a.attr;
    }
  }
  return std::nullopt;
}

class SwapAxes final : public Optimization {
 public:
  std::string_view name() const override { return "swap_axes"; }
  std::string_view description() const override {
    return "exchange grid axes a and b (GROUP and LOCAL indices), e.g. to put the contiguous index on axis 0";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    auto add = [&](std::uint32_t a, std::uint32_t b) {
      const OptStep step = make_step(name(), {{"a", a}, {"b", b}});
      for (const OptStep& s : steps)
        if (s == step) return;
      if (why_not(kernel, a, b, device).empty()) steps.push_back(step);
    };
    if (const auto contiguous = unit_stride_axis(kernel); contiguous && *contiguous != 0) add(0, *contiguous);
    // Every other pair that why_not lets through: both axes in use, or the
    // higher one moving down into an unused lower one (never up, away from axis 0).
    for (std::uint32_t a = 0; a < KILN_MAX_AXES; ++a)
      for (std::uint32_t b = a + 1; b < KILN_MAX_AXES; ++b) add(a, b);
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"a", "b"}));
    const std::int64_t a = params[0], b = params[1];
    const auto max_axis = static_cast<std::int64_t>(KILN_MAX_AXES);
    if (a < 0 || a >= max_axis || b < 0 || b >= max_axis || a == b) return step_error(step, "a and b must be two different axes in 0..2");
    const auto ua = static_cast<std::uint32_t>(a), ub = static_cast<std::uint32_t>(b);
    if (std::string why = why_not(kernel, ua, ub, device); !why.empty()) return step_error(step, why);
    Kernel out = kernel;
    for (ir::Op& op : out.ops)
      if (op.kind == OpKind::Index && (op.attr == ua || op.attr == ub)) op.attr = op.attr == ua ? ub : ua;
    return checked_output(step, std::move(out));
  }

 private:
  // Why axes a and b cannot be exchanged on `device` ("" when they can).
  static std::string why_not(const Kernel& kernel, std::uint32_t a, std::uint32_t b, const DeviceInfo& device) {
    if (!find_index(kernel, Scope::Group, a) && !find_index(kernel, Scope::Group, b))
      return "neither axis has a GROUP index";
    // An axis's work moved up into an empty higher axis leaves axis 0, the
    // fastest-varying one, without it (on the C plugin the parallel loop then
    // has one iteration): nothing is gained, so it is no step.
    const std::uint32_t low = std::min(a, b), high = std::max(a, b);
    if (find_index(kernel, Scope::Group, low) && !find_index(kernel, Scope::Group, high))
      return "axis " + std::to_string(high) + " has no GROUP index: axis " + std::to_string(low) +
             " would only move up, away from axis 0";
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      if (const auto local = find_index(kernel, Scope::Local, from)) {
        const auto threads = ir::constant_int(kernel, kernel[*local].src[0]);
        if (threads && *threads > static_cast<std::int64_t>(device.max_local_dims[to]))
          return "device '" + device.id + "' allows " + std::to_string(device.max_local_dims[to]) + " threads on axis " +
                 std::to_string(to) + ", the LOCAL index of axis " + std::to_string(from) + " has " + std::to_string(*threads);
      }
      if (const auto group = find_index(kernel, Scope::Group, from)) {
        const auto groups = ir::constant_int(kernel, kernel[*group].src[0]);
        const std::uint64_t limit = device.max_grid_dims[to];
        if (groups && limit != 0 && static_cast<std::uint64_t>(*groups) > limit)
          return "device '" + device.id + "' allows " + std::to_string(limit) + " work-groups on axis " + std::to_string(to) +
                 ", axis " + std::to_string(from) + " has " + std::to_string(*groups);
      }
    }
    return "";
  }
};

}  // namespace

const Optimization& swap_loops() {
  static const SwapLoops instance;
  return instance;
}

const Optimization& swap_axes() {
  static const SwapAxes instance;
  return instance;
}

}  // namespace kiln::passes::opts
