// mma_tile(warps, tm, tn, tf32): a matrix product on the warp-level MMA op
// (kernel_ir.h, KILN_OP_MMA). Applies to the kernels local_tile's matcher
// recognizes (opt_local_tile_match.hpp) that are exactly
//   C[i, j] = (cast) sum_k A[i, k] * B[k, j]
// accumulated in f32 from one 1-element REGISTER accumulator, with f16 or
// bf16 A and B (shape m16n8k16), or f32 read as tf32 (m16n8k8) when the step
// asks for it with tf32=1; A, B and C indices affine in (i, k), (k, j) and
// (i, j), so matmul and matmul-bt both fit.
//
// The kernel is rebuilt: a work-group of `warps` warps (LOCAL axis 0 =
// 32 * warps), arranged wm x wn (1x1, 2x1, 2x2, 4x2), each warp computing a
// (16 tm) x (8 tn) block of C in tm * tn f32x4 MMA accumulators (REGISTER);
// a k-loop in steps of 16 (tf32: 8) whose operand fragments each lane
// gathers from global memory per the lane layout. Sizes need not be
// multiples of anything: rows, columns and k past the matrix load 0 (the
// index is SELECTed to 0 and the value to 0, never an IF: the MMA is
// collective) and are not stored (stores under an IF). Guards are emitted
// only on the sides whose length the block does not divide.
//
// Numerics: with f16/bf16 inputs every product is exact in f32 and the MMA
// sums k ascending in f32 (the interpreter's contract), which is the order of
// the original loop, and the padded zeros add nothing: on the interpreter
// the result equals the untuned kernel's bit for bit. Hardware tensor cores
// sum in another order (a few ulps). tf32 rounds the inputs: not the f32
// kernel's result, which is why it is only applied when asked for and never
// enumerated.
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "opt_mma_match.hpp"
#include "kernel_writer.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"

#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <array>
#include <map>

namespace kiln::passes::opts {

namespace {

using mma::Affine2;
using mma::match;
using mma::Product;
using mma::shape_code;
using ir::DType;
using ir::Kernel;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

constexpr std::string_view kName = "mma_tile";

struct Shape {
  std::int64_t warps = 0, tm = 0, tn = 0;
  bool tf32 = false;
  std::int64_t wm() const { return warps >= 4 ? warps / 2 : warps; }
  std::int64_t wn() const { return warps / wm(); }
  std::int64_t bm() const { return wm() * 16 * tm; }
  std::int64_t bn() const { return wn() * 8 * tn; }
};

// Why the step does not fit the kernel or the device, or "".
std::string misfit(const Product& p, const Shape& s, const DeviceInfo& device) {
  if (s.warps != 1 && s.warps != 2 && s.warps != 4 && s.warps != 8) return "warps must be 1, 2, 4 or 8";
  if (s.tm < 1 || s.tm > 8 || s.tn < 1 || s.tn > 8) return "tm and tn must be in 1..8";
  if (p.input == DType::F32 && !s.tf32) return "f32 inputs need tf32=1 (the MMA rounds them to tf32)";
  if (p.input != DType::F32 && s.tf32) return "tf32=1 is for f32 inputs; A and B are " + std::string(ir::dtype_name(p.input));
  if (p.input != DType::F32 && p.input != DType::F16 && p.input != DType::BF16)
    return "A and B are " + std::string(ir::dtype_name(p.input)) + " (mma takes f16, bf16, or f32 as tf32)";
  if (const std::string why = mma::device_misfit(p, device); !why.empty()) return why;
  const std::int64_t threads = 32 * s.warps;
  if (threads > device.max_local_threads || threads > device.max_local_dims[0])
    return std::to_string(threads) + " threads per group exceed the device's " + std::to_string(device.max_local_threads);
  const std::uint64_t registers = static_cast<std::uint64_t>(16 * s.tm * s.tn);
  if (device.register_bytes > 0 && registers > device.register_bytes)
    return "the accumulators need " + std::to_string(registers) + " REGISTER bytes per thread; the device has " +
           std::to_string(device.register_bytes);
  return "";
}

std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }

// Emits the MMA kernel.
class Emitter : private KernelWriter {
 public:
  Emitter(const Kernel& old, const Product& p, const Shape& s) : old_(old), p_(p), s_(s) {}

  Kernel run() {
    const tile::MatrixProduct& mp = p_.mp;
    const std::int64_t m = mp.lengths[0], n = mp.lengths[1], k = mp.trip_count;
    const unsigned shape = shape_code(p_);
    const sdk::MmaShapeInfo info = sdk::mma_shape_info(shape);
    const std::int64_t ks = info.k;
    const bool guard_m = m % s_.bm() != 0, guard_n = n % s_.bn() != 0, guard_k = k % ks != 0;

    for (ValueId id = 0; id < old_.size(); ++id)
      if (old_[id].kind == OpKind::Param) params_[id] = b_.append(old_[id]);
    const Value a_mem = params_.at(p_.a_param), b_mem = params_.at(p_.b_param), c_mem = params_.at(p_.c_param);

    // Coordinates: group (gm, gn), warp (wi, wj), lane (g, t).
    const Value gn = b_.group_index(mp.axes[1], c(ceil_div(n, s_.bn())));
    const Value gm = b_.group_index(mp.axes[0], c(ceil_div(m, s_.bm())));
    const Value tid = b_.local_index(0, static_cast<std::uint32_t>(32 * s_.warps));
    const Value lane = s_.warps == 1 ? tid : b_.mod(tid, c(32));
    const Value g = b_.div(lane, c(4)), t = b_.mod(lane, c(4));
    const bool tf32 = shape == KILN_MMA_M16N8K8;
    const Value t2 = tf32 ? Value{} : b_.mul(t, c(2));
    Value m0 = b_.mul(gm, c(s_.bm())), n0 = b_.mul(gn, c(s_.bn()));
    if (s_.warps > 1) {
      const Value warp = b_.div(tid, c(32));
      if (s_.wm() > 1) m0 = b_.add(m0, b_.mul(s_.wn() > 1 ? b_.div(warp, c(s_.wn())) : warp, c(16 * s_.tm)));
      if (s_.wn() > 1) n0 = b_.add(n0, b_.mul(b_.mod(warp, c(s_.wn())), c(8 * s_.tn)));
    }
    // Rows g and g + 8 of each of the warp's tm tiles; columns g (B) and
    // 2t, 2t + 1 (C) of each of its tn tiles.
    const Value m_len = c(m), n_len = c(n), k_len = c(k);
    std::vector<std::array<Value, 2>> rows(static_cast<std::size_t>(s_.tm)), row_in(rows.size()), a_row(rows.size()),
        c_row(rows.size());
    const Value mg = b_.add(m0, g);
    for (std::int64_t r = 0; r < s_.tm; ++r)
      for (int h = 0; h < 2; ++h) {
        Value& row = rows[r][h];
        row = affine(mg, 1, 16 * r + 8 * h);
        if (guard_m) row_in[r][h] = b_.cmplt(row, m_len);
        a_row[r][h] = affine(row, p_.a.c0, p_.a.constant);
        c_row[r][h] = affine(row, p_.c.c0, p_.c.constant);
      }
    std::vector<Value> b_col(static_cast<std::size_t>(s_.tn)), b_col_in(b_col.size());
    std::vector<std::array<Value, 2>> c_col(b_col.size()), c_col_in(b_col.size());
    const Value ng = b_.add(n0, g), nt = b_.add(n0, tf32 ? b_.mul(t, c(2)) : t2);
    for (std::int64_t col = 0; col < s_.tn; ++col) {
      const Value j = affine(ng, 1, 8 * col);
      if (guard_n) b_col_in[col] = b_.cmplt(j, n_len);
      b_col[col] = affine(j, p_.b.c1, p_.b.constant);
      for (int e = 0; e < 2; ++e) {
        const Value jc = affine(nt, 1, 8 * col + e);
        if (guard_n) c_col_in[col][e] = b_.cmplt(jc, n_len);
        c_col[col][e] = affine(jc, p_.c.c1, 0);
      }
    }
    // The k offsets within a step this lane reads (A's and B's are the same
    // set): m16n8k16 2t, 2t + 1, 2t + 8, 2t + 9; m16n8k8 t, t + 4.
    const Value kt_base = tf32 ? t : t2;
    const std::vector<std::int64_t> offsets = tf32 ? std::vector<std::int64_t>{0, 4} : std::vector<std::int64_t>{0, 1, 8, 9};
    std::vector<Value> k_lane;
    for (std::int64_t offset : offsets) k_lane.push_back(affine(kt_base, 1, offset));
    auto offset_slot = [&](std::int64_t offset) {
      return static_cast<std::size_t>(std::find(offsets.begin(), offsets.end(), offset) - offsets.begin());
    };

    const std::uint32_t tiles = static_cast<std::uint32_t>(s_.tm * s_.tn);
    const Value acc = b_.storage(ir::Scope::Register, DType::F32, 4ull * tiles);
    const Value zero4 = b_.broadcast(b_.constant(DType::F32, 0.0), 4);
    for (std::uint32_t q = 0; q < tiles; ++q) b_.store(acc, c(4 * q), zero4);
    const Value zero_in = b_.constant(p_.input, 0.0), index_zero = c(0);

    const Value kt = b_.loop(c(ceil_div(k, ks)));
    const Value k0 = b_.mul(kt, c(ks));
    std::vector<Value> kk, k_in, a_k, b_k;
    for (std::size_t o = 0; o < offsets.size(); ++o) {
      kk.push_back(b_.add(k0, k_lane[o]));
      if (guard_k) k_in.push_back(b_.cmplt(kk[o], k_len));
      a_k.push_back(affine(kk[o], p_.a.c1, 0));
      b_k.push_back(affine(kk[o], p_.b.c0, 0));
    }
    // One element: memory[index] where `inside`, else 0 (no IF: every lane runs the MMA).
    auto guarded_load = [&](Value memory, Value index, Value in0, Value in1) {
      Value inside = in0.valid() && in1.valid() ? b_.and_(in0, in1) : (in0.valid() ? in0 : in1);
      if (!inside.valid()) return b_.load(memory, index);
      const Value v = b_.load(memory, b_.select(inside, index, index_zero));
      return b_.select(inside, v, zero_in);
    };
    auto fragment = [&](const std::vector<Value>& elements) {
      Value v = b_.broadcast(elements[0], static_cast<std::uint8_t>(elements.size()));
      for (std::uint32_t i = 1; i < elements.size(); ++i) v = b_.insert(v, elements[i], i);
      return v;
    };
    std::vector<Value> a_frag, b_frag;
    for (std::int64_t r = 0; r < s_.tm; ++r) {
      std::vector<Value> elements;
      for (unsigned i = 0; i < info.a_lanes; ++i) {
        const auto at = sdk::mma_a_coord(shape, 0, i);  // lane 0: g = t = 0, the offsets
        const int h = at.row / 8;
        const std::size_t o = offset_slot(at.col);
        elements.push_back(guarded_load(a_mem, b_.add(a_row[r][h], a_k[o]), guard_m ? row_in[r][h] : Value{},
                                        guard_k ? k_in[o] : Value{}));
      }
      a_frag.push_back(fragment(elements));
    }
    for (std::int64_t col = 0; col < s_.tn; ++col) {
      std::vector<Value> elements;
      for (unsigned i = 0; i < info.b_lanes; ++i) {
        const std::size_t o = offset_slot(sdk::mma_b_coord(shape, 0, i).row);
        elements.push_back(guarded_load(b_mem, b_.add(b_k[o], b_col[col]), guard_k ? k_in[o] : Value{},
                                        guard_n ? b_col_in[col] : Value{}));
      }
      b_frag.push_back(fragment(elements));
    }
    for (std::int64_t r = 0; r < s_.tm; ++r)
      for (std::int64_t col = 0; col < s_.tn; ++col) {
        const Value at = c(4 * (r * s_.tn + col));
        const Value d = b_.mma(static_cast<ir::MmaShape>(shape), a_frag[r], b_frag[col], b_.load(acc, at, 4));
        b_.store(acc, at, d);
      }
    b_.end_loop(kt);

    // C: element i of tile (r, col) at row g + 8 (i / 2), column 2t + i % 2.
    const DType c_dtype = old_[p_.c_param].dtype;
    for (std::int64_t r = 0; r < s_.tm; ++r)
      for (std::int64_t col = 0; col < s_.tn; ++col) {
        const Value d = b_.load(acc, c(4 * (r * s_.tn + col)), 4);
        for (std::uint32_t i = 0; i < 4; ++i) {
          const int h = static_cast<int>(i / 2), e = static_cast<int>(i % 2);
          const Value v = mma::c_element(b_, c_dtype, b_.extract(d, i));
          const Value index = b_.add(c_row[r][h], c_col[col][e]);
          mma::store_c_element(b_, c_mem, index, v, guard_m ? row_in[r][h] : Value{},
                               guard_n ? c_col_in[col][e] : Value{});
        }
      }
    return b_.finish();
  }

 private:
  const Kernel& old_;
  const Product& p_;
  Shape s_;
  std::map<ValueId, Value> params_;
};

Result<Shape> shape_of(const OptStep& step) {
  KILN_TRY(known_params(step, {"warps", "tm", "tn", "tf32"}));
  Shape s;
  KILN_TRY_ASSIGN(s.warps, require_param(step, "warps"));
  KILN_TRY_ASSIGN(s.tm, require_param(step, "tm"));
  KILN_TRY_ASSIGN(s.tn, require_param(step, "tn"));
  KILN_TRY_ASSIGN(s.tf32, flag_param(step, "tf32"));
  return s;
}

class MmaTile final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "matrix products of f16/bf16 (or f32 as tf32, when asked) on the warp MMA op: warps per group, each warp a "
           "(16 tm) x (8 tn) block of C in MMA accumulators, fragments gathered per lane";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!ir::verify(kernel).ok()) return steps;
    auto matched = match(kernel);
    if (!std::holds_alternative<Product>(matched)) return steps;
    const Product& p = std::get<Product>(matched);
    if (p.input == DType::F32) return steps;  // tf32 changes the numerics: only on request
    const std::int64_t m16 = ceil_div(p.mp.lengths[0], 16) * 16, n8 = ceil_div(p.mp.lengths[1], 8) * 8;
    for (std::int64_t warps : {1, 2, 4, 8})
      for (std::int64_t tm : {1, 2, 4})
        for (std::int64_t tn : {1, 2, 4, 8}) {
          const Shape s{warps, tm, tn, false};
          // Blocks wider than the padded matrix only add idle warps.
          if ((s.bm() > m16 || s.bn() > n8) && !(warps == 1 && tm == 1 && tn == 1)) continue;
          if (!misfit(p, s, device).empty()) continue;
          steps.push_back(make_step(kName, {{"warps", warps}, {"tm", tm}, {"tn", tn}}));
        }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY_ASSIGN(const Shape s, shape_of(step));
    return mma::rewrite_product(
        kernel, step, "the MMA kernel", [&](const Product& p) { return misfit(p, s, device); },
        [&](const Product& p) { return Emitter(kernel, p, s).run(); });
  }
};

}  // namespace

const Optimization& mma_tile() {
  static const MmaTile instance;
  return instance;
}

}  // namespace kiln::passes::opts
