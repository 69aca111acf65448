// pack_tile(bm, bn, bk, tm, tn, lanes, unroll, dot): the BLIS/GotoBLAS structure
// of a matrix product for devices that run one thread per work-group (CPUs).
// Applies to the kernels the MMA optimizations accept (opt_mma_match.hpp):
//   C[i, j] = (cast) sum_k A[i, k] * B[k, j]
// in an f32 accumulator, A and B f32, f16 or bf16, indices affine in (i, k),
// (k, j), (i, j), so matmul and matmul-bt.
//
// The kernel is rebuilt. A work-group (one thread) computes a bm x bn block
// of C, held in LOCAL storage (f32) across the k loop. For each step of bk
// along k it packs
//   - A's bm x bk block into LOCAL storage, row-major: micro-panel ir is
//     rows ir tm .. ir tm + tm - 1, each bk consecutive k (a contiguous copy
//     per row; the micro-kernel reads tm streams of broadcasts from it),
//   - B's bk x bn block as bn/tn micro-panels, each [k][tn] (one k step
//     reads tn consecutive values: tn / lanes vectors),
// converting f16/bf16 to f32 once, while packing; then, per micro-tile
// (jr over the bn/tn panels of B, ir over the bm/tm panels of A, as BLIS:
// B's panel stays in L1 while A's block streams from L2), the tile's tm x tn
// accumulators move from the block into REGISTER storage, a k loop (unrolled
// `unroll` times) does tm broadcasts of A, tn / lanes vector loads of B and
// tm x tn / lanes vector multiply-adds, and the accumulators go back. After
// the last step the block is stored to C (cast to C's dtype). Packing makes
// every access of the micro-kernel contiguous (no TLB or cache-set
// conflicts at power-of-two strides); the step sizes the buffers to the
// caches (configs: B's micro-panel bk x tn within L1, A's and B's blocks
// within half of L2 each). Groups run in parallel over the cores (the C
// plugin's OpenMP loop over both group axes).
//
// Sizes need not be multiples of the block: rows and columns past the
// matrix are read clamped to the last one (their results are never
// stored; B's panels that end past N take a second, clamped copy of the
// packing loop, so the whole ones keep a plain one), the last k step packs
// the K - k0 rows that exist and zeros after them (so the padded k adds
// exactly nothing), and C's edge panels are stored under an IF. Every
// access is proved in range (no bounds guard is added).
//
// Exact: each element of C is the same multiply-adds in the same order (k
// ascending) as the original loop, starting from 0; the padded k adds 0 * 0.
// On the interpreter the result is the untuned kernel's bit for bit.
//
// The bf16 form (dot=1; bf16 A and B, on a device that claims DOT_BF16 and
// BF16_PAIR, kernel_ir.h: x86's VDPBF16PS) packs pairs of k instead: A's
// block as bm x bk/2 u32 words (A[i, k0+2p] low, A[i, k0+2p+1] high), B's
// micro-panels as [k/2][tn] words of (B[k0+2p, j], B[k0+2p+1, j]), and the
// micro-kernel does, per pair of k, tm broadcasts of A's word, tn / lanes
// vector loads of B's and tm x tn / lanes dot_bf16 (two multiply-adds per
// lane each). Odd K and the last step's padding pair with zeros. Each
// element of C is then the k pairs accumulated in ascending order, the
// high k of a pair first (VDPBF16PS's order, DAZ/FTZ): not the original
// loop's order, so it matches the untuned kernel within the product's
// tolerance, and the interpreter running the packed kernel bit for bit.
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/verify.hpp"
#include "opt_mma_match.hpp"
#include "kernel_writer.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

namespace kiln::passes::opts {

namespace {

using mma::Affine2;
using mma::Product;
using ir::DType;
using ir::Kernel;
using ir::Value;
using ir::ValueId;

constexpr std::string_view kName = "pack_tile";

struct Shape {
  std::int64_t bm = 0, bn = 0, bk = 0, tm = 0, tn = 0, lanes = 1, unroll = 1;
  bool dot = false;  // the bf16 form: k pairs packed in u32 words, dot_bf16
  // Bytes of one packed A or B element: f32, or half a word of two bf16.
  std::uint64_t packed_bytes() const { return dot ? 2 : 4; }
  // LOCAL bytes per group: A's block, B's block, the C block.
  std::uint64_t local_bytes() const {
    return packed_bytes() * static_cast<std::uint64_t>(bm * bk + bk * bn) + 4 * static_cast<std::uint64_t>(bm * bn);
  }
  std::uint64_t accumulator_bytes() const { return 4 * static_cast<std::uint64_t>(tm * tn); }
};

std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }

// Why `s` does not fit the product or the device, or "".
std::string misfit(const Product& p, const Shape& s, const DeviceInfo& device) {
  for (std::int64_t v : {s.bm, s.bn, s.bk})
    if (v < 1 || v > 4096) return "bm, bn and bk must be in 1..4096";
  if (s.tm < 1 || s.tm > 64 || s.tn < 1 || s.tn > 256) return "tm must be in 1..64 and tn in 1..256";
  if (s.lanes != 1 && s.lanes != 2 && s.lanes != 4 && s.lanes != 8 && s.lanes != 16) return "lanes must be 1, 2, 4, 8 or 16";
  if (s.unroll < 1 || s.unroll > 64) return "unroll must be in 1..64";
  if (s.bm % s.tm != 0) return "tm=" + std::to_string(s.tm) + " does not divide bm=" + std::to_string(s.bm);
  if (s.bn % s.tn != 0) return "tn=" + std::to_string(s.tn) + " does not divide bn=" + std::to_string(s.bn);
  if (s.tn % s.lanes != 0) return "lanes=" + std::to_string(s.lanes) + " does not divide tn=" + std::to_string(s.tn);
  if (s.dot) {
    if (p.input != DType::BF16) return "dot=1 takes bf16 inputs, not " + std::string(ir::dtype_name(p.input));
    if (!device.supports_op_kind(KILN_OP_DOT_BF16, KILN_DTYPE_F32) || !device.supports_op_kind(KILN_OP_BF16_PAIR, KILN_DTYPE_U32))
      return "dot=1 needs a device that runs dot_bf16 and bf16_pair (AVX512_BF16 on c:0)";
    if (s.bk % 2 != 0) return "dot=1 packs pairs of k: bk=" + std::to_string(s.bk) + " must be even";
    if ((s.bk / 2) % s.unroll != 0)
      return "unroll=" + std::to_string(s.unroll) + " does not divide the bk/2=" + std::to_string(s.bk / 2) + " pairs";
  } else if (s.bk % s.unroll != 0) {
    return "unroll=" + std::to_string(s.unroll) + " does not divide bk=" + std::to_string(s.bk);
  }
  if (s.lanes > 1 && (device.vector_width_mask & (1u << s.lanes)) == 0)
    return "the device has no " + std::to_string(s.lanes) + "-lane vectors";
  // The micro-kernel is written out tm x tn / lanes x unroll times: bounded.
  if (s.tm * (s.tn / s.lanes) * s.unroll > 4096) return "the micro-kernel would be too large (tm x tn / lanes x unroll > 4096)";
  const std::uint64_t registers = max_register_bytes(device);
  if (s.accumulator_bytes() > registers)
    return "the tile's accumulators need " + std::to_string(s.accumulator_bytes()) + " REGISTER bytes; the device allows " +
           std::to_string(registers);
  if (s.local_bytes() > device.local_memory_bytes)
    return "the packed blocks need " + std::to_string(s.local_bytes()) + " LOCAL bytes per group; the device has " +
           std::to_string(device.local_memory_bytes);
  if (p.mp.lengths[0] < 1 || p.mp.lengths[1] < 1 || p.mp.trip_count < 1) return "the product is empty";
  return "";
}

// Emits the packed kernel.
class Emitter : private KernelWriter {
 public:
  Emitter(const Kernel& old, const Product& p, const Shape& s) : old_(old), p_(p), s_(s) {}

  Kernel run() {
    const tile::MatrixProduct& mp = p_.mp;
    m_ = mp.lengths[0], n_ = mp.lengths[1], k_ = mp.trip_count;
    guard_m_ = m_ % s_.bm != 0, guard_n_ = n_ % s_.bn != 0, guard_k_ = k_ % s_.bk != 0;

    std::map<ValueId, Value> params;
    for (ValueId id = 0; id < old_.size(); ++id)
      if (old_[id].kind == ir::OpKind::Param) params[id] = b_.append(old_[id]);
    a_mem_ = params.at(p_.a_param), b_mem_ = params.at(p_.b_param);
    const Value c_mem = params.at(p_.c_param);

    const Value gn = b_.group_index(mp.axes[1], c(ceil_div(n_, s_.bn)));
    const Value gm = b_.group_index(mp.axes[0], c(ceil_div(m_, s_.bm)));
    // The bf16 form holds k pairs in u32 words: half as many elements.
    const DType packed = s_.dot ? DType::U32 : DType::F32;
    const std::int64_t kw = s_.dot ? s_.bk / 2 : s_.bk;  // packed elements per row of A, rows of B's panels
    a_pack_ = b_.storage(ir::Scope::Local, packed, static_cast<std::uint64_t>(s_.bm * kw));
    b_pack_ = b_.storage(ir::Scope::Local, packed, static_cast<std::uint64_t>(kw * s_.bn));
    block_ = b_.storage(ir::Scope::Local, DType::F32, static_cast<std::uint64_t>(s_.bm * s_.bn));
    acc_ = b_.storage(ir::Scope::Register, DType::F32, static_cast<std::uint64_t>(s_.tm * s_.tn));
    m0_ = affine(gm, s_.bm, 0);
    n0_ = affine(gn, s_.bn, 0);
    zero_ = b_.constant(DType::F32, 0.0);
    const Value zero_vector = vector_of(zero_);
    if (s_.dot) {
      zero_half_ = b_.constant_bits(DType::BF16, 0);
      zero_word_ = b_.constant_bits(DType::U32, 0);
    }

    loop(c(s_.bm * s_.bn / s_.lanes), [&](Value z) { b_.store(block_, affine(z, s_.lanes, 0), zero_vector); });
    const std::int64_t steps = ceil_div(k_, s_.bk), last_k0 = (steps - 1) * s_.bk;
    loop(c(steps), [&](Value kb) {
      if (guard_k_) {
        // The last step reaches past K: it packs the K - last_k0 rows that are
        // there (its k0 is that constant) and zeros after them.
        const Value whole = b_.cmplt(kb, c(steps - 1)), last = b_.cmpgt(kb, c(steps - 2));
        scoped([&] {
          b_.if_then(whole, [&] {
            const Value k0 = affine(kb, s_.bk, 0);
            pack(k0, s_.bk);
          });
        });
        scoped([&] { b_.if_then(last, [&] { pack(c(last_k0), k_ - last_k0); }); });
      } else {
        pack(affine(kb, s_.bk, 0), s_.bk);
      }
      if (s_.dot) {
        micro_kernels_dot();
      } else {
        micro_kernels();
      }
    });
    store_block(c_mem);
    return b_.finish();
  }

 private:
  void pack(Value k0, std::int64_t rows_of_k) {
    if (s_.dot) {
      pack_a_pairs(k0, rows_of_k);
      pack_b_pairs(k0, rows_of_k);
    } else {
      pack_a(k0, rows_of_k);
      pack_b(k0, rows_of_k);
    }
  }

  // One element of A or B, bf16 as stored (the bf16 form).
  Value raw_operand(Value memory, const Affine2& f, Value x0, Value x1) {
    return b_.load(memory, b_.add(affine(x0, f.c0, f.constant), affine(x1, f.c1, 0)));
  }

  // The word of k pair `kp` from k0: both elements, or (the last of an odd
  // count of k) the element and a bf16 zero; `at(k)` reads one element.
  template <class At>
  Value pair_word(Value k0, Value kp, bool zero_high, At&& at) {
    const Value k_lo = b_.add(k0, affine(kp, 2, 0));
    const Value lo = at(k_lo);
    const Value hi = zero_high ? zero_half_ : at(b_.add(k_lo, c(1)));
    return b_.bf16_pair(lo, hi);
  }

  // A's block as bm rows of bk/2 words: row il, pair kp at il bk/2 + kp.
  void pack_a_pairs(Value k0, std::int64_t rows_of_k) {
    const std::int64_t pairs = s_.bk / 2, whole = rows_of_k / 2;
    const bool odd = rows_of_k % 2 != 0;
    loop(c(s_.bm), [&](Value il) {
      const Value i = b_.add(m0_, il);
      const Value row = guard_m_ ? b_.min(i, c(m_ - 1)) : i;
      const Value at = affine(il, pairs, 0);
      const auto element = [&](Value k) { return raw_operand(a_mem_, p_.a, row, k); };
      loop(c(whole), [&](Value kp) { b_.store(a_pack_, b_.add(at, kp), pair_word(k0, kp, false, element)); });
      if (odd) b_.store(a_pack_, affine(at, 1, whole), pair_word(k0, c(whole), true, element));
      const std::int64_t filled = whole + (odd ? 1 : 0);
      if (filled < pairs)
        loop(c(pairs - filled), [&](Value z) { b_.store(a_pack_, b_.add(affine(at, 1, filled), z), zero_word_); });
    });
  }

  // B's block into bn/tn micro-panels [k/2][tn] of words: pair kp of column
  // jr tn + q at jr bk/2 tn + kp tn + q.
  void pack_b_pairs(Value k0, std::int64_t rows_of_k) {
    const std::int64_t pairs = s_.bk / 2, whole = rows_of_k / 2;
    const bool odd = rows_of_k % 2 != 0;
    const auto pack_pair = [&](Value kp, bool odd_tail) {
      const Value row = affine(kp, s_.tn, 0);
      loop(c(s_.bn / s_.tn), [&](Value jr) {
        const Value first_column = b_.add(n0_, affine(jr, s_.tn, 0));
        const Value panel = b_.add(affine(jr, pairs * s_.tn, 0), row);
        panel_columns(first_column, [&](Value q, bool clamp) {
          const Value column = b_.add(first_column, q);
          const Value j = clamp ? b_.min(column, c(n_ - 1)) : column;
          const auto element = [&](Value k) { return raw_operand(b_mem_, p_.b, k, j); };
          b_.store(b_pack_, b_.add(panel, q), pair_word(k0, kp, odd_tail, element));
        });
      });
    };
    loop(c(whole), [&](Value kp) { pack_pair(kp, false); });
    if (odd) scoped([&] { pack_pair(c(whole), true); });
    const std::int64_t filled = whole + (odd ? 1 : 0);
    if (filled < pairs)
      loop(c(pairs - filled), [&](Value z) {
        const Value row = affine(z, s_.tn, filled * s_.tn);
        loop(c(s_.bn / s_.tn), [&](Value jr) {
          const Value panel = b_.add(affine(jr, pairs * s_.tn, 0), row);
          loop(c(s_.tn), [&](Value q) { b_.store(b_pack_, b_.add(panel, q), zero_word_); });
        });
      });
  }

  // The bf16 form's micro-kernels: per k pair, tm broadcast words of A,
  // tn / lanes vector words of B, tm x tn / lanes dot_bf16.
  void micro_kernels_dot() {
    const std::int64_t vectors = s_.tn / s_.lanes, pairs = s_.bk / 2;
    const auto lanes = static_cast<std::uint8_t>(s_.lanes);
    loop(c(s_.bn / s_.tn), [&](Value jr) {
      const Value b_panel = affine(jr, pairs * s_.tn, 0);
      loop(c(s_.bm / s_.tm), [&](Value ir) {
        const Value a_panel = affine(ir, pairs * s_.tm, 0);
        const Value tile = b_.add(affine(ir, s_.tm * s_.bn, 0), affine(jr, s_.tn, 0));
        auto each = [&](auto&& f) {
          for (std::int64_t r = 0; r < s_.tm; ++r)
            for (std::int64_t v = 0; v < vectors; ++v) f(c(r * s_.tn + v * s_.lanes), affine(tile, 1, r * s_.bn + v * s_.lanes));
        };
        each([&](Value at, Value in_block) { b_.store(acc_, at, b_.load(block_, in_block, lanes)); });
        loop(c(pairs / s_.unroll), [&](Value kq) {
          for (std::int64_t u = 0; u < s_.unroll; ++u) {
            const Value kp = affine(kq, s_.unroll, u);
            const Value b_at = b_.add(b_panel, affine(kp, s_.tn, 0));
            const Value a_at = b_.add(a_panel, kp);
            std::vector<Value> bv;
            for (std::int64_t v = 0; v < vectors; ++v) bv.push_back(b_.load(b_pack_, affine(b_at, 1, v * s_.lanes), lanes));
            for (std::int64_t r = 0; r < s_.tm; ++r) {
              const Value a = vector_of(b_.load(a_pack_, affine(a_at, 1, r * pairs)));
              for (std::int64_t v = 0; v < vectors; ++v) {
                const Value at = c(r * s_.tn + v * s_.lanes);
                b_.store(acc_, at, b_.dot_bf16(b_.load(acc_, at, lanes), a, bv[static_cast<std::size_t>(v)]));
              }
            }
          }
        });
        each([&](Value at, Value in_block) { b_.store(block_, in_block, b_.load(acc_, at, lanes)); });
      });
    });
  }

  // One element of A or B, f32.
  Value operand(Value memory, const Affine2& f, Value x0, Value x1) {
    const Value index = b_.add(affine(x0, f.c0, f.constant), affine(x1, f.c1, 0));
    const Value v = b_.load(memory, index);
    return p_.input != DType::F32 ? b_.cast(DType::F32, v) : v;
  }

  // A's block row-major, bm x bk: micro-panel ir is rows ir tm .. ir tm + tm - 1,
  // each of bk consecutive k (one contiguous copy per row; the micro-kernel
  // reads tm streams of broadcasts from it).
  void pack_a(Value k0, std::int64_t rows_of_k) {
    loop(c(s_.bm), [&](Value il) {
      const Value i = b_.add(m0_, il);
      const Value row = guard_m_ ? b_.min(i, c(m_ - 1)) : i;
      const Value at = affine(il, s_.bk, 0);
      loop(c(rows_of_k), [&](Value kk) { b_.store(a_pack_, b_.add(at, kk), operand(a_mem_, p_.a, row, b_.add(k0, kk))); });
      if (rows_of_k < s_.bk)
        loop(c(s_.bk - rows_of_k), [&](Value z) { b_.store(a_pack_, b_.add(affine(at, 1, rows_of_k), z), zero_); });
    });
  }

  // B's block into bn/tn micro-panels [k][tn]: element (kk, jr tn + q) at jr bk tn + kk tn + q.
  // Row kk of the block is read in order (contiguous in a row-major B).
  void pack_b(Value k0, std::int64_t rows_of_k) {
    loop(c(rows_of_k), [&](Value kk) {
      const Value k = b_.add(k0, kk);
      const Value row = affine(kk, s_.tn, 0);
      loop(c(s_.bn / s_.tn), [&](Value jr) {
        const Value first_column = b_.add(n0_, affine(jr, s_.tn, 0));
        const Value panel = b_.add(affine(jr, s_.bk * s_.tn, 0), row);
        panel_columns(first_column, [&](Value q, bool clamp) {
          const Value column = b_.add(first_column, q);
          const Value j = clamp ? b_.min(column, c(n_ - 1)) : column;
          b_.store(b_pack_, b_.add(panel, q), operand(b_mem_, p_.b, k, j));
        });
      });
    });
    if (rows_of_k < s_.bk)
      loop(c(s_.bk - rows_of_k), [&](Value z) {
        const Value row = affine(z, s_.tn, rows_of_k * s_.tn);
        loop(c(s_.bn / s_.tn), [&](Value jr) {
          const Value panel = b_.add(affine(jr, s_.bk * s_.tn, 0), row);
          loop(c(s_.tn), [&](Value q) { b_.store(b_pack_, b_.add(panel, q), zero_); });
        });
      });
  }

  // A LOOP over the tn columns of a micro-panel from `first_column`:
  // body(q, edge). Where bn does not divide N, a panel that ends past the
  // matrix runs a second copy with edge = true (columns past N guarded or
  // clamped), so the whole panels keep a plain, vectorizable loop.
  template <class Body>
  void panel_columns(Value first_column, Body&& body) {
    if (!guard_n_) return loop(c(s_.tn), [&](Value q) { body(q, false); });
    const Value whole = b_.cmplt(first_column, c(n_ - s_.tn + 1));
    const Value edge = b_.cmpgt(first_column, c(n_ - s_.tn));
    scoped([&] { b_.if_then(whole, [&] { loop(c(s_.tn), [&](Value q) { body(q, false); }); }); });
    scoped([&] { b_.if_then(edge, [&] { loop(c(s_.tn), [&](Value q) { body(q, true); }); }); });
  }

  // Every tm x tn tile of the block: accumulators in, the packed k step, accumulators out.
  void micro_kernels() {
    const std::int64_t vectors = s_.tn / s_.lanes;
    const auto lanes = static_cast<std::uint8_t>(s_.lanes);
    loop(c(s_.bn / s_.tn), [&](Value jr) {
      const Value b_panel = affine(jr, s_.bk * s_.tn, 0);
      loop(c(s_.bm / s_.tm), [&](Value ir) {
        const Value a_panel = affine(ir, s_.bk * s_.tm, 0);
        const Value tile = b_.add(affine(ir, s_.tm * s_.bn, 0), affine(jr, s_.tn, 0));
        auto each = [&](auto&& f) {
          for (std::int64_t r = 0; r < s_.tm; ++r)
            for (std::int64_t v = 0; v < vectors; ++v) f(r, v, c(r * s_.tn + v * s_.lanes), affine(tile, 1, r * s_.bn + v * s_.lanes));
        };
        each([&](std::int64_t, std::int64_t, Value at, Value in_block) { b_.store(acc_, at, b_.load(block_, in_block, lanes)); });
        loop(c(s_.bk / s_.unroll), [&](Value kq) {
          for (std::int64_t u = 0; u < s_.unroll; ++u) {
            const Value kk = affine(kq, s_.unroll, u);
            const Value b_at = b_.add(b_panel, affine(kk, s_.tn, 0));
            const Value a_at = b_.add(a_panel, kk);
            std::vector<Value> bv;
            for (std::int64_t v = 0; v < vectors; ++v) bv.push_back(b_.load(b_pack_, affine(b_at, 1, v * s_.lanes), lanes));
            for (std::int64_t r = 0; r < s_.tm; ++r) {
              const Value a = vector_of(b_.load(a_pack_, affine(a_at, 1, r * s_.bk)));
              for (std::int64_t v = 0; v < vectors; ++v) {
                const Value at = c(r * s_.tn + v * s_.lanes);
                b_.store(acc_, at, b_.mad(a, bv[static_cast<std::size_t>(v)], b_.load(acc_, at, lanes)));
              }
            }
          }
        });
        each([&](std::int64_t, std::int64_t, Value at, Value in_block) { b_.store(block_, in_block, b_.load(acc_, at, lanes)); });
      });
    });
  }

  // The block to C, rows and columns past the matrix left out.
  void store_block(Value c_mem) {
    const DType c_dtype = old_[p_.c_param].dtype;
    loop(c(s_.bm), [&](Value il) {
      const Value i = b_.add(m0_, il);
      auto row = [&] {
        const Value c_row = affine(i, p_.c.c0, p_.c.constant);
        const Value block_row = affine(il, s_.bn, 0);
        loop(c(s_.bn / s_.tn), [&](Value jr) {
          const Value first_column = b_.add(n0_, affine(jr, s_.tn, 0));
          const Value first_in_block = b_.add(block_row, affine(jr, s_.tn, 0));
          panel_columns(first_column, [&](Value q, bool edge) {
            const Value j = b_.add(first_column, q);
            const Value v = mma::c_element(b_, c_dtype, b_.load(block_, b_.add(first_in_block, q)));
            mma::store_c_element(b_, c_mem, b_.add(c_row, affine(j, p_.c.c1, 0)), v, Value{},
                                 edge ? b_.cmplt(j, c(n_)) : Value{});
          });
        });
      };
      if (guard_m_) {
        const Value inside = b_.cmplt(i, c(m_));
        scoped([&] { b_.if_then(inside, row); });
      } else {
        row();
      }
    });
  }

  // A LOOP; the constants made inside it are not visible after it.
  template <class Body>
  void loop(Value count, Body&& body) {
    scoped([&] { b_.for_loop(count, body); });
  }
  Value vector_of(Value scalar) { return s_.lanes > 1 ? b_.broadcast(scalar, static_cast<std::uint8_t>(s_.lanes)) : scalar; }

  const Kernel& old_;
  const Product& p_;
  Shape s_;
  std::int64_t m_ = 0, n_ = 0, k_ = 0;
  bool guard_m_ = false, guard_n_ = false, guard_k_ = false;
  Value a_mem_, b_mem_, a_pack_, b_pack_, block_, acc_, m0_, n0_, zero_;
  Value zero_half_, zero_word_;  // the bf16 form's padding: a bf16 0 and a u32 0 word
};

Result<Shape> shape_of(const OptStep& step) {
  KILN_TRY(known_params(step, {"bm", "bn", "bk", "tm", "tn", "lanes", "unroll", "dot"}));
  Shape s;
  KILN_TRY_ASSIGN(s.bm, require_param(step, "bm"));
  KILN_TRY_ASSIGN(s.bn, require_param(step, "bn"));
  KILN_TRY_ASSIGN(s.bk, require_param(step, "bk"));
  KILN_TRY_ASSIGN(s.tm, require_param(step, "tm"));
  KILN_TRY_ASSIGN(s.tn, require_param(step, "tn"));
  KILN_TRY_ASSIGN(s.lanes, require_param(step, "lanes"));
  s.unroll = step.param("unroll", 1);
  const std::int64_t dot = step.param("dot", 0);
  if (dot != 0 && dot != 1) return step_error(step, "dot must be 0 or 1, not " + std::to_string(dot));
  s.dot = dot == 1;
  return s;
}

class PackTile final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "matrix products on one-thread groups (CPUs), BLIS-style: a bm x bn block of C per group in LOCAL storage, "
           "A and B packed per bk step into LOCAL micro-panels, a tm x tn register tile of lanes-wide multiply-adds "
           "(dot=1: bf16 k pairs packed in u32 words, dot_bf16 / VDPBF16PS)";
  }

  // On one-thread-per-group devices: a register tile of the widest vectors
  // that leaves room for B's vectors and a broadcast (8 x 2 vectors: 16 of
  // AVX-512's 32 registers; else 6 x 2: 12 of AVX2's 16), blocks of 8 to 32
  // tiles of A by 8 or 16 of B, k steps of 128 or 256, sized to the caches
  // (B's micro-panel within L1, A's and B's blocks within half of L2 each)
  // and no larger than the matrix needs; biggest blocks first (packing
  // costs least per multiply-add), then k steps that divide K (no padding).
  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (device.max_local_threads > 1 || !ir::verify(kernel).ok()) return steps;
    auto matched = mma::match(kernel);
    if (!std::holds_alternative<Product>(matched)) return steps;
    const Product& p = std::get<Product>(matched);
    const std::int64_t lanes = std::min<std::int64_t>(device.vector_widths().back(), 16);
    const std::uint64_t registers = device.register_bytes > 0 ? device.register_bytes : 2048;
    const std::uint64_t l1 = device.cache_bytes[0] > 0 ? device.cache_bytes[0] : 32 * 1024;
    const std::uint64_t l2 = device.cache_bytes[1] > 0 ? device.cache_bytes[1] : 1024 * 1024;
    const std::int64_t m = p.mp.lengths[0], n = p.mp.lengths[1], k = p.mp.trip_count;
    // One register tile, the largest of these whose accumulators take at most
    // three quarters of the registers (the rest: B's vectors, the broadcast):
    // on c:0 the 8 x 32 tile measured best, and every further tile shape only
    // adds candidates that the tuner's measurements, on a loaded machine,
    // pick by noise (tm = 12 and 6 x 64 ran 10-30 % slower by hand).
    std::vector<std::pair<std::int64_t, std::int64_t>> tiles;
    for (const auto& [tm, tn] : {std::pair<std::int64_t, std::int64_t>{8, 2 * lanes}, {6, 2 * lanes}, {4, 2 * lanes}})
      if (tiles.empty() && 4 * static_cast<std::uint64_t>(tm * tn) * 4 <= registers * 3) tiles.push_back({tm, tn});
    // The bf16 form first where the device runs it: VDPBF16PS does two
    // multiply-adds per lane, and the packed words take half the bytes (k
    // steps of 256 and 512 fill the caches as 128 and 256 f32 ones do).
    const bool dot = p.input == DType::BF16 && device.supports_op_kind(KILN_OP_DOT_BF16, KILN_DTYPE_F32) &&
                     device.supports_op_kind(KILN_OP_BF16_PAIR, KILN_DTYPE_U32);
    for (const bool as_dot : {true, false})
      for (const auto& [tm, tn] : tiles)
        for (std::int64_t bm_tiles : {32, 16, 8})
          for (std::int64_t bn_tiles : {16, 8})
            for (std::int64_t bk_f32 : {128, 256}) {
              if (as_dot && !dot) continue;
              const std::int64_t bk = as_dot ? 2 * bk_f32 : bk_f32;
              const Shape s{tm * bm_tiles, tn * bn_tiles, bk, tm, tn, lanes, 4, as_dot};
              // A block past twice the matrix only adds work; the smallest blocks always stay.
              if ((bm_tiles > 8 && s.bm > 2 * m) || (bn_tiles > 8 && s.bn > 2 * n) || (bk_f32 > 128 && bk > 2 * k)) continue;
              const std::uint64_t e = s.packed_bytes();
              if (e * static_cast<std::uint64_t>(s.bk * s.tn) > l1 || e * static_cast<std::uint64_t>(s.bm * s.bk) * 2 > l2 ||
                  e * static_cast<std::uint64_t>(s.bk * s.bn) * 2 > l2)
                continue;
              if (!misfit(p, s, device).empty()) continue;
              OptStep step = make_step(kName, {{"bm", s.bm}, {"bn", s.bn}, {"bk", s.bk}, {"tm", s.tm}, {"tn", s.tn},
                                               {"lanes", s.lanes}, {"unroll", s.unroll}});
              if (as_dot) step = make_step(kName, {{"bm", s.bm}, {"bn", s.bn}, {"bk", s.bk}, {"tm", s.tm}, {"tn", s.tn},
                                                   {"lanes", s.lanes}, {"unroll", s.unroll}, {"dot", 1}});
              steps.push_back(step);
            }
    std::stable_sort(steps.begin(), steps.end(), [&](const OptStep& a, const OptStep& b) {
      const auto key = [&](const OptStep& s) {
        return std::make_tuple(-s.param("dot", 0), -s.param("bm") * s.param("bn"), k % s.param("bk") != 0);
      };
      return key(a) < key(b);
    });
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY_ASSIGN(const Shape s, shape_of(step));
    return mma::rewrite_product(
        kernel, step, "the packed kernel", [&](const Product& p) { return misfit(p, s, device); },
        [&](const Product& p) { return Emitter(kernel, p, s).run(); });
  }
};

}  // namespace

const Optimization& pack_tile() {
  static const PackTile instance;
  return instance;
}

}  // namespace kiln::passes::opts
