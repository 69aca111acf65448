// The bounds analysis (kiln/passes/bounds.hpp): one walk in op order that
// computes every i64 value's range (kiln/sdk/integer_ranges.hpp's op_range), narrowed
// inside an IF by what its condition says (a < b, a > b and their AND), and
// classifies each LOAD and STORE against its memory's length.
//
// Narrowing is sound because a value defined inside an IF is used only
// inside it (the verifier's scope rule): the narrowed ranges are put back at
// its ENDIF. An index computed before the IF from a narrowed value is
// re-derived from its operands (a few levels deep), so a guard written
// after the index is computed (`i = 4 g; if g < n: store a[i]`) still counts.
#include "kiln/passes/bounds.hpp"

#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "value_range.hpp"

#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace kiln::passes {

using detail::Range;
using ir::BinaryOp;
using ir::DType;
using ir::OpKind;
using ir::ValueId;
using Maybe = std::optional<Range>;

namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr int kRederiveDepth = 16;  // levels of an index re-derived under a narrowing

bool is_i64_scalar(const ir::Op& op) { return op.dtype == DType::I64 && op.lanes == 1; }

class Classifier {
 public:
  explicit Classifier(const ir::Kernel& kernel)
      : k_(kernel), wire_(kernel.to_wire()), ranges_(kernel.size()), reads_memory_(kernel.size()),
        symbolic_(kernel.size()) {}

  std::vector<AccessBounds> run() {
    std::vector<AccessBounds> out;
    // Inside a narrowing IF, operands defined before it are re-derived.
    const detail::RangeOf current = [&](ValueId v) { return saved_.empty() ? ranges_[v] : refined(v, kRederiveDepth); };
    for (ValueId id = 0; id < k_.size(); ++id) {
      const ir::Op& op = k_[id];
      ranges_[id] = sdk::op_range(wire_, id, current);
      for (std::size_t i = 0; i < op.operand_count(); ++i) {
        const ValueId v = op.src[i];
        if (v >= id || (i == 0 && (op.kind == OpKind::Load || op.kind == OpKind::Store || op.kind == OpKind::CopyAsync ||
                                  op.kind == OpKind::LoadMatrix)))
          continue;
        reads_memory_[id] = reads_memory_[id] || reads_memory_[v];
        symbolic_[id] = symbolic_[id] || symbolic_[v];
      }
      if (op.kind == OpKind::Load) reads_memory_[id] = true;
      if (op.kind == OpKind::Param && op.param_kind() == ir::ParamKind::Variable) symbolic_[id] = true;
      if (op.kind == OpKind::If) enter_if(id);
      if (op.kind == OpKind::EndIf) leave_if();
      if (op.kind == OpKind::Load || op.kind == OpKind::Store) out.push_back(classify(id));
    }
    return out;
  }

 private:
  struct Saved {
    ValueId value;
    Maybe range;
  };
  struct Region {
    ValueId start;      // the IF
    std::size_t saved;  // saved_.size() when it opened
    bool dead;          // its condition cannot hold
  };

  void enter_if(ValueId id) {
    memo_.clear();
    regions_.push_back({id, saved_.size(), !regions_.empty() && regions_.back().dead});
    if (k_[id].src[0] < id) narrow(k_[id].src[0], 8);
  }

  void leave_if() {
    memo_.clear();
    if (regions_.empty()) return;
    for (std::size_t i = saved_.size(); i > regions_.back().saved; --i) ranges_[saved_[i - 1].value] = saved_[i - 1].range;
    saved_.resize(regions_.back().saved);
    regions_.pop_back();
  }

  // What `condition` being true says about its i64 operands.
  void narrow(ValueId condition, int depth) {
    const ir::Op& op = k_[condition];
    if (op.kind != OpKind::Binary || op.lanes != 1 || depth == 0) return;
    const ValueId a = op.src[0], b = op.src[1];
    if (op.binary() == BinaryOp::And && op.dtype == DType::Bool) {
      narrow(a, depth - 1);
      narrow(b, depth - 1);
      return;
    }
    if (op.binary() != BinaryOp::CmpLt && op.binary() != BinaryOp::CmpGt) return;
    if (!is_i64_scalar(k_[a]) || !is_i64_scalar(k_[b])) return;
    const bool lt = op.binary() == BinaryOp::CmpLt;
    less_than(lt ? a : b, lt ? b : a);
  }

  // small < large: small <= large.hi - 1 and large >= small.lo + 1.
  void less_than(ValueId small, ValueId large) {
    const Range s = ranges_[small].value_or(Range{kMin, kMax});
    const Range l = ranges_[large].value_or(Range{kMin, kMax});
    if (l.hi == kMin || s.lo == kMax) return set(small, Range{1, 0});  // nothing is below kMin
    set(small, Range{s.lo, std::min(s.hi, l.hi - 1)});
    set(large, Range{std::max(l.lo, s.lo + 1), l.hi});
  }

  void set(ValueId v, Range r) {
    saved_.push_back({v, ranges_[v]});
    if (r.lo > r.hi) {
      regions_.back().dead = true;
      return;
    }
    ranges_[v] = r.lo == kMin && r.hi == kMax ? Maybe{} : Maybe{r};
  }

  // The range of `v` at the current op: as computed when defined inside the
  // innermost IF (every open narrowing applied), else re-derived from its
  // operands.
  Maybe refined(ValueId v, int depth) {
    if (regions_.empty() || saved_.empty() || v >= regions_.back().start || depth == 0) return ranges_[v];
    for (const Saved& s : saved_)
      if (s.value == v) return ranges_[v];
    if (const auto it = memo_.find(v); it != memo_.end()) return it->second;
    const ir::Op& op = k_[v];
    Maybe r = ranges_[v];
    if (op.kind != OpKind::Const && op.kind != OpKind::Param && op.kind != OpKind::Index && op.kind != OpKind::Loop &&
        op.kind != OpKind::Load)
      r = sdk::op_range(wire_, v, [&](ValueId u) { return refined(u, depth - 1); });
    memo_.emplace(v, r);
    return r;
  }

  AccessBounds classify(ValueId id) {
    const ir::Op& op = k_[id];
    const ir::Op& memory = k_[op.src[0]];
    const ValueId index = op.src[1];
    AccessBounds a;
    a.op = id;
    a.reads_memory = reads_memory_[index];
    const Maybe r = refined(index, kRederiveDepth);
    if (r) {
      a.low = r->lo;
      a.high = r->hi > kMax - op.lanes + 1 ? kMax : r->hi + op.lanes - 1;
    }
    if (!regions_.empty() && regions_.back().dead) {  // never runs
      a.verdict = AccessVerdict::InRange;
      return a;
    }
    const auto lanes = static_cast<std::int64_t>(op.lanes);
    const auto elements = static_cast<std::int64_t>(std::min<std::uint64_t>(memory.imm, kMax));
    const bool unknown_length = memory.kind == OpKind::Param && memory.imm == 0;
    if (r && r->hi < 0) {
      a.verdict = AccessVerdict::OutOfRange;
    } else if (unknown_length) {
      a.verdict = a.reads_memory ? AccessVerdict::Unknown : AccessVerdict::AtLaunch;
    } else if (elements < lanes || (r && r->lo > elements - lanes)) {
      a.verdict = AccessVerdict::OutOfRange;
    } else if (r && r->lo >= 0 && r->hi <= elements - lanes) {
      a.verdict = AccessVerdict::InRange;
    } else {
      a.verdict = symbolic_[index] && !a.reads_memory ? AccessVerdict::AtLaunch : AccessVerdict::Unknown;
    }
    return a;
  }

  const ir::Kernel& k_;
  const std::vector<kiln_op> wire_;  // k_ as the SDK reads it (sdk::op_range)
  std::vector<Maybe> ranges_;
  std::vector<bool> reads_memory_;  // computed from a LOAD
  std::vector<bool> symbolic_;      // computed from a VARIABLE param
  std::vector<Saved> saved_;
  std::vector<Region> regions_;
  std::unordered_map<ValueId, Maybe> memo_;  // re-derived ranges under the current narrowings
};

std::string memory_name(const ir::Kernel& kernel, ValueId memory) {
  const ir::Op& m = kernel[memory];
  const std::string dtype(ir::dtype_name(m.dtype));
  if (m.kind == OpKind::Param) {
    const std::string head = "param slot " + std::to_string(m.attr) + " (%" + std::to_string(memory) + ")";
    if (m.imm == 0) return head + ", " + dtype + "[?],";
    return head + " has " + std::to_string(m.imm) + " " + dtype + " elements";
  }
  return std::string(m.scope() == ir::Scope::Local ? "local" : "register") + " storage %" + std::to_string(memory) +
         " has " + std::to_string(m.imm) + " " + dtype + " elements";
}

}  // namespace

std::vector<AccessBounds> classify_accesses(const ir::Kernel& kernel) { return Classifier(kernel).run(); }

std::string describe_access(const ir::Kernel& kernel, const AccessBounds& access) {
  const ir::Op& op = kernel[access.op];
  std::string text = "op " + std::to_string(access.op) + " (`" + ir::print_op(kernel, access.op) + "`): ";
  const bool one = access.low && access.high && *access.low == *access.high;
  std::string reach = access.low && access.high ? "[" + std::to_string(*access.low) + ", " + std::to_string(*access.high) + "]"
                                                : std::string("an unknown range");
  if (one) reach = std::to_string(*access.low);
  const std::string memory = memory_name(kernel, op.src[0]);
  const std::string elements = one ? "element " : "elements ";
  switch (access.verdict) {
    case AccessVerdict::OutOfRange:
      return text + "it touches " + elements + reach + ", always outside its memory: " + memory;
    case AccessVerdict::InRange:
      return text + "it touches " + elements + reach + ", inside its memory: " + memory;
    default: {
      const std::string why = access.reads_memory ? " (the index is computed from a load)" : "";
      const bool unknown_length = kernel[op.src[0]].kind == OpKind::Param && kernel[op.src[0]].imm == 0;
      return text + "it may touch " + elements + reach + why + " and " + memory +
             (unknown_length ? " of unknown length" : "") + ": it cannot be proved in range";
    }
  }
}

}  // namespace kiln::passes
