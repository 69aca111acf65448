// prefetch_rows(loop, distance): in the loop-th LOOP (program order), before
// each LOAD of a buffer param whose index is one row of a GROUP axis away
// from the next group's (affine in exactly one GROUP INDEX, coefficient s:
// the row stride; or in split_aligned's aligned start of the row, see
// add_row_terms), a PREFETCH of the element s * distance further on, i.e.
// the same element of the row `distance` rows ahead: groups ahead, or where
// coarsen gave each work-item several rows, the work-item's next rows (see
// row_stride). Results are unchanged: PREFETCH is a hint (kernel_ir.h).
//
// Why: on the CPU (c:0) a row kernel's threads each run their rows one after
// the other, and each row's loops run in sequence: the first reads the row
// from DRAM, the later ones compute on it in the caches (softmax's
// exponentials, the norms' scaling) while memory sits idle. Prefetching the
// next row in a later loop overlaps the two. A hand-written probe of f32
// softmax 4096 x 16384 (docs/passes.md, "CPU figures") ran 20.2-20.4 ms with
// a prefetch of the next row once per 16 elements of its exponential loop,
// 26.0-26.9 ms without.
//
// Only loads of at least 32 bytes (vectors) get one: a prefetch per element
// would cost more issue slots than the misses it hides. Only on a device
// that claims PREFETCH for the param's dtype.
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <optional>
#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::ValueId;

constexpr std::uint64_t kMinPrefetchedBytes = 32;

// An index's row terms: the coefficient of its GROUP INDEX (where the form
// has exactly one such term) and of each LOOP counter. A term `f * (x / f)`
// (or `f * (x >> log2 f)`), x affine with coefficient s for an atom
// (split_aligned's first aligned element of a row, f * ((base + f - 1) / f)),
// counts as that atom with coefficient s: the element it names lies within
// f - 1 of base's, and the prefetch, a hint, needs only the row's
// neighbourhood. `nested`: within such an x (no second level). A term
// `c * min(x, last)` (coarsen mode 2's row, clamped to the axis's last)
// counts as `c * x`: it differs only in the last work-item, whose prefetch
// then points past the rows, as every work-item's last rows' do. `scale`:
// the coefficient of the term being expanded.
struct RowTerms {
  std::optional<std::int64_t> group;         // the GROUP INDEX's coefficient
  bool ambiguous = false;                    // two GROUP terms
  std::vector<std::pair<ValueId, std::int64_t>> loops;  // LOOP counter -> coefficient
};

void add_row_terms(const Kernel& kernel, ir::AffineForms& forms, ValueId index, bool nested, std::int64_t scale,
                   RowTerms& terms) {
  const std::optional<ir::AffineForm> form = forms.of(index);
  if (!form) return;
  for (const auto& [atom, unscaled] : form->terms) {
    std::int64_t coefficient = 0;
    if (__builtin_mul_overflow(unscaled, scale, &coefficient)) continue;
    const ir::Op& a = kernel[atom];
    if (a.kind == OpKind::Index && a.scope() == ir::Scope::Group) {
      terms.ambiguous = terms.ambiguous || terms.group.has_value();
      terms.group = coefficient;
    } else if (a.kind == OpKind::Loop) {
      terms.loops.emplace_back(atom, coefficient);
    } else if (!nested && a.kind == OpKind::Binary && a.lanes == 1 &&
               (a.binary() == ir::BinaryOp::Div || a.binary() == ir::BinaryOp::Shr)) {
      // x / f, or x >> log2(f) as simplify_algebra writes a power of two.
      const auto operand = ir::constant_int(kernel, a.src[1]);
      const bool shift = a.binary() == ir::BinaryOp::Shr;
      if (operand && *operand >= 0 && *operand < 62 && (shift ? std::int64_t{1} << *operand : *operand) == unscaled)
        add_row_terms(kernel, forms, a.src[0], true, scale, terms);
    } else if (a.kind == OpKind::Binary && a.lanes == 1 && a.binary() == ir::BinaryOp::Min &&
               ir::constant_int(kernel, a.src[1])) {
      add_row_terms(kernel, forms, a.src[0], nested, coefficient, terms);
    }
  }
}

// The row stride of LOAD `id`'s index in loop `site`: its GROUP INDEX's
// coefficient S; or, where coarsen runs c rows a work-item in a LOOP around
// the site (S = c * s for that LOOP's counter's coefficient s), s: the next
// row is the work-item's next, not the next work-item's (c rows on). nullopt
// when there is none or it is not positive.
std::optional<std::int64_t> row_stride(const Kernel& kernel, ir::AffineForms& forms, ValueId id, const LoopSite& site,
                                       const std::vector<LoopSite>& sites) {
  RowTerms terms;
  add_row_terms(kernel, forms, kernel[id].src[1], false, 1, terms);
  if (!terms.group || terms.ambiguous || *terms.group <= 0) return std::nullopt;
  for (const auto& term : terms.loops) {
    const ValueId counter = term.first;
    const std::int64_t coefficient = term.second;
    if (coefficient <= 0 || counter >= site.loop) continue;  // the site's own counter or one inside it
    const auto around = std::find_if(sites.begin(), sites.end(), [&](const LoopSite& l) { return l.loop == counter; });
    if (around == sites.end() || around->end < site.end || !around->count) continue;
    std::int64_t rows = 0;
    if (!__builtin_mul_overflow(coefficient, *around->count, &rows) && rows == *terms.group) return coefficient;
  }
  return terms.group;
}

// The LOADs of loop `site` (one of the kernel's `sites`) to prefetch ahead
// of, with their row strides.
std::vector<std::pair<ValueId, std::int64_t>> prefetched_loads(const Kernel& kernel, const LoopSite& site,
                                                               const std::vector<LoopSite>& sites,
                                                               const DeviceInfo& device) {
  std::vector<std::pair<ValueId, std::int64_t>> loads;
  ir::AffineForms forms(kernel);
  for (ValueId id = site.loop + 1; id < site.end; ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind != OpKind::Load || kernel[op.src[0]].kind != OpKind::Param) continue;
    if (static_cast<std::uint64_t>(op.lanes) * ir::dtype_bytes(op.dtype) < kMinPrefetchedBytes) continue;
    if (!device.supports_op_kind(KILN_OP_PREFETCH, static_cast<unsigned>(op.dtype))) continue;
    if (const auto stride = row_stride(kernel, forms, id, site, sites)) loads.emplace_back(id, *stride);
  }
  return loads;
}

class PrefetchRows final : public Optimization {
 public:
  std::string_view name() const override { return "prefetch_rows"; }
  std::string_view description() const override {
    return "before each vector load of a row in a LOOP, a prefetch of the same element `distance` rows (groups) ahead";
  }

  // Every loop with such loads, one and two rows ahead.
  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    const std::vector<LoopSite> sites = loop_sites(kernel);
    for (std::size_t position = 0; position < sites.size(); ++position) {
      if (prefetched_loads(kernel, sites[position], sites, device).empty()) continue;
      for (const std::int64_t distance : {1, 2})
        steps.push_back(make_step(name(), {{"loop", static_cast<std::int64_t>(position)}, {"distance", distance}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"loop", "distance"}));
    KILN_TRY_ASSIGN(const auto site, step_loop(step, kernel, params[0]));
    const std::int64_t distance = params[1];
    if (distance < 1 || distance > 8) return step_error(step, "distance must be 1..8 rows");
    const auto loads = prefetched_loads(kernel, site, loop_sites(kernel), device);
    if (loads.empty())
      return step_error(step, "the loop has no vector load (>= " + std::to_string(kMinPrefetchedBytes) +
                                  " bytes) of a param indexed by one GROUP axis that the device prefetches");
    std::vector<std::int64_t> ahead(kernel.size(), 0);
    for (const auto& [id, stride] : loads) {
      if (stride > INT64_MAX / distance) return step_error(step, "the row stride times the distance overflows");
      ahead[id] = stride * distance;
    }
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      if (ahead[id] == 0) return false;
      ir::Builder& b = rw.out();
      const ir::Op& load = kernel[id];
      const ir::Value offset = b.constant_i64(ahead[id]);
      const ir::Value index = b.add(rw.map(load.src[1]), offset);
      b.prefetch(rw.map(load.src[0]), index);
      rw.copy(id);
      return true;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& prefetch_rows() {
  static const PrefetchRows instance;
  return instance;
}

}  // namespace kiln::passes::opts
