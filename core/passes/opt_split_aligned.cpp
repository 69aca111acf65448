// split_aligned(loop, factor): split_loop for a loop whose accesses start
// anywhere, as the rows of an [m, n] tensor do when n is odd. The loop-th
// LOOP (program order), of constant count n >= 2 * factor, must access a
// GLOBAL buffer at `base + counter` (base defined before the loop: the
// anchor, the first such access in the body). It becomes
//
//   a0 = (base + factor - 1) / factor * factor     first aligned element
//   h  = (factor - base % factor) % factor         = a0 - base, in [0, factor - 1]
//   LOOP j < h:                 body(j)            the head
//   LOOP i < nb: LOOP k < factor: body(h + i * factor + k), base + counter = a0 + i * factor + k
//   LOOP t < e - h: if h + t < e: body(h + t + nb * factor)   the tail, e = n - nb * factor
//
// with nb = (n - factor + 1) / factor, a constant (every h leaves at least
// nb whole blocks), so the block loop's count is constant whatever the
// row's alignment: row_cache (equal constant counts) and tiled_reduce treat
// it as split_loop's outer loop. The anchor's index in the blocks is
// written `factor * q + factor * i + k` (q = (base + factor - 1) / factor,
// an atom of its affine form), a provable multiple of `factor` at k = 0, so
// `vectorize` makes each block one aligned vector access. The head and tail
// (dynamic counts, together e < 2 * factor) stay scalar; the tail's IF is
// always true and tells the bounds analysis (which narrows by IF conditions,
// not by loop counts) that the tail stays in the row. Iterations
// run in the original order, so the results are unchanged. `base` must not
// be negative (an element index is not). Refused where `base` is provably a
// multiple of `factor` (rows of a length it divides): split_loop's blocks
// are aligned there without a head or tail. configs() proposes top-level
// loops only (see there).
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::ValueId;

constexpr std::int64_t kFactors[] = {8, 4};

// The base of the first GLOBAL/GLOBAL_MUT access in the loop's body at
// index `base + counter` with `base` usable before the loop; kNoValue when
// there is none.
ValueId anchor_base(const Kernel& kernel, const LoopSite& site) {
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  for (ValueId id = site.loop + 1; id < site.end; ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind != OpKind::Load && op.kind != OpKind::Store) continue;
    const ir::Op& memory = kernel[op.src[0]];
    if (memory.kind != OpKind::Param) continue;
    const ir::Op& index = kernel[op.src[1]];
    if (index.kind != OpKind::Binary || index.binary() != ir::BinaryOp::Add || index.dtype != ir::DType::I64 ||
        index.lanes != 1)
      continue;
    for (int side = 0; side < 2; ++side) {
      if (index.src[side] != site.loop) continue;
      const ValueId base = index.src[1 - side];
      if (base >= site.loop) continue;
      const ValueId block = blocks.value_block(kernel, base);
      if (block == ir::kNoValue || blocks.encloses(block, site.loop)) return base;
    }
  }
  return ir::kNoValue;
}

// Whether `base` is provably a multiple of `factor` (every coefficient of its
// affine form and its constant): then split_loop's blocks are aligned already.
bool provably_aligned(const Kernel& kernel, ValueId base, std::int64_t factor) {
  const std::optional<ir::AffineForm> form = ir::affine_form(kernel, base);
  if (!form || form->constant % factor != 0) return false;
  for (const auto& [atom, coefficient] : form->terms)
    if (coefficient % factor != 0) return false;
  return true;
}

class SplitAligned final : public Optimization {
 public:
  std::string_view name() const override { return "split_aligned"; }
  std::string_view description() const override {
    return "split a constant LOOP into a head, aligned blocks of `factor` and a tail (accesses at base + counter)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo&) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    const std::vector<LoopSite> sites = loop_sites(kernel);
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    for (std::size_t position = 0; position < sites.size(); ++position) {
      const std::optional<std::int64_t> n = sites[position].count;
      // Top-level loops only (a row kernel's): under a pad's IF the bounds
      // analysis narrows the row index, but not the aligned start, which
      // simplify_algebra rewrites around it; such a step would compile with
      // run-time guards.
      if (blocks.parent[sites[position].loop] != ir::kNoValue) continue;
      const ValueId base = n ? anchor_base(kernel, sites[position]) : ir::kNoValue;
      if (base == ir::kNoValue) continue;
      for (std::int64_t factor : kFactors)
        if (*n >= 2 * factor && !provably_aligned(kernel, base, factor))
          steps.push_back(make_step(name(), {{"loop", static_cast<std::int64_t>(position)}, {"factor", factor}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo&) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"loop", "factor"}));
    const std::int64_t factor = params[1];
    KILN_TRY_ASSIGN(const auto site, step_counted_loop(step, kernel, params[0]));
    const std::int64_t n = *site.count;
    if (factor < 2) return step_error(step, "factor must be at least 2");
    if (n < 2 * factor)
      return step_error(step, "the count " + std::to_string(n) + " is below twice the factor " + std::to_string(factor));
    const ValueId base_id = anchor_base(kernel, site);
    if (base_id == ir::kNoValue)
      return step_error(step, "the loop accesses no GLOBAL buffer at base + counter with base defined before it");
    if (provably_aligned(kernel, base_id, factor))
      return step_error(step, "the accesses start at multiples of " + std::to_string(factor) + " already: split_loop");
    const std::int64_t blocks = (n - factor + 1) / factor;

    // The body's `base + counter` indices (the anchor's and any other with
    // the same base): in the blocks they are written as factor * q +
    // factor * i + k directly, so that value_range bounds them by the
    // buffer (base and q move together, which intervals cannot see).
    std::vector<bool> base_plus_counter(kernel.size(), false);
    for (ValueId id = site.loop + 1; id < site.end; ++id) {
      const ir::Op& op = kernel[id];
      base_plus_counter[id] = op.kind == OpKind::Binary && op.binary() == ir::BinaryOp::Add && op.lanes == 1 &&
                              ((op.src[0] == base_id && op.src[1] == site.loop) ||
                               (op.src[1] == base_id && op.src[0] == site.loop));
    }
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      if (id != site.loop) return false;
      ir::Builder& b = rw.out();
      std::vector<ValueId> overrides(kernel.size(), ir::kNoValue);
      // A copy of the body with the counter `counter`; `index` (when valid)
      // replaces its base + counter indices.
      auto copy_body = [&](ir::Value counter, ir::Value index) {
        overrides[site.loop] = counter.id;
        for (ValueId op_id = site.loop + 1; op_id < site.end; ++op_id) {
          if (index.valid() && base_plus_counter[op_id]) {
            overrides[op_id] = index.id;
            continue;
          }
          ir::Op op = kernel[op_id];
          for (ValueId& v : op.operands()) v = overrides[v] != ir::kNoValue ? overrides[v] : rw.map(v).id;
          overrides[op_id] = b.append(op).id;
        }
      };
      const ir::Value f = b.constant_i64(factor);
      const ir::Value base = rw.map(base_id);
      const ir::Value aligned = b.mul(b.div(b.add(base, b.constant_i64(factor - 1)), f), f);
      // h = aligned - base, written (factor - base % factor) % factor: its
      // range [0, factor - 1] is then plain to value_range (the bounds
      // analysis and the cost model bound the loops and indices by it).
      const ir::Value head = b.mod(b.sub(f, b.mod(base, f)), f);
      const ir::Value j = b.loop(head);
      copy_body(j, {});
      b.end_loop(j);
      const ir::Value outer = b.loop(blocks);
      const ir::Value inner = b.loop(factor);
      const ir::Value block_start = b.mul(outer, f);
      copy_body(b.add(b.add(head, block_start), inner), b.add(b.add(aligned, block_start), inner));
      b.end_loop(inner);
      b.end_loop(outer);
      // The tail: positions blocks * factor + u of the row, u = h + t < e
      // (e = n - blocks * factor). The IF is always true; it tells the
      // bounds analysis (which narrows ranges by IF conditions, not by a
      // loop's count) that u < e, i.e. that the tail stays in the row, while
      // the index stays affine in t (tiled_reduce splits the writing loop's
      // tail across threads).
      const std::int64_t edge = n - blocks * factor;
      const ir::Value t = b.loop(b.sub(b.constant_i64(edge), head));
      const ir::Value u = b.add(head, t);
      const ValueId inside = b.if_(b.cmplt(u, b.constant_i64(edge)));
      copy_body(b.add(u, b.constant_i64(blocks * factor)), {});
      b.end_if(inside);
      b.end_loop(t);
      drop_range(rw, site.loop, site.end);
      return true;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& split_aligned() {
  static const SplitAligned instance;
  return instance;
}

}  // namespace kiln::passes::opts
