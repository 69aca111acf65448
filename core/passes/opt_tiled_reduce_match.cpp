#include "opt_tiled_reduce_match.hpp"

#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"

#include <algorithm>
#include <map>
#include <limits>

namespace kiln::passes::opts::reduce {

namespace {

using ir::BinaryOp;
using ir::Kernel;
using ir::OpKind;
using ir::ValueId;

std::string describe(const Kernel& kernel, ValueId id) { return "`" + ir::print_op(kernel, id) + "` (op " + std::to_string(id) + ")"; }

bool is_storage(const Kernel& kernel, ValueId id, ir::Scope scope) {
  return kernel[id].kind == OpKind::Storage && kernel[id].scope() == scope;
}

bool accumulating_op(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Mul || op == BinaryOp::Max || op == BinaryOp::Min;
}

// Walks down from `value` (stored by `store`) through ops of `code` in the
// store's block to the load of the stored element; the load, with the ops
// on the way in `chain`, or kNoValue.
template <class SameElement>
ValueId chain_to_load(const Kernel& kernel, const ir::Blocks& blocks, ValueId loop, ValueId store, ValueId value,
                      std::uint8_t code, const SameElement& same_element, std::vector<ValueId>& chain) {
  const ir::Op& s = kernel[store];
  // Depth-first along operands, bounded: a chain is as long as the values
  // folded in at once.
  std::vector<std::pair<ValueId, std::size_t>> stack = {{value, 0}};
  while (!stack.empty() && stack.size() < 256) {
    auto& [at, next] = stack.back();
    const ir::Op& op = kernel[at];
    if (next >= op.operand_count()) {
      stack.pop_back();
      continue;
    }
    const ValueId operand = op.src[next++];
    if (operand >= kernel.size() || !blocks.encloses(loop, operand) || blocks.parent[operand] != blocks.parent[store])
      continue;
    const ir::Op& o = kernel[operand];
    if (o.kind == OpKind::Load && o.src[0] == s.src[0] && same_element(o.src[1], s.src[1])) {
      for (const auto& frame : stack) chain.push_back(frame.first);
      return operand;
    }
    if (o.kind == OpKind::Binary && o.code == code) stack.push_back({operand, 0});
  }
  return ir::kNoValue;
}

}  // namespace

std::variant<SplittableLoop, std::string> match_loop(const Kernel& kernel, const ir::Blocks& blocks, ValueId loop) {
  const ValueId end = blocks.end[loop];
  if (end == ir::kNoValue) return describe(kernel, loop) + " is never closed";
  const auto inside = [&](ValueId id) { return id < kernel.size() && blocks.encloses(loop, id); };
  const auto same_element = [&](ValueId a, ValueId b) {
    if (a == b) return true;
    const auto ca = ir::constant_int(kernel, a), cb = ir::constant_int(kernel, b);
    return ca && cb && *ca == *cb;
  };

  SplittableLoop found{loop, {}};
  std::vector<ValueId> global_stores, accumulation_loads;
  std::map<std::ptrdiff_t, std::vector<ValueId>> chains;  // per accumulator: the ops between its load and stores
  for (ValueId id = loop + 1; id < end; ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind == OpKind::Barrier) return describe(kernel, loop) + " holds a barrier";
    if ((op.kind == OpKind::Load || op.kind == OpKind::Store) && is_storage(kernel, op.src[0], ir::Scope::Local))
      return describe(kernel, id) + " touches LOCAL storage";
    if (op.kind != OpKind::Store) continue;
    if (kernel[op.src[0]].kind == OpKind::Param) {
      global_stores.push_back(id);
      continue;
    }
    // An accumulation: store S[c], (load S[c]) OP v, where the load may sit
    // at the bottom of a chain of the same op (((S[c] OP a) OP b) ...), as
    // unrolled loops write it once normalized (the intermediate values may
    // be stored to S[c] too).
    const std::string not_accumulation = describe(kernel, id) + " is not an accumulation (store S[c], load S[c] OP v)";
    const ir::Op& value = kernel[op.src[2]];
    if (value.kind != OpKind::Binary || !accumulating_op(value.binary()) || op.lanes != 1) return not_accumulation;
    std::vector<ValueId> chain;
    if (!inside(op.src[2]) || blocks.parent[op.src[2]] != blocks.parent[id]) return not_accumulation;
    const ValueId partial = chain_to_load(kernel, blocks, loop, id, op.src[2], value.code, same_element, chain);
    if (partial == ir::kNoValue) return not_accumulation;
    if (inside(op.src[1])) return describe(kernel, id) + " accumulates at an index that changes in the loop";
    auto accumulator = std::find_if(found.accumulators.begin(), found.accumulators.end(), [&](const Accumulator& a) {
      return a.storage == op.src[0] && same_element(a.index, op.src[1]);
    });
    if (accumulator == found.accumulators.end()) {
      found.accumulators.push_back({op.src[0], op.src[1], value.binary(), op.dtype, {}, {}});
      accumulator = std::prev(found.accumulators.end());
    }
    if (accumulator->op != value.binary()) return describe(kernel, id) + " accumulates with two different ops";
    if (std::find(accumulator->loads.begin(), accumulator->loads.end(), partial) == accumulator->loads.end())
      accumulator->loads.push_back(partial);
    accumulator->stores.push_back(id);
    accumulation_loads.push_back(partial);
    auto& members = chains[accumulator - found.accumulators.begin()];
    members.insert(members.end(), chain.begin(), chain.end());
  }
  // The chain's values feed only the chain and stores into the accumulator:
  // nothing else may see a partial value.
  std::vector<std::vector<ValueId>> users(kernel.size());
  for (ValueId id = loop + 1; id < end; ++id)
    for (ValueId operand : kernel[id].operands())
      if (operand < kernel.size()) users[operand].push_back(id);
  for (std::size_t a = 0; a < found.accumulators.size(); ++a) {
    const Accumulator& acc = found.accumulators[a];
    std::vector<ValueId> values = chains[a];
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    const std::vector<ValueId> chain_ops = values;
    values.insert(values.end(), acc.loads.begin(), acc.loads.end());
    const auto partial_value = [&](ValueId v) { return std::find(values.begin(), values.end(), v) != values.end(); };
    for (ValueId v : values) {
      int folded_into = 0;
      for (ValueId user : users[v]) {
        const bool in_chain = std::binary_search(chain_ops.begin(), chain_ops.end(), user);
        const bool stored = std::find(acc.stores.begin(), acc.stores.end(), user) != acc.stores.end() &&
                            kernel[user].src[2] == v && kernel[user].src[1] != v;
        if (!in_chain && !stored) return describe(kernel, user) + " uses a partial value of an accumulation";
        folded_into += in_chain;
      }
      // Each partial value is folded on once (S = S + S is no reduction).
      if (folded_into > 1) return describe(kernel, v) + " is folded into the accumulation twice";
    }
    for (ValueId op : chain_ops)
      if (partial_value(kernel[op].src[0]) && partial_value(kernel[op].src[1]))
        return describe(kernel, op) + " combines two partial values of one accumulation";
  }
  for (ValueId id = loop + 1; id < end; ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind != OpKind::Load) continue;
    const bool accumulator_memory = std::any_of(found.accumulators.begin(), found.accumulators.end(),
                                                [&](const Accumulator& a) { return a.storage == op.src[0]; });
    if (accumulator_memory && std::find(accumulation_loads.begin(), accumulation_loads.end(), id) == accumulation_loads.end())
      return describe(kernel, id) + " reads an accumulator in the middle of the reduction";
    if (found.accumulators.empty() && kernel[op.src[0]].kind == OpKind::Param &&
        kernel[op.src[0]].param_kind() == ir::ParamKind::GlobalMut)
      return describe(kernel, id) + " reads a GLOBAL_MUT buffer (it may see another iteration's store)";
  }
  if (!found.accumulators.empty() && !global_stores.empty())
    return describe(kernel, global_stores.front()) + " stores to memory in a loop that also accumulates";
  if (found.accumulators.empty()) {
    if (global_stores.empty()) return describe(kernel, loop) + " neither accumulates nor stores";
    const auto first = ir::affine_form(kernel, kernel[global_stores.front()].src[1]);
    if (!first) return describe(kernel, global_stores.front()) + ": its index is not affine";
    std::int64_t step = 0;
    for (const auto& [atom, coefficient] : first->terms) {
      if (atom == loop) step = coefficient;
      else if (inside(atom)) return describe(kernel, global_stores.front()) + ": its index changes in the loop other than by the counter";
    }
    if (step == 0) return describe(kernel, global_stores.front()) + ": every iteration stores to the same element";
    // Iteration i writes base + step * i + k for the stores' offsets k (a
    // store of L lanes: k .. k + L - 1). When every k lies in a window
    // narrower than |step|, no two iterations write one element, so the
    // iterations may run in any thread: one element per iteration, or a
    // block of `step` consecutive ones (a loop split by split_loop and
    // unrolled, whose stores vectorize after the split across threads).
    std::int64_t low = first->constant, high = first->constant;
    for (ValueId store : global_stores) {
      const auto form = ir::affine_form(kernel, kernel[store].src[1]);
      if (kernel[store].src[0] != kernel[global_stores.front()].src[0] || !form || form->terms != first->terms)
        return describe(kernel, store) + ": the loop's stores do not all go to one element or block per iteration";
      low = std::min(low, form->constant);
      high = std::max(high, form->constant + static_cast<std::int64_t>(kernel[store].lanes) - 1);
    }
    if (high - low >= (step < 0 ? -step : step))
      return describe(kernel, global_stores.front()) + ": two iterations may store to one element";
  }
  return found;
}

std::vector<bool> varying_along(const Kernel& kernel, const ir::Blocks& blocks, const std::vector<ValueId>& roots) {
  const std::size_t n = kernel.size();
  std::vector<bool> varying(n, false), tainted(n, false);
  // A SUBGROUP_REDUCE gives every thread of its segment of `width`
  // consecutive linear ids one value: along LOCAL axis 0 of a length L that
  // divides the width, every thread that differs only in that axis is in
  // one segment (the linear id is x + L * (...)), so the value is the same
  // along it (a row reduced by one warp's shuffles: tiled_reduce's subgroup
  // form with local = width, whose later loops run the same in every lane).
  const auto segment_uniform = [&](const ir::Op& op) {
    if (op.kind != OpKind::SubgroupReduce || roots.empty()) return false;
    for (ValueId root : roots) {
      const ir::Op& index = kernel[root];
      if (index.kind != OpKind::Index || index.scope() != ir::Scope::Local || index.attr != 0) return false;
      const auto length = ir::constant_int(kernel, index.src[0]);
      if (!length || *length <= 0 || op.attr % static_cast<std::uint64_t>(*length) != 0) return false;
    }
    return true;
  };
  // Also the same along it: a SUBGROUP_REDUCE of width w over a LOAD of
  // LOCAL storage (shared by the group) at (t mod w) + u, u the same for
  // all threads, t LOCAL axis 0 of a length w divides: every segment holds
  // the same elements in the same lanes (tiled_reduce's subgroup_first
  // form, whose every thread combines the subgroups' totals itself).
  const auto lane_of_segment = [&](ValueId v, std::uint64_t width) {
    const ir::Op& op = kernel[v];
    if (op.kind != OpKind::Binary || roots.size() != 1 || op.src[0] != roots.front()) return false;
    const auto c = ir::constant_int(kernel, op.src[1]);
    if (!c) return false;
    return (op.binary() == BinaryOp::Mod && *c == static_cast<std::int64_t>(width)) ||
           (op.binary() == BinaryOp::BitAnd && *c == static_cast<std::int64_t>(width) - 1);
  };
  const auto segments_alike = [&](const ir::Op& op) {
    if (op.kind != OpKind::SubgroupReduce || roots.size() != 1) return false;
    const ir::Op& index = kernel[roots.front()];
    const auto length = ir::constant_int(kernel, index.src[0]);
    if (index.kind != OpKind::Index || index.scope() != ir::Scope::Local || index.attr != 0 || !length ||
        *length <= 0 || op.attr == 0 || static_cast<std::uint64_t>(*length) % op.attr != 0)
      return false;
    const ir::Op& load = kernel[op.src[0]];
    if (load.kind != OpKind::Load || !is_storage(kernel, load.src[0], ir::Scope::Local)) return false;
    const ValueId at = load.src[1];
    if (lane_of_segment(at, op.attr)) return true;
    const ir::Op& sum = kernel[at];
    return sum.kind == OpKind::Binary && sum.binary() == BinaryOp::Add &&
           ((lane_of_segment(sum.src[0], op.attr) && !varying[sum.src[1]]) ||
            (lane_of_segment(sum.src[1], op.attr) && !varying[sum.src[0]]));
  };
  const auto control_varies = [&](ValueId id) {
    for (ValueId p = blocks.parent[id]; p != ir::kNoValue; p = blocks.parent[p])
      if (varying[kernel[p].src[0]]) return true;
    return false;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (ValueId id = 0; id < n; ++id) {
      const ir::Op& op = kernel[id];
      bool any_operand = false;
      for (ValueId v : op.operands()) any_operand = any_operand || (v < n && varying[v]);
      bool now = any_operand;
      if (op.kind == OpKind::Index) now = now || std::find(roots.begin(), roots.end(), id) != roots.end();
      if (segment_uniform(op) || segments_alike(op)) now = false;
      if (op.kind == OpKind::Load && !is_storage(kernel, op.src[0], ir::Scope::Local)) now = now || tainted[op.src[0]];
      if (op.kind == OpKind::Store && !tainted[op.src[0]] && (any_operand || control_varies(id))) {
        tainted[op.src[0]] = true;
        changed = true;
      }
      if (op.has_result() && now != varying[id]) {
        varying[id] = now;
        changed = true;
      }
    }
  }
  return varying;
}

std::optional<std::uint64_t> identity_bits(BinaryOp op, ir::DType dtype) {
  if (ir::is_float(dtype)) {
    const double inf = std::numeric_limits<double>::infinity();
    switch (op) {
      case BinaryOp::Add: return ir::encode_float(dtype, -0.0);  // x + -0 == x, also for x = -0
      case BinaryOp::Mul: return ir::encode_float(dtype, 1.0);
      case BinaryOp::Max: return ir::encode_float(dtype, -inf);
      case BinaryOp::Min: return ir::encode_float(dtype, inf);
      default: return std::nullopt;
    }
  }
  if (!ir::is_int(dtype)) return std::nullopt;
  const unsigned bits = ir::dtype_bits(dtype);
  const std::uint64_t all = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  const bool is_signed = ir::is_signed_int(dtype);
  const std::uint64_t lowest = is_signed ? std::uint64_t{1} << (bits - 1) : 0;
  const std::uint64_t highest = is_signed ? lowest - 1 : all;
  switch (op) {
    case BinaryOp::Add: return 0;
    case BinaryOp::Mul: return 1;
    case BinaryOp::Max: return lowest;
    case BinaryOp::Min: return highest;
    default: return std::nullopt;
  }
}

}  // namespace kiln::passes::opts::reduce
