#include "opt_vectorize_plan.hpp"

#include "kiln/ir/analysis.hpp"
#include "opt_support.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

namespace kiln::passes::opts::vec {

namespace {

using ir::Kernel;
using ir::Op;
using ir::OpKind;
using ir::ValueId;

// Deeper value trees than this are gathered (bounds the recursion).
constexpr int kMaxTreeDepth = 64;

// A scalar LOAD or STORE whose index is affine.
struct Access {
  ValueId memory = ir::kNoValue;
  ValueId block = ir::kNoValue;
  std::vector<std::pair<ValueId, std::int64_t>> terms;
  std::int64_t constant = 0;
};

class Planner {
 public:
  Planner(const Kernel& kernel, std::uint32_t lanes, AnyIndex any_index)
      : k_(kernel), lanes_(lanes), any_index_(any_index), blocks_(ir::analyze_blocks(kernel)), owner_(kernel.size(), -1) {
    plan_.lanes = lanes;
    for (ValueId id = 0; id < k_.size(); ++id) {
      const Op& op = k_[id];
      if ((op.kind != OpKind::Load && op.kind != OpKind::Store) || op.lanes != 1) continue;
      const auto form = ir::affine_form(k_, op.src[1]);
      if (!form) continue;
      Access a{op.src[0], blocks_.parent[id], form->terms, form->constant};
      access_[id] = a;
      windows_[std::make_tuple(op.kind, a.memory, a.block, a.terms)][a.constant].push_back(id);
    }
  }

  Plan run() {
    for (const auto& [key, by_constant] : windows_) {
      if (std::get<0>(key) != OpKind::Store) continue;
      for (const auto& [constant, ops] : by_constant) {
        const auto members = window(by_constant, constant, std::get<3>(key), any_index_.stores);
        if (members) try_store_group(*members);
      }
    }
    // Loads no store tree took: vector load, lanes extracted for scalar users.
    for (const auto& [key, by_constant] : windows_) {
      if (std::get<0>(key) != OpKind::Load) continue;
      for (const auto& [constant, ops] : by_constant) {
        const auto members = window(by_constant, constant, std::get<3>(key), any_index_for_load(std::get<1>(key)));
        if (members && std::none_of(members->begin(), members->end(), [&](ValueId m) { return owner_[m] >= 0; }))
          load_node(*members);
      }
    }
    return std::move(plan_);
  }

 private:
  using Window = std::map<std::int64_t, std::vector<ValueId>>;

  // Whether every term of an index is a multiple of lanes (its constant
  // decides the rest).
  bool terms_aligned(const std::vector<std::pair<ValueId, std::int64_t>>& terms) const {
    const auto n = static_cast<std::int64_t>(lanes_);
    return std::all_of(terms.begin(), terms.end(), [&](const auto& term) { return term.second % n == 0; });
  }

  // Whether the device runs a vector LOAD of `memory` at any element index.
  bool any_index_for_load(ValueId memory) const {
    return any_index_.stores || (any_index_.loads && k_[memory].kind == OpKind::Param);
  }

  // The accesses at constant .. constant + lanes - 1, one each, when the
  // first index is a provable multiple of lanes (where the device runs the
  // access at any index, `any_index`: when its constant is, the windows of
  // a block's unrolled lanes).
  std::optional<std::vector<ValueId>> window(const Window& by_constant, std::int64_t constant,
                                             const std::vector<std::pair<ValueId, std::int64_t>>& terms,
                                             bool any_index) const {
    const auto n = static_cast<std::int64_t>(lanes_);
    if (constant % n != 0) return std::nullopt;
    if (!any_index && !terms_aligned(terms)) return std::nullopt;
    std::vector<ValueId> members;
    for (std::int64_t lane = 0; lane < n; ++lane) {
      const auto at = by_constant.find(constant + lane);
      if (at == by_constant.end() || at->second.size() != 1) return std::nullopt;
      members.push_back(at->second.front());
    }
    return members;
  }

  bool may_alias(ValueId a, ValueId b) const {
    if (a == b) return true;
    const auto writable_buffer = [&](ValueId m) {
      return k_[m].kind == OpKind::Param && k_[m].param_kind() == ir::ParamKind::GlobalMut;
    };
    return writable_buffer(a) && writable_buffer(b);
  }

  // Whether the members can be read (or written, `store`) all at once: one
  // block, and between the first and the last member nothing that writes
  // (or touches) memory they may alias, nor a barrier for LOCAL memory.
  bool movable_together(const std::vector<ValueId>& members, bool store) const {
    const ValueId block = blocks_.parent[members.front()];
    for (ValueId m : members)
      if (blocks_.parent[m] != block) return false;
    const auto [lo, hi] = std::minmax_element(members.begin(), members.end());
    const ValueId memory = k_[members.front()].src[0];
    for (ValueId id = *lo + 1; id < *hi; ++id) {
      if (std::find(members.begin(), members.end(), id) != members.end()) continue;
      const Op& op = k_[id];
      if (op.kind == OpKind::Barrier && is_local_storage(k_, memory)) return false;
      if (op.kind == OpKind::Store && may_alias(op.src[0], memory)) return false;
      if (store && op.kind == OpKind::Load && may_alias(op.src[0], memory)) return false;
    }
    return true;
  }

  int add_node(Node node, const std::vector<ValueId>& key) {
    plan_.nodes.push_back(std::move(node));
    const int index = static_cast<int>(plan_.nodes.size()) - 1;
    memo_[key] = index;
    return index;
  }

  // A load node of exactly these members (lane order), or -1.
  int load_node(const std::vector<ValueId>& members) {
    if (const auto found = memo_.find(members); found != memo_.end()) return found->second;
    for (ValueId m : members)
      if (owner_[m] >= 0) return -1;  // in another group
    const ValueId first = *std::min_element(members.begin(), members.end());
    if (k_[members.front()].src[1] >= first) return -1;  // lane 0's index is not there yet
    if (!movable_together(members, false)) return -1;
    Node node{NodeKind::Load, members, {}, first};
    node.aligned = terms_aligned(access_.at(members.front()).terms);
    const int index = add_node(std::move(node), members);
    for (ValueId m : members) owner_[m] = index;
    return index;
  }

  // Whether `values` are the loads of one aligned window, in lane order.
  bool consecutive_loads(const std::vector<ValueId>& values) const {
    const auto first = access_.find(values.front());
    if (first == access_.end() || k_[values.front()].kind != OpKind::Load) return false;
    for (std::size_t lane = 0; lane < values.size(); ++lane) {
      const auto a = access_.find(values[lane]);
      if (a == access_.end() || k_[values[lane]].kind != OpKind::Load) return false;
      if (a->second.memory != first->second.memory || a->second.terms != first->second.terms ||
          a->second.constant != first->second.constant + static_cast<std::int64_t>(lane))
        return false;
    }
    const auto n = static_cast<std::int64_t>(lanes_);
    if (first->second.constant % n != 0) return false;
    return any_index_for_load(first->second.memory) || terms_aligned(first->second.terms);
  }

  static bool vectorizable_kind(OpKind kind) {
    return kind == OpKind::Unary || kind == OpKind::Binary || kind == OpKind::Cast || kind == OpKind::Mad ||
           kind == OpKind::Select;
  }

  // The node computing `values` (one per lane), or -1 when they cannot be
  // put in one vector (vectors already, or scalars of different types).
  int build(const std::vector<ValueId>& values, int depth) {
    if (const auto found = memo_.find(values); found != memo_.end()) return found->second;
    const Op& first = k_[values.front()];
    for (ValueId v : values)
      if (k_[v].lanes != 1 || k_[v].dtype != first.dtype || !k_[v].has_result() || k_[v].is_memory()) return -1;
    if (std::all_of(values.begin(), values.end(), [&](ValueId v) { return v == values.front(); }))
      return add_node(Node{NodeKind::Broadcast, values, {}, ir::kNoValue}, values);
    if (depth < kMaxTreeDepth) {
      if (consecutive_loads(values)) {
        if (const int node = load_node(values); node >= 0) return node;
      }
      if (const int node = op_node(values, depth); node >= 0) return node;
    }
    return add_node(Node{NodeKind::Gather, values, {}, ir::kNoValue}, values);
  }

  int op_node(const std::vector<ValueId>& values, int depth) {
    const Op& first = k_[values.front()];
    if (!vectorizable_kind(first.kind)) return -1;
    for (ValueId v : values) {
      const Op& op = k_[v];
      if (op.kind != first.kind || op.code != first.code || blocks_.parent[v] != blocks_.parent[values.front()]) return -1;
    }
    Node node{NodeKind::Op, values, {}, *std::max_element(values.begin(), values.end())};
    for (std::size_t slot = 0; slot < first.operand_count(); ++slot) {
      std::vector<ValueId> operands;
      for (ValueId v : values) operands.push_back(k_[v].src[slot]);
      const bool shared = std::all_of(operands.begin(), operands.end(), [&](ValueId o) { return o == operands.front(); });
      if (first.kind == OpKind::Select && slot == 0 && shared) {
        node.operands.push_back(-1);  // one condition for every lane
        continue;
      }
      const int child = build(operands, depth + 1);
      if (child < 0) return -1;
      node.operands.push_back(child);
    }
    return add_node(std::move(node), values);
  }

  void try_store_group(const std::vector<ValueId>& members) {
    if (!movable_together(members, true)) return;
    std::vector<ValueId> values;
    for (ValueId m : members) values.push_back(k_[m].src[2]);
    // Tentative: undone when the tree is not worth it.
    const std::size_t nodes_before = plan_.nodes.size();
    const int value = build(values, 0);
    int vector_nodes = 0, gathers = 0;
    for (std::size_t n = nodes_before; n < plan_.nodes.size(); ++n) {
      const NodeKind kind = plan_.nodes[n].kind;
      vector_nodes += kind == NodeKind::Load || kind == NodeKind::Op;
      gathers += kind == NodeKind::Gather;
    }
    if (value < 0 || gathers > vector_nodes) {
      for (std::size_t n = nodes_before; n < plan_.nodes.size(); ++n) {
        memo_.erase(plan_.nodes[n].members);
        for (ValueId m : plan_.nodes[n].members)
          if (owner_[m] == static_cast<int>(n)) owner_[m] = -1;
      }
      plan_.nodes.resize(nodes_before);
      return;
    }
    plan_.stores.push_back(StoreGroup{members, value, terms_aligned(access_.at(members.front()).terms)});
  }

  const Kernel& k_;
  std::uint32_t lanes_;
  AnyIndex any_index_;
  ir::Blocks blocks_;
  Plan plan_;
  std::map<ValueId, Access> access_;
  std::map<std::tuple<OpKind, ValueId, ValueId, std::vector<std::pair<ValueId, std::int64_t>>>, Window> windows_;
  std::map<std::vector<ValueId>, int> memo_;
  std::vector<int> owner_;  // the load node a LOAD belongs to (-1: none)
};

}  // namespace

Plan plan_vectorize(const Kernel& kernel, std::uint32_t lanes, AnyIndex any_index) {
  if (lanes < 2) return Plan{lanes, {}, {}};
  return Planner(kernel, lanes, any_index).run();
}

}  // namespace kiln::passes::opts::vec
