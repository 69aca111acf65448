#include "gemm_match.hpp"

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <bit>
#include <climits>
#include <optional>

namespace kiln::cblas {

namespace {

[[noreturn]] void misfit(std::uint32_t id, const kiln_op& op, const std::string& why) {
  std::string what(sdk::op_kind_name(op.kind));
  if (op.kind == KILN_OP_BINARY) what += " " + std::string(sdk::binary_name(op.code));
  if (op.kind == KILN_OP_UNARY) what += " " + std::string(sdk::unary_name(op.code));
  sdk::fail(KILN_STATUS_UNSUPPORTED,
            "cblas: op " + std::to_string(id) + " (" + what + " " + std::string(sdk::dtype_name(op.dtype)) +
                "): " + why + "; only matrix products run on cblas",
            id);
}

std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// What the walk learns about each op.
struct Fact {
  enum Kind { None, Index, Global, Accumulator, AccIn, AccOut, Product, Scale } kind = None;
  Affine index;                // Index: its value; Global: the load's index
};

class Matcher {
 public:
  explicit Matcher(std::span<const kiln_op> ops) : ops_(ops), facts_(ops.size()) {}

  GemmPlan run() {
    for (std::uint32_t id = 0; id < ops_.size(); ++id) visit(id);
    if (loop_ == kNone) misfit(last_store(), ops_[last_store()], "no reduction LOOP");
    if (c_store_ == kNone) misfit(loop_, ops_[loop_], "no store of the accumulated value after the loop");
    return plan();
  }

 private:
  static constexpr std::uint32_t kNone = UINT32_MAX;
  std::span<const kiln_op> ops_;
  std::vector<Fact> facts_;
  std::uint32_t accumulator_ = kNone, loop_ = kNone, update_ = kNone, c_store_ = kNone;
  bool in_loop_ = false, after_loop_ = false, initialised_ = false;

  std::uint32_t last_store() const {
    for (std::uint32_t id = static_cast<std::uint32_t>(ops_.size()); id-- > 0;)
      if (ops_[id].kind == KILN_OP_STORE) return id;
    return ops_.empty() ? 0 : static_cast<std::uint32_t>(ops_.size() - 1);
  }

  const kiln_op& src(std::uint32_t id, unsigned i) const {
    const std::uint32_t s = ops_[id].src[i];
    if (s >= id) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "cblas: op " + std::to_string(id) + ": operand does not precede it", id);
    return ops_[s];
  }
  const Fact& fact(std::uint32_t id, unsigned i) const {
    src(id, i);
    return facts_[ops_[id].src[i]];
  }

  // The affine value of an integer op, or nullopt.
  std::optional<Affine> affine(std::uint32_t id) {
    const kiln_op& op = ops_[id];
    if (op.lanes != 1 || !sdk::dtype_is_int(op.dtype)) return std::nullopt;
    auto operand = [&](unsigned i) -> std::optional<Affine> {
      const Fact& f = fact(id, i);
      if (f.kind != Fact::Index) return std::nullopt;
      return f.index;
    };
    Affine out;
    switch (op.kind) {
      case KILN_OP_CONST: out.constant = sdk::int_from_bits(op.imm, op.dtype); return out;
      case KILN_OP_INDEX:
        if (op.code == KILN_SCOPE_GROUP && op.attr < 3) {
          out.coefficient[op.attr] = 1;
          return out;
        }
        return std::nullopt;
      case KILN_OP_LOOP: out.coefficient[Affine::kLoop] = 1; return out;
      case KILN_OP_CAST: return sdk::dtype_bytes(op.dtype) >= 4 ? operand(0) : std::nullopt;
      case KILN_OP_BINARY: {
        const auto x = operand(0), y = operand(1);
        if (!x || !y) return std::nullopt;
        if (op.code == KILN_BINARY_ADD || op.code == KILN_BINARY_SUB) {
          const std::int64_t sign = op.code == KILN_BINARY_ADD ? 1 : -1;
          out.constant = x->constant + sign * y->constant;
          for (int s = 0; s < 4; ++s) out.coefficient[s] = x->coefficient[s] + sign * y->coefficient[s];
          return out;
        }
        std::optional<std::int64_t> factor;
        const Affine* scaled = nullptr;
        if (op.code == KILN_BINARY_MUL) {
          if (y->is_constant()) factor = y->constant, scaled = &*x;
          else if (x->is_constant()) factor = x->constant, scaled = &*y;
        } else if (op.code == KILN_BINARY_SHL && y->is_constant() && y->constant >= 0 && y->constant < 62) {
          factor = std::int64_t{1} << y->constant, scaled = &*x;
        }
        if (!factor) return std::nullopt;
        const auto c = checked_mul(scaled->constant, *factor);
        if (!c) return std::nullopt;
        out.constant = *c;
        for (int s = 0; s < 4; ++s) {
          const auto k = checked_mul(scaled->coefficient[s], *factor);
          if (!k) return std::nullopt;
          out.coefficient[s] = *k;
        }
        return out;
      }
      default: return std::nullopt;
    }
  }

  bool is_float(const kiln_op& op) const {
    return (op.dtype == KILN_DTYPE_F32 || op.dtype == KILN_DTYPE_F64) && op.lanes == 1;
  }

  void visit(std::uint32_t id) {
    const kiln_op& op = ops_[id];
    if (op.lanes > 1) misfit(id, op, "vector values");
    if (auto a = affine(id)) {
      facts_[id] = {Fact::Index, *a};
      if (op.kind == KILN_OP_LOOP) enter_loop(id);
      return;
    }
    switch (op.kind) {
      case KILN_OP_PARAM: case KILN_OP_CONST: return;
      case KILN_OP_INDEX: misfit(id, op, "LOCAL indices");
      case KILN_OP_STORAGE:
        if (op.code != KILN_SCOPE_REGISTER || accumulator_ != kNone) misfit(id, op, "storage other than one REGISTER accumulator");
        accumulator_ = id;
        facts_[id].kind = Fact::Accumulator;
        return;
      case KILN_OP_LOOP: misfit(id, op, "a loop count that is not an integer");
      case KILN_OP_END_LOOP:
        in_loop_ = false;
        after_loop_ = true;
        if (update_ == kNone) misfit(id, op, "the loop does not update the accumulator");
        check_update();
        return;
      case KILN_OP_LOAD: return visit_load(id, op);
      case KILN_OP_STORE: return visit_store(id, op);
      case KILN_OP_BINARY:
        if (op.code == KILN_BINARY_MUL && is_float(op)) {
          const Fact &x = fact(id, 0), &y = fact(id, 1);
          if (x.kind == Fact::Global && y.kind == Fact::Global) facts_[id].kind = Fact::Product;
          else if (x.kind == Fact::AccOut || y.kind == Fact::AccOut) facts_[id].kind = Fact::Scale;
        }
        return;  // other pure ops are fine as long as nothing below uses them
      case KILN_OP_IF: case KILN_OP_END_IF: case KILN_OP_BARRIER: misfit(id, op, "control flow other than one loop");
      default: return;
    }
  }

  void enter_loop(std::uint32_t id) {
    if (loop_ != kNone) misfit(id, ops_[id], "a second loop");
    const Fact& count = fact(id, 0);
    if (count.kind == Fact::Index && !count.index.is_constant()) misfit(id, ops_[id], "a trip count that depends on the thread");
    if (!initialised_) misfit(id, ops_[id], "the accumulator is not set to 0 before the loop");
    loop_ = id;
    in_loop_ = true;
  }

  bool is_accumulator(std::uint32_t id, unsigned i) {
    const Fact& index = fact(id, 1);
    return ops_[id].src[i] == accumulator_ && index.kind == Fact::Index && index.index.is_constant() && index.index.constant == 0;
  }

  void visit_load(std::uint32_t id, const kiln_op& op) {
    if (!is_float(op)) misfit(id, op, "an element type other than f32/f64");
    if (is_accumulator(id, 0)) {
      if (!in_loop_ && !after_loop_) misfit(id, op, "reads the accumulator before the loop");
      if (in_loop_ && update_ != kNone) misfit(id, op, "reads the accumulator after its update in the loop");
      facts_[id].kind = in_loop_ ? Fact::AccIn : Fact::AccOut;
      return;
    }
    const kiln_op& mem = src(id, 0);
    const Fact& index = fact(id, 1);
    if (mem.kind != KILN_OP_PARAM || mem.code != KILN_PARAM_GLOBAL) misfit(id, op, "a load from memory other than a GLOBAL buffer");
    if (!in_loop_) misfit(id, op, "a load outside the reduction loop");
    if (index.kind != Fact::Index) misfit(id, op, "an index that is not affine in the group indices and the loop counter");
    facts_[id] = {Fact::Global, index.index};
  }

  void visit_store(std::uint32_t id, const kiln_op& op) {
    if (!is_float(op)) misfit(id, op, "an element type other than f32/f64");
    const kiln_op& value = src(id, 2);
    const std::uint32_t value_id = op.src[2];
    if (is_accumulator(id, 0)) {
      if (after_loop_) misfit(id, op, "writes the accumulator after the loop");
      if (!in_loop_) {
        const bool zero = value.kind == KILN_OP_CONST && (value.dtype == KILN_DTYPE_F32 ? std::bit_cast<float>(static_cast<std::uint32_t>(value.imm)) == 0.0f
                                                                                         : std::bit_cast<double>(value.imm) == 0.0);
        if (!zero || initialised_) misfit(id, op, "the accumulator must start at 0, set once");
        initialised_ = true;
        return;
      }
      if (update_ != kNone) misfit(id, op, "a second accumulator update in the loop");
      update_ = value_id;
      return;
    }
    const kiln_op& mem = src(id, 0);
    if (mem.kind != KILN_OP_PARAM || mem.code != KILN_PARAM_GLOBAL_MUT) misfit(id, op, "a store to memory other than the output buffer");
    if (!after_loop_ || c_store_ != kNone) misfit(id, op, "an output store that is not the single one after the loop");
    const Fact& index = fact(id, 1);
    if (index.kind != Fact::Index) misfit(id, op, "an output index that is not affine in the group indices");
    const Fact& v = facts_[value_id];
    if (v.kind != Fact::AccOut && v.kind != Fact::Scale) misfit(id, op, "stores something other than (a scale of) the accumulated sum");
    c_store_ = id;
  }

  // The loop's update must be acc + x*y: ADD(AccIn, Product) either way, or
  // MAD(x, y, AccIn) with x, y the loads.
  void check_update() {
    const kiln_op& u = ops_[update_];
    bool ok = false;
    if (u.kind == KILN_OP_BINARY && u.code == KILN_BINARY_ADD && is_float(u)) {
      const Fact &x = fact(update_, 0), &y = fact(update_, 1);
      ok = (x.kind == Fact::AccIn && y.kind == Fact::Product) || (y.kind == Fact::AccIn && x.kind == Fact::Product);
      product_ = ops_[update_].src[x.kind == Fact::Product ? 0 : 1];
    } else if (u.kind == KILN_OP_MAD && is_float(u)) {
      ok = fact(update_, 0).kind == Fact::Global && fact(update_, 1).kind == Fact::Global && fact(update_, 2).kind == Fact::AccIn;
      product_ = update_;
    }
    if (!ok) misfit(update_, u, "the accumulator update is not acc + x * y of two loaded elements");
  }
  std::uint32_t product_ = kNone;

  GemmPlan plan() {
    GemmPlan p;
    p.ops.assign(ops_.begin(), ops_.end());
    p.params = sdk::collect_params(ops_);
    const kiln_op& store = ops_[c_store_];
    p.dtype = store.dtype;
    p.store_op = c_store_;
    for (std::uint32_t id = 0; id < ops_.size(); ++id) {
      const unsigned kind = ops_[id].kind;
      if ((kind == KILN_OP_LOAD || kind == KILN_OP_STORE || kind == KILN_OP_STORAGE || id == update_ || id == product_) &&
          ops_[id].dtype != p.dtype)
        misfit(id, ops_[id], "mixes f32 and f64");
    }
    p.k_op = ops_[loop_].src[0];
    scale(p);

    const std::uint32_t x = ops_[product_].src[0], y = ops_[product_].src[1];
    const Affine& ci = facts_[store.src[1]].index;
    if (ci.coefficient[Affine::kLoop] != 0) misfit(c_store_, store, "the output index depends on the loop counter");
    // C: the unit-stride axis is j, the other i.
    for (int axis = 0; axis < 3; ++axis) {
      const std::int64_t k = ci.coefficient[axis];
      if (k == 0) continue;
      if (k == 1 && p.col_axis < 0) p.col_axis = axis;
      else if (p.row_axis < 0) p.row_axis = axis;
      else misfit(c_store_, store, "an output index over three group axes");
    }
    if (p.row_axis >= 0 && p.col_axis < 0 && ci.coefficient[p.row_axis] == 1) std::swap(p.row_axis, p.col_axis);
    p.c = {ops_[store.src[0]].attr, ci, false, p.row_axis >= 0 ? ci.coefficient[p.row_axis] : 0};
    if (p.row_axis >= 0 && p.c.ld < 1) misfit(c_store_, store, "a negative output stride");

    // A is indexed by i (not j), B by j (not i).
    auto uses = [&](std::uint32_t load, int axis) { return axis >= 0 && facts_[load].index.coefficient[axis] != 0; };
    std::uint32_t a_load = x, b_load = y;
    if (uses(x, p.col_axis) || uses(y, p.row_axis)) std::swap(a_load, b_load);
    if (uses(a_load, p.col_axis) || uses(b_load, p.row_axis)) misfit(a_load, ops_[a_load], "operands that do not split into rows of A and columns of B");
    for (int axis = 0; axis < 3; ++axis) {
      if (axis == p.row_axis || axis == p.col_axis) continue;
      for (std::uint32_t load : {a_load, b_load})
        if (facts_[load].index.coefficient[axis] != 0) misfit(load, ops_[load], "an index over a group axis the output does not use");
      if (grid_axis_used(axis)) misfit(grid_op(axis), ops_[grid_op(axis)], "a group axis the output does not use");
    }
    p.a = operand(a_load, p.row_axis);
    p.b = operand(b_load, p.col_axis);
    // B's roles are mirrored: its unit stride on j means "not transposed".
    p.b.transposed = !p.b.transposed;
    return p;
  }

  // An operand indexed by `axis` (its outer dimension) and the loop counter:
  // unit stride on p -> rows of length K (A: not transposed); unit stride on
  // the axis -> columns (A: transposed).
  Operand operand(std::uint32_t load, int axis) {
    const Affine& idx = facts_[load].index;
    Operand o;
    o.slot = ops_[ops_[load].src[0]].attr;
    o.index = idx;
    const std::int64_t sp = idx.coefficient[Affine::kLoop], sa = axis >= 0 ? idx.coefficient[axis] : 0;
    if (idx.constant < 0 || sp < 1 || (axis >= 0 && sa < 1))
      misfit(load, ops_[load], "an operand index with a negative offset or a stride that is not positive");
    if (sp == 1 && (axis < 0 || sa != 1)) {
      o.transposed = false;
      o.ld = sa;  // 0 when the axis is absent: then K
    } else if (axis < 0 || sa == 1) {
      o.transposed = true;
      o.ld = sp;
      o.ambiguous = sp == 1 && sa == 1;
    } else {
      misfit(load, ops_[load], "an operand with no unit stride");
    }
    return o;
  }

  bool grid_axis_used(int axis) const { return grid_op(axis) != kNone; }
  std::uint32_t grid_op(int axis) const {
    for (std::uint32_t id = 0; id < ops_.size(); ++id)
      if (ops_[id].kind == KILN_OP_INDEX && ops_[id].code == KILN_SCOPE_GROUP && ops_[id].attr == static_cast<std::uint32_t>(axis)) return id;
    return kNone;
  }

  void scale(GemmPlan& p) {
    const std::uint32_t value = ops_[c_store_].src[2];
    if (facts_[value].kind == Fact::AccOut) return;
    const kiln_op& mul = ops_[value];
    const std::uint32_t other = mul.src[facts_[mul.src[0]].kind == Fact::AccOut ? 1 : 0];
    const kiln_op& s = ops_[other];
    if (s.kind == KILN_OP_CONST && s.dtype == p.dtype) {
      p.alpha_kind = GemmPlan::Alpha::Constant;
      p.alpha = s.dtype == KILN_DTYPE_F32 ? std::bit_cast<float>(static_cast<std::uint32_t>(s.imm)) : std::bit_cast<double>(s.imm);
    } else if (s.kind == KILN_OP_PARAM && s.code == KILN_PARAM_VARIABLE && s.dtype == p.dtype) {
      p.alpha_kind = GemmPlan::Alpha::Variable;
      p.alpha_slot = s.attr;
    } else {
      misfit(value, mul, "a scale that is neither a constant nor a scalar parameter");
    }
  }

};

}  // namespace

GemmPlan match_gemm(std::span<const kiln_op> ops) {
  if (ops.empty()) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "cblas: the kernel is empty");
  GemmPlan plan = Matcher(ops).run();
  if (const auto dims = static_dims(plan)) {
    const std::string problem = settle_layout(plan.a, plan.b, plan.c, *dims);
    if (!problem.empty()) {
      sdk::fail(KILN_STATUS_UNSUPPORTED, "cblas: op " + std::to_string(plan.store_op) + ": not a BLAS layout: " + problem,
                plan.store_op);
    }
  }
  return plan;
}

std::optional<GemmDims> static_dims(const GemmPlan& p) {
  auto constant = [&](std::uint32_t id) -> std::optional<std::int64_t> {
    if (id >= p.ops.size() || p.ops[id].kind != KILN_OP_CONST || !sdk::dtype_is_int(p.ops[id].dtype)) return std::nullopt;
    return sdk::int_from_bits(p.ops[id].imm, p.ops[id].dtype);
  };
  auto extent = [&](int axis) -> std::optional<std::int64_t> {
    if (axis < 0) return 1;
    for (const kiln_op& op : p.ops)
      if (op.kind == KILN_OP_INDEX && op.code == KILN_SCOPE_GROUP && op.attr == static_cast<std::uint32_t>(axis)) return constant(op.src[0]);
    return 1;
  };
  const auto m = extent(p.row_axis), n = extent(p.col_axis), k = constant(p.k_op);
  if (!m || !n || !k) return std::nullopt;
  return GemmDims{*m, *n, std::max<std::int64_t>(*k, 0)};
}

LeadingDims leading_dims(const Operand& a, const Operand& b, const Operand& c, const GemmDims& d) {
  // A leading dimension steps the outer dimension; when that has extent 1 it
  // is never used, and the natural one keeps BLAS's argument checks happy.
  const std::int64_t k = std::max<std::int64_t>(d.k, 1);
  auto pick = [](std::int64_t ld, std::int64_t outer, std::int64_t natural) { return ld != 0 && outer > 1 ? ld : natural; };
  LeadingDims ld;
  ld.lda = pick(a.ld, a.transposed ? k : d.m, a.transposed ? d.m : k);
  ld.ldb = pick(b.ld, b.transposed ? d.n : k, b.transposed ? k : d.n);
  ld.ldc = pick(c.ld, d.m, d.n);
  return ld;
}

namespace {

std::string layout_problem(const Operand& a, const Operand& b, const Operand& c, const GemmDims& d) {
  const LeadingDims ld = leading_dims(a, b, c, d);
  const std::int64_t k = std::max<std::int64_t>(d.k, 1);
  if (ld.lda < (a.transposed ? d.m : k)) return "A's rows overlap (lda " + std::to_string(ld.lda) + ")";
  if (ld.ldb < (b.transposed ? k : d.n)) return "B's rows overlap (ldb " + std::to_string(ld.ldb) + ")";
  if (ld.ldc < d.n) return "C's rows overlap (ldc " + std::to_string(ld.ldc) + ")";
  const std::int64_t limit = INT32_MAX;
  if (d.m > limit || d.n > limit || d.k > limit || ld.lda > limit || ld.ldb > limit || ld.ldc > limit)
    return "a size beyond BLAS's 32-bit integers";
  return "";
}

}  // namespace

std::string settle_layout(Operand& a, Operand& b, const Operand& c, const GemmDims& d) {
  std::string first_problem;
  for (int flips = 0; flips < 4; ++flips) {
    if (((flips & 1) && !a.ambiguous) || ((flips & 2) && !b.ambiguous)) continue;
    Operand ta = a, tb = b;
    if (flips & 1) ta.transposed = !ta.transposed;
    if (flips & 2) tb.transposed = !tb.transposed;
    const std::string problem = layout_problem(ta, tb, c, d);
    if (problem.empty()) {
      a = ta;
      b = tb;
      return "";
    }
    if (first_problem.empty()) first_problem = problem;
  }
  return first_problem;
}

std::string describe_call(const GemmPlan& p) {
  const std::string f = p.dtype == KILN_DTYPE_F32 ? "cblas_sgemm" : "cblas_dgemm";
  auto dim = [](int axis) { return axis >= 0 ? "groups[" + std::to_string(axis) + "]" : std::string("1"); };
  auto ld = [](const Operand& o, const std::string& fallback) { return o.ld != 0 ? std::to_string(o.ld) : fallback; };
  auto at = [](const Operand& o) { return "arg" + std::to_string(o.slot) + (o.index.constant != 0 ? " + " + std::to_string(o.index.constant) : ""); };
  std::string alpha = "1";
  if (p.alpha_kind == GemmPlan::Alpha::Constant) alpha = std::to_string(p.alpha);
  if (p.alpha_kind == GemmPlan::Alpha::Variable) alpha = "arg" + std::to_string(p.alpha_slot);
  return f + "(CblasRowMajor, " + (p.a.transposed ? "CblasTrans" : "CblasNoTrans") + ", " +
         (p.b.transposed ? "CblasTrans" : "CblasNoTrans") + ", M=" + dim(p.row_axis) + ", N=" + dim(p.col_axis) +
         ", K=value of op " + std::to_string(p.k_op) + ", alpha=" + alpha + ", A=" + at(p.a) + ", lda=" + ld(p.a, p.a.transposed ? "M" : "K") +
         ", B=" + at(p.b) + ", ldb=" + ld(p.b, p.b.transposed ? "K" : "N") + ", beta=0, C=" + at(p.c) + ", ldc=" + ld(p.c, "N") + ")\n";
}

}  // namespace kiln::cblas
