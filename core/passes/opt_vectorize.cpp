// vectorize(lanes): consecutive scalar LOADs/STOREs (indices base + 0 ..
// base + lanes-1, base a provable multiple of lanes) become one vector
// access of `lanes`, and the element-wise ops between them vector ops
// (VEC_BROADCAST for a scalar all lanes share, VEC_EXTRACT where a scalar
// is still needed). Typical sources of consecutive accesses: unrolled
// loops, coarsened or register-blocked axes. Exact: every lane computes what
// its scalar op computed (opt_vectorize_plan.hpp says why moving the
// accesses together is safe). Scalar ops left without users are removed by
// the always-on DCE.
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "opt_vectorize_plan.hpp"
#include "optimizations.hpp"

#include <algorithm>
#include <map>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

constexpr std::string_view kName = "vectorize";

// Emits the vector ops of a plan while copying the old kernel.
class Emitter {
 public:
  Emitter(const Kernel& old, const vec::Plan& plan) : old_(old), plan_(plan), rw_(old), values_(plan.nodes.size()) {
    for (std::size_t n = 0; n < plan.nodes.size(); ++n) {
      const vec::Node& node = plan.nodes[n];
      if (node.kind == vec::NodeKind::Load) loads_at_.emplace(node.place, static_cast<int>(n));
      if (node.kind == vec::NodeKind::Op) ops_at_.emplace(node.place, static_cast<int>(n));
    }
    for (std::size_t g = 0; g < plan.stores.size(); ++g)
      for (ValueId m : plan.stores[g].members) store_of_.emplace(m, static_cast<int>(g));
  }

  Kernel run() {
    for (ValueId id = 0; id < old_.size(); ++id) {
      if (rw_.handled(id)) continue;
      if (const auto load = loads_at_.find(id); load != loads_at_.end()) {
        emit_load(load->second);
        continue;
      }
      if (const auto store = store_of_.find(id); store != store_of_.end()) {
        const vec::StoreGroup& group = plan_.stores[static_cast<std::size_t>(store->second)];
        if (id == *std::max_element(group.members.begin(), group.members.end())) emit_store(group);
        rw_.drop(id);
        continue;
      }
      rw_.copy(id);
      for (auto [at, end] = ops_at_.equal_range(id); at != end; ++at) emit_op(at->second);
    }
    return rw_.finish();
  }

 private:
  ir::Builder& out() { return rw_.out(); }
  std::uint8_t lanes() const { return static_cast<std::uint8_t>(plan_.lanes); }

  void emit_load(int n) {
    const vec::Node& node = plan_.nodes[static_cast<std::size_t>(n)];
    const ir::Op& lane0 = old_[node.members.front()];
    const Value vector = access(lane0, node.aligned, ir::kNoValue);
    values_[static_cast<std::size_t>(n)] = vector;
    for (std::uint32_t lane = 0; lane < node.members.size(); ++lane)
      rw_.replace(node.members[lane], out().extract(vector, lane));
  }

  void emit_op(int n) {
    const vec::Node& node = plan_.nodes[static_cast<std::size_t>(n)];
    ir::Op op = old_[node.members.front()];
    op.lanes = lanes();
    for (std::size_t slot = 0; slot < node.operands.size(); ++slot)
      op.src[slot] = node.operands[slot] < 0 ? rw_.map(op.src[slot]).id : vector_of(node.operands[slot]).id;
    values_[static_cast<std::size_t>(n)] = out().append(op);
  }

  void emit_store(const vec::StoreGroup& group) {
    const ir::Op& lane0 = old_[group.members.front()];
    access(lane0, group.aligned, vector_of(group.value).id);
  }

  // Lane 0's LOAD or STORE widened to the vector (`value`: a store's), at
  // any element index (KILN_ACCESS_UNALIGNED) where its index is not a
  // provable multiple of the lanes.
  Value access(const ir::Op& lane0, bool aligned, ValueId value) {
    ir::Op op = lane0;
    op.lanes = lanes();
    op.attr = aligned ? 0 : KILN_ACCESS_UNALIGNED;
    op.src[0] = rw_.map(lane0.src[0]).id;
    op.src[1] = rw_.map(lane0.src[1]).id;
    if (op.kind == OpKind::Store) op.src[2] = value;
    return out().append(op);
  }

  // The vector of node n at the current position (broadcasts and gathers
  // are made here, from scalars every lane's op could see).
  Value vector_of(int n) {
    const vec::Node& node = plan_.nodes[static_cast<std::size_t>(n)];
    switch (node.kind) {
      case vec::NodeKind::Load:
      case vec::NodeKind::Op:
        return values_[static_cast<std::size_t>(n)];
      case vec::NodeKind::Broadcast:
        return out().broadcast(rw_.map(node.members.front()), lanes());
      case vec::NodeKind::Gather: {
        Value vector = out().broadcast(rw_.map(node.members.front()), lanes());
        for (std::uint32_t lane = 1; lane < node.members.size(); ++lane)
          vector = out().insert(vector, rw_.map(node.members[lane]), lane);
        return vector;
      }
    }
    return {};
  }

  const Kernel& old_;
  const vec::Plan& plan_;
  ir::Rewriter rw_;
  std::vector<Value> values_;  // per node: its vector, once emitted
  std::multimap<ValueId, int> loads_at_, ops_at_;
  std::map<ValueId, int> store_of_;
};

// Which vector accesses the device runs at any element index (CPUs: all,
// so rows of odd length vectorize; the CUDA plugin: loads of buffers, so
// rmsnorm's weights do beside split_aligned's blocks of such rows).
vec::AnyIndex any_index(const DeviceInfo& device) {
  const bool all = device.has_feature(KILN_FEATURE_UNALIGNED_VECTORS);
  return {all || device.has_feature(KILN_FEATURE_UNALIGNED_VECTOR_LOADS), all};
}

class Vectorize final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "consecutive, aligned scalar loads/stores (on a device with vector accesses at any element index, "
           "unaligned ones too) become vector accesses of `lanes`, the element-wise ops between them vector ops";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    if (!ir::verify(kernel).ok()) return {};  // only valid kernels have variants
    std::vector<OptStep> steps;
    std::vector<std::uint32_t> widths = device.vector_widths();
    std::sort(widths.rbegin(), widths.rend());  // widest first
    for (std::uint32_t lanes : widths)
      if (lanes > 1 && lanes <= KILN_MAX_LANES && !vec::plan_vectorize(kernel, lanes, any_index(device)).empty())
        steps.push_back(make_step(kName, {{"lanes", lanes}}));
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    if (Result<void> valid = ir::verify(kernel); !valid.ok())
      return step_error(step, "the kernel does not verify: " + valid.error().message);
    KILN_TRY_ASSIGN(const std::int64_t lanes, require_param(step, "lanes"));
    const std::vector<std::uint32_t> widths = device.vector_widths();
    if (lanes < 2 || lanes > KILN_MAX_LANES ||
        std::find(widths.begin(), widths.end(), static_cast<std::uint32_t>(lanes)) == widths.end()) {
      std::string supported;
      for (std::uint32_t w : widths)
        if (w > 1) supported += (supported.empty() ? "" : ", ") + std::to_string(w);
      return step_error(step, "the device has no " + std::to_string(lanes) + "-lane vectors (supported: " +
                                  (supported.empty() ? "none" : supported) + ")");
    }
    const vec::Plan plan = vec::plan_vectorize(kernel, static_cast<std::uint32_t>(lanes), any_index(device));
    if (plan.empty())
      return step_error(step, "no " + std::to_string(lanes) + " consecutive aligned loads or stores to group");
    return Emitter(kernel, plan).run();
  }
};

}  // namespace

const Optimization& vectorize() {
  static const Vectorize instance;
  return instance;
}

}  // namespace kiln::passes::opts
