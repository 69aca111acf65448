// row_cache(loop): the loop-th LOOP (the producer) keeps what it loads from
// read-only buffers in a REGISTER array, and the later LOOPs of the same
// block that load the same elements (consumers) read the array instead of
// memory. Softmax reads its row in three loops (max, sum of exp, write);
// with the row, or each thread's share of it after tiled_reduce, cached,
// memory sees each element once.
//
//   producer:  v = load x[f(j)]            ->  v = load x[f(j)]
//                                              store cache[j * S + q], v
//   consumer:  w = load x[f(j')]           ->  w = load cache[j' * S + q]
//
// q numbers the cached loads of the producer's body (S of them, counted in
// elements: each load's lanes). A consumer load is replaced only when it is
// *equivalent* to producer load q: its index, and the condition of every IF
// between it and its loop, are the producer's expressions with the
// producer's counter renamed to the consumer's (same SSA values from
// outside the loops, same constants, same pure ops). The two loops have the
// same trip count (one SSA value), run by the same thread, and GLOBAL
// buffers are read-only for a launch (kernel_ir.h), so the consumer reads
// exactly the value the producer loaded at the same counter: the rewrite is
// exact, and a consumer load under conditions the producer's load did not
// share is never rewritten.
//
// Composes with tiled_reduce (run it first: the producer and consumers are
// then the per-thread loops over the thread's share, guards included) and
// with unroll and vectorize after it: fully unrolled loops give the array
// constant indices (registers on a GPU), and consecutive cached loads give
// consecutive slots, which vectorize groups into vector stores and loads.
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "loop_equivalence.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <map>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

constexpr std::string_view kName = "row_cache";
// A CPU keeps REGISTER arrays on the thread's stack (in L1/L2); a device
// with threads per group must hold them in its registers.
constexpr std::uint64_t kMaxCpuCacheBytes = 256 * 1024;

struct Plan {
  ValueId producer = ir::kNoValue;
  std::vector<ValueId> cached;                 // producer loads, in order (q)
  std::vector<std::int64_t> offsets;           // slot offset of each, in elements
  std::int64_t stride = 0;                     // S
  std::int64_t count = 0;                      // trip count
  ir::DType dtype = ir::DType::Invalid;
  std::map<ValueId, std::size_t> replaced;     // consumer load -> q
  std::map<ValueId, ValueId> consumer_loop;    // consumer load -> its LOOP
};

// The IFs between `id` and `loop`, innermost first; nullopt when an inner
// LOOP lies between them (its iterations would need slots of their own).
std::optional<std::vector<ValueId>> guards(const Kernel& kernel, const ir::Blocks& blocks, ValueId id, ValueId loop) {
  std::vector<ValueId> ifs;
  for (ValueId p = blocks.parent[id]; p != loop; p = blocks.parent[p]) {
    if (p == ir::kNoValue || kernel[p].kind != OpKind::If) return std::nullopt;
    ifs.push_back(p);
  }
  return ifs;
}

bool read_only_load(const Kernel& kernel, const ir::Op& op) {
  if (op.kind != OpKind::Load) return false;
  const ir::Op& memory = kernel[op.src[0]];
  return memory.kind == OpKind::Param && memory.param_kind() == ir::ParamKind::Global;
}

std::variant<Plan, std::string> plan(const Kernel& kernel, const ir::Blocks& blocks, ValueId producer,
                                     const DeviceInfo& device) {
  Plan p;
  p.producer = producer;
  const ir::Op& loop = kernel[producer];
  const auto count = ir::constant_int(kernel, loop.src[0]);
  if (!count || *count < 1) return std::string("the loop's trip count is not a positive constant (the cache needs a size)");
  p.count = *count;
  // Consumers: later LOOPs in the same block with the same trip count.
  std::vector<ValueId> consumers;
  for (ValueId id = blocks.end[producer] + 1; id < kernel.size(); ++id) {
    if (blocks.parent[id] != blocks.parent[producer]) {
      if (blocks.parent[producer] != ir::kNoValue && id >= blocks.end[blocks.parent[producer]]) break;
      continue;
    }
    const ir::Op& op = kernel[id];
    if (op.kind == OpKind::Loop &&
        (op.src[0] == loop.src[0] || ir::constant_int(kernel, op.src[0]) == count))
      consumers.push_back(id);
  }
  std::vector<std::vector<ValueId>> producer_guards;
  std::vector<ValueId> candidates;
  for (ValueId id = producer + 1; id < blocks.end[producer]; ++id) {
    if (!read_only_load(kernel, kernel[id])) continue;
    auto g = guards(kernel, blocks, id, producer);
    if (!g) continue;
    candidates.push_back(id);
    producer_guards.push_back(*g);
  }
  std::vector<bool> used(candidates.size(), false);
  for (ValueId consumer : consumers) {
    LoopEquivalence same(kernel, blocks, producer, consumer);
    for (ValueId id = consumer + 1; id < blocks.end[consumer]; ++id) {
      const ir::Op& op = kernel[id];
      if (!read_only_load(kernel, op)) continue;
      const auto g = guards(kernel, blocks, id, consumer);
      if (!g) continue;
      for (std::size_t q = 0; q < candidates.size(); ++q) {
        const ir::Op& c = kernel[candidates[q]];
        if (c.src[0] != op.src[0] || c.lanes != op.lanes || g->size() != producer_guards[q].size()) continue;
        bool match = same(c.src[1], op.src[1]);
        for (std::size_t k = 0; match && k < g->size(); ++k)
          match = same(kernel[producer_guards[q][k]].src[0], kernel[(*g)[k]].src[0]);
        if (!match) continue;
        used[q] = true;
        p.replaced[id] = q;
        p.consumer_loop[id] = consumer;
        break;
      }
    }
  }
  // Slots for the loads some consumer reads again, in program order.
  std::vector<std::size_t> slot_of(candidates.size(), SIZE_MAX);
  for (std::size_t q = 0; q < candidates.size(); ++q) {
    if (!used[q]) continue;
    const ir::Op& op = kernel[candidates[q]];
    if (p.dtype == ir::DType::Invalid) p.dtype = op.dtype;
    if (op.dtype != p.dtype) return std::string("the reused loads read buffers of different dtypes");
    if (!p.cached.empty() && op.lanes != kernel[p.cached.front()].lanes)
      return std::string("the reused loads have different vector widths");
    slot_of[q] = p.cached.size();
    p.cached.push_back(candidates[q]);
    p.offsets.push_back(p.stride);
    p.stride += op.lanes;
  }
  if (p.cached.empty()) return std::string("no later LOOP of the same trip count loads what this loop loads");
  for (auto& [load, q] : p.replaced) q = slot_of[q];
  const std::uint64_t bytes = static_cast<std::uint64_t>(p.count * p.stride) * ir::dtype_bytes(p.dtype);
  const std::uint64_t limit = device.max_local_threads > 1 ? device.register_bytes : kMaxCpuCacheBytes;
  if (bytes > limit)
    return "the cache needs " + std::to_string(bytes) + " bytes per thread, more than the " + std::to_string(limit) +
           " a thread may keep";
  return p;
}

class RowCache final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "keeps what a LOOP loads from read-only buffers in a REGISTER array; later LOOPs of the same trip "
           "count that load the same elements read the array instead (exact)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    const std::vector<ValueId> loops = loops_in_order(kernel);
    for (std::size_t number = 0; number < loops.size(); ++number)
      if (std::holds_alternative<Plan>(plan(kernel, blocks, loops[number], device)))
        steps.push_back(make_step(kName, {{"loop", static_cast<std::int64_t>(number)}}));
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"loop"}));
    const std::vector<ValueId> loops = loops_in_order(kernel);
    if (params[0] < 0 || params[0] >= static_cast<std::int64_t>(loops.size()))
      return step_error(step, "the kernel has no LOOP number " + std::to_string(params[0]) + " (counting from 0)");
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    auto planned = plan(kernel, blocks, loops[static_cast<std::size_t>(params[0])], device);
    if (std::holds_alternative<std::string>(planned)) return step_error(step, std::get<std::string>(planned));
    const Plan& p = std::get<Plan>(planned);

    std::map<ValueId, std::size_t> producer_slot;
    for (std::size_t q = 0; q < p.cached.size(); ++q) producer_slot[p.cached[q]] = q;
    ValueId first_op = 0;
    while (first_op < kernel.size() && kernel[first_op].kind == OpKind::Param) ++first_op;
    Value cache;
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      ir::Builder& b = rw.out();
      // STORAGE outside every LOOP and IF: in front of the first non-PARAM op.
      if (id == first_op)
        cache = b.storage(ir::Scope::Register, p.dtype, static_cast<std::uint64_t>(p.count * p.stride));
      const auto slot = [&](ValueId loop, std::size_t q) {
        return b.add(b.mul(rw.map(loop), b.constant_i64(p.stride)), b.constant_i64(p.offsets[q]));
      };
      if (auto produced = producer_slot.find(id); produced != producer_slot.end()) {
        const Value v = rw.copy(id);
        b.store(cache, slot(p.producer, produced->second), v);
        return true;
      }
      if (auto consumed = p.replaced.find(id); consumed != p.replaced.end()) {
        rw.replace(id, b.load(cache, slot(p.consumer_loop.at(id), consumed->second), kernel[id].lanes));
        return true;
      }
      return false;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& row_cache() {
  static const RowCache instance;
  return instance;
}

}  // namespace kiln::passes::opts
