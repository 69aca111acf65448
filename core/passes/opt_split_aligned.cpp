// split_aligned(loop, factor[, flat]): split_loop for a loop whose accesses start
// anywhere, as the rows of an [m, n] tensor do when n is odd. The loop-th
// LOOP (program order), of constant count n >= 2 * factor, must access a
// GLOBAL buffer at `base + counter` (base defined before the loop: the
// anchor, the first such access in the body). It becomes
//
//   a0 = (base + factor - 1) / factor * factor     first aligned element
//   h  = (factor - base % factor) % factor         = a0 - base, in [0, factor - 1]
//   LOOP r < e: body(r < h ? r : r + nb * factor)  a reduction's loose ends: head, then tail
//   LOOP i < nb: LOOP k < factor: body(h + i * factor + k), base + counter = a0 + i * factor + k
//
// and a parallel loop (no accumulation: each iteration writes its own
// element) keeps its head and tail around the blocks, their indices affine
// so that tiled_reduce splits them across threads (each thread at most one
// element of each):
//
//   LOOP j < h: body(j);  the blocks as above;  LOOP t < e - h: if h + t < e: body(h + t + nb * factor)
//
// with nb = (n - factor + 1) / factor and e = n - nb * factor, constants
// (every h leaves at least nb whole blocks; e < 2 * factor), so a
// reduction's loops have constant counts whatever the row's alignment:
// row_cache (equal constant counts) and tiled_reduce treat the blocks as
// split_loop's outer loop, and unroll writes the loose ends out whole (in
// every thread, folded into its partial before the tree), their loads issued
// together ahead of the first block's (on the H100 a softmax whose head was
// a rolled loop, a DRAM miss its max waited on before the thread asked for
// its first block, and whose tail ran after the tree, lost 4% of its
// bandwidth to them; docs/passes.md). The anchor's index in the blocks is
// written `factor * q + factor * i + k` (q = (base + factor - 1) / factor,
// an atom of its affine form), a provable multiple of `factor` at k = 0, so
// `vectorize` makes each block one aligned vector access. The loose ends
// stay scalar.
//
// With flat = 1 the blocks stay one loop, `LOOP j < nb * factor: body(h + j)`
// (the anchor's index `factor * q + j`): the shape of a row whose length
// factor divides, so the CPU's lane_reduce, split_loop and row_cache take it
// as they take such rows, and its vector accesses start aligned (on c:0 a
// streaming store needs that, and an unaligned 64-byte access spans two
// cache lines; docs/passes.md, "CPU figures").
//
// A reduction's tail runs before its blocks, so the loop's iterations must
// be independent but for accumulations (a loop tiled_reduce could split:
// reduce::match_loop; a prefix sum is refused); a float sum is
// reassociated by it, a max or min is not changed. `base` must not be
// negative (an element index is not). Refused where `base` is provably a
// multiple of `factor` (rows of a length it divides): split_loop's blocks
// are aligned there without loose ends. configs() proposes top-level loops
// only (see there).
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "opt_tiled_reduce_match.hpp"
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

// Whether the loop's iterations may run in another order: independent but
// for accumulations (what tiled_reduce splits across threads).
bool reorderable(const Kernel& kernel, const ir::Blocks& blocks, ValueId loop) {
  return std::holds_alternative<reduce::SplittableLoop>(reduce::match_loop(kernel, blocks, loop));
}

class SplitAligned final : public Optimization {
 public:
  std::string_view name() const override { return "split_aligned"; }
  std::string_view description() const override {
    return "split a constant LOOP into its loose ends (head and tail, first) and aligned blocks of `factor` (accesses at "
           "base + counter; flat=1: the blocks one loop of whole blocks)";
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
      if (base == ir::kNoValue || !reorderable(kernel, blocks, sites[position].loop)) continue;
      for (std::int64_t factor : kFactors)
        if (*n >= 2 * factor && !provably_aligned(kernel, base, factor))
          steps.push_back(make_step(name(), {{"loop", static_cast<std::int64_t>(position)}, {"factor", factor}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo&) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY(known_params(step, {"loop", "factor", "flat"}));
    KILN_TRY_ASSIGN(const std::int64_t loop_number, require_param(step, "loop"));
    KILN_TRY_ASSIGN(const std::int64_t factor, require_param(step, "factor"));
    KILN_TRY_ASSIGN(const bool flat, flag_param(step, "flat"));
    KILN_TRY_ASSIGN(const auto site, step_counted_loop(step, kernel, loop_number));
    const std::int64_t n = *site.count;
    if (factor < 2) return step_error(step, "factor must be at least 2");
    if (n < 2 * factor)
      return step_error(step, "the count " + std::to_string(n) + " is below twice the factor " + std::to_string(factor));
    const ValueId base_id = anchor_base(kernel, site);
    if (base_id == ir::kNoValue)
      return step_error(step, "the loop accesses no GLOBAL buffer at base + counter with base defined before it");
    if (provably_aligned(kernel, base_id, factor))
      return step_error(step, "the accesses start at multiples of " + std::to_string(factor) + " already: split_loop");
    const auto matched = reduce::match_loop(kernel, ir::analyze_blocks(kernel), site.loop);
    if (std::holds_alternative<std::string>(matched))
      return step_error(step, "the loop's iterations may not be reordered (a reduction's loose ends run first): " +
                                  std::get<std::string>(matched));
    const bool reduction = !std::get<reduce::SplittableLoop>(matched).accumulators.empty();
    const std::int64_t blocks = (n - factor + 1) / factor;
    const std::int64_t loose = n - blocks * factor;

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
      // A reduction's loose ends first, in one loop: r < h the head's
      // elements, the rest the tail's (positions nb * factor + r of the
      // row). Both arms lie in [0, n - 1], which the bounds analysis sees
      // from r's constant count.
      if (reduction) {
        const ir::Value r = b.loop(loose);
        const ir::Value position = b.select(b.cmplt(r, head), r, b.add(r, b.constant_i64(blocks * factor)));
        copy_body(position, {});
        b.end_loop(r);
      } else {
        const ir::Value j = b.loop(head);
        copy_body(j, {});
        b.end_loop(j);
      }
      if (flat) {
        const ir::Value j = b.loop(blocks * factor);
        copy_body(b.add(head, j), b.add(aligned, j));
        b.end_loop(j);
      } else {
        const ir::Value outer = b.loop(blocks);
        const ir::Value inner = b.loop(factor);
        const ir::Value block_start = b.mul(outer, f);
        copy_body(b.add(b.add(head, block_start), inner), b.add(b.add(aligned, block_start), inner));
        b.end_loop(inner);
        b.end_loop(outer);
      }
      if (!reduction) {
        // The tail: positions blocks * factor + u of the row, u = h + t < e.
        // The IF is always true; it tells the bounds analysis (which
        // narrows ranges by IF conditions, not by a loop's dynamic count)
        // that u < e, i.e. that the tail stays in the row, while the index
        // stays affine in t (tiled_reduce splits the tail across threads).
        const ir::Value t = b.loop(b.sub(b.constant_i64(loose), head));
        const ir::Value u = b.add(head, t);
        const ValueId inside = b.if_(b.cmplt(u, b.constant_i64(loose)));
        copy_body(b.add(u, b.constant_i64(blocks * factor)), {});
        b.end_if(inside);
        b.end_loop(t);
      }
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
