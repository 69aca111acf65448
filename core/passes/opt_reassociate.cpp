// reassociate(): regroups chains of one commutative, associative integer op
// so that operands defined outside a loop combine first and LICM can hoist
// them: inside a loop over k, ((i*N + k) + j*N) becomes ((i*N + j*N) + k).
//
// A chain is a tree of one BINARY op (ADD, MUL, MIN, MAX, AND, OR, BIT_AND,
// BIT_OR, BIT_XOR) of one integer or bool type, whose inner nodes are used
// only by the chain and sit in the root's block. Its leaves are sorted by
// the loop depth at which their value is defined (constants and indices
// first, then each loop's values; ties keep their order) and folded from
// the left. On integers these ops wrap, so any grouping gives the same bits:
// floats are never touched (their rounding would change).
//
// A chain is rewritten only when some loop level's operands do not already
// form one subtree, so applying the step twice changes nothing the second
// time (and the step then reports that it does not fit).
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace kiln::passes::opts {

namespace {

using ir::BinaryOp;
using ir::Kernel;
using ir::Op;
using ir::OpKind;
using ir::ValueId;

bool chain_op(const Op& op) {
  if (op.kind != OpKind::Binary) return false;
  const bool integer = ir::is_int(op.dtype);
  const bool boolean = op.dtype == ir::DType::Bool;
  switch (op.binary()) {
    case BinaryOp::Add: case BinaryOp::Mul: case BinaryOp::Min: case BinaryOp::Max:
      return integer;
    case BinaryOp::And: case BinaryOp::Or: case BinaryOp::BitAnd: case BinaryOp::BitOr: case BinaryOp::BitXor:
      return integer || boolean;
    default:
      return false;
  }
}

struct Chain {
  ValueId root = ir::kNoValue;
  std::vector<ValueId> inner;   // inner nodes, ascending (root excluded)
  std::vector<ValueId> leaves;  // regrouped order
};

class ChainFinder {
 public:
  explicit ChainFinder(const Kernel& kernel)
      : kernel_(kernel), blocks_(ir::analyze_blocks(kernel)), uses_(ir::use_counts(kernel)), inner_(kernel.size(), false) {
    for (ValueId id = 0; id < kernel.size(); ++id)
      for (ValueId v : kernel[id].operands())
        if (v < id && continues(id, v)) inner_[v] = true;
  }

  // Every chain that regrouping would change, in op order.
  std::vector<Chain> chains_to_regroup() const {
    std::vector<Chain> chains;
    for (ValueId id = 0; id < kernel_.size(); ++id) {
      if (!chain_op(kernel_[id]) || inner_[id]) continue;
      Chain chain = collect(id);
      if (chain.leaves.size() >= 3 && !grouped(chain)) {
        std::stable_sort(chain.leaves.begin(), chain.leaves.end(),
                         [&](ValueId a, ValueId b) { return level(a) < level(b); });
        chains.push_back(std::move(chain));
      }
    }
    return chains;
  }

 private:
  // Whether operand `v` of chain node `user` is an inner node of its chain.
  bool continues(ValueId user, ValueId v) const {
    const Op& u = kernel_[user];
    const Op& op = kernel_[v];
    return chain_op(u) && chain_op(op) && op.code == u.code && op.dtype == u.dtype && op.lanes == u.lanes &&
           uses_[v] == 1 && blocks_.parent[v] == blocks_.parent[user];
  }

  // The loop depth at which a value becomes known: 0 for constants.
  std::uint32_t level(ValueId v) const {
    if (kernel_[v].kind == OpKind::Const) return 0;
    return blocks_.loop_depth[v] + (kernel_[v].kind == OpKind::Loop ? 1 : 0);
  }

  // Leaves in left-to-right order and inner nodes, without recursion.
  Chain collect(ValueId root) const {
    Chain chain;
    chain.root = root;
    std::vector<ValueId> stack = {root};
    while (!stack.empty()) {
      const ValueId id = stack.back();
      stack.pop_back();
      if (id != root && !(chain_op(kernel_[id]) && inner_[id] && in_chain(id, root))) {
        chain.leaves.push_back(id);
        continue;
      }
      if (id != root) chain.inner.push_back(id);
      const Op& op = kernel_[id];
      stack.push_back(op.src[1]);
      stack.push_back(op.src[0]);
    }
    std::sort(chain.inner.begin(), chain.inner.end());
    return chain;
  }

  // Whether inner node `id` belongs under `root` (same op, type and block).
  bool in_chain(ValueId id, ValueId root) const {
    const Op& op = kernel_[id];
    const Op& r = kernel_[root];
    return op.code == r.code && op.dtype == r.dtype && op.lanes == r.lanes && blocks_.parent[id] == blocks_.parent[root];
  }

  // Whether, for every level below the deepest, the leaves up to that level
  // are one leaf or exactly the leaves of one subtree (then LICM can hoist
  // them already).
  bool grouped(const Chain& chain) const {
    // Per node of the tree: how many leaves, the deepest level among them.
    std::unordered_map<ValueId, std::pair<std::size_t, std::uint32_t>> summary;
    auto summary_of = [&](ValueId v) -> std::pair<std::size_t, std::uint32_t> {
      const bool node = v == chain.root || std::binary_search(chain.inner.begin(), chain.inner.end(), v);
      return node ? summary.at(v) : std::pair<std::size_t, std::uint32_t>{1, level(v)};
    };
    std::vector<ValueId> nodes = chain.inner;
    nodes.push_back(chain.root);
    for (ValueId id : nodes) {
      const auto [n0, l0] = summary_of(kernel_[id].src[0]);
      const auto [n1, l1] = summary_of(kernel_[id].src[1]);
      summary[id] = {n0 + n1, std::max(l0, l1)};
    }
    std::set<std::uint32_t> levels;
    for (ValueId leaf : chain.leaves) levels.insert(level(leaf));
    const std::uint32_t deepest = *levels.rbegin();
    for (std::uint32_t t : levels) {
      if (t == deepest) break;
      std::size_t count = 0;
      for (ValueId leaf : chain.leaves) count += level(leaf) <= t ? 1 : 0;
      if (count <= 1) continue;
      bool subtree = false;
      for (ValueId id : chain.inner) subtree = subtree || (summary.at(id).first == count && summary.at(id).second <= t);
      if (!subtree) return false;
    }
    return true;
  }

  const Kernel& kernel_;
  ir::Blocks blocks_;
  std::vector<std::uint32_t> uses_;
  std::vector<bool> inner_;  // used once, by a node of the same chain op
};

class Reassociate final : public Optimization {
 public:
  std::string_view name() const override { return "reassociate"; }
  std::string_view description() const override {
    return "regroup integer add/mul/min/max/and/or/xor chains so loop-invariant operands combine first";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo&) const override {
    if (!is_valid(kernel) || ChainFinder(kernel).chains_to_regroup().empty()) return {};
    return {make_step(name(), {})};
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo&) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY(step_params(step, {}));
    const std::vector<Chain> chains = ChainFinder(kernel).chains_to_regroup();
    if (chains.empty()) return step_error(step, "no integer chain to regroup");
    std::vector<const Chain*> chain_at(kernel.size(), nullptr);
    std::vector<bool> drop(kernel.size(), false);
    for (const Chain& chain : chains) {
      chain_at[chain.root] = &chain;
      for (ValueId id : chain.inner) drop[id] = true;
    }
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      if (drop[id]) {
        rw.drop(id);
        return true;
      }
      if (chain_at[id] == nullptr) return false;
      const Chain& chain = *chain_at[id];
      ir::Value sum = rw.map(chain.leaves[0]);
      for (std::size_t i = 1; i < chain.leaves.size(); ++i)
        sum = rw.out().binary(kernel[id].binary(), sum, rw.map(chain.leaves[i]));
      rw.replace(id, sum);
      return true;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& reassociate() {
  static const Reassociate instance;
  return instance;
}

}  // namespace kiln::passes::opts
