// local_tile(bm, bn, bk, tm, tn): LOCAL-memory tiling of a matrix product
// (opt_local_tile_match.hpp says which kernels). A work-group of
// (bm/tm) x (bn/tn) threads computes a bm x bn block of the output, each
// thread a tm x tn tile of it in REGISTER accumulators (register_block's
// jam). Per step of bk along k, the group's threads first copy a bk x bm
// tile of each m-side operand and a bk x bn tile of each n-side operand into
// LOCAL storage, each thread a contiguous run of the fastest-varying memory
// dimension (consecutive threads, consecutive addresses), then a barrier;
// then bk steps computing from LOCAL storage; then a barrier before the next
// copy overwrites the tiles. LOCAL axis 0 runs along n, axis 1 along m.
// Sizes that are not multiples of the tile are refused (pad them first).
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "opt_local_tile_match.hpp"
#include "opt_register_block_jam.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

constexpr std::string_view kName = "local_tile";

struct Shape {
  std::int64_t bm = 0, bn = 0, bk = 0, tm = 0, tn = 0;
  std::int64_t block(unsigned side) const { return side == 0 ? bm : bn; }
  std::int64_t per_thread(unsigned side) const { return side == 0 ? tm : tn; }
  std::int64_t threads(unsigned side) const { return block(side) / per_thread(side); }
  std::int64_t threads() const { return threads(0) * threads(1); }
};

bool cloneable_kind(OpKind kind) {
  return kind == OpKind::Const || kind == OpKind::Unary || kind == OpKind::Binary || kind == OpKind::Cast ||
         kind == OpKind::Mad || kind == OpKind::Select;
}

// Whether the index of a staged load can be recomputed for other (axis, k)
// values: pure arithmetic over the grid, the counter and values the whole
// tile shares.
bool cloneable(const Kernel& kernel, const tile::MatrixProduct& mp, ValueId id, int depth = 0) {
  if (id == mp.indices[0] || id == mp.indices[1] || id == mp.loop) return true;
  if ((mp.deps[id] & 7) == 0 && id < mp.loop) return true;
  if (depth > 64 || !cloneable_kind(kernel[id].kind)) return false;
  for (ValueId operand : kernel[id].operands())
    if (!cloneable(kernel, mp, operand, depth + 1)) return false;
  return true;
}

// Why `shape` does not fit the kernel or the device, or "".
std::string misfit(const Kernel& kernel, const tile::MatrixProduct& mp, const Shape& s, const DeviceInfo& device) {
  for (std::int64_t v : {s.bm, s.bn, s.bk, s.tm, s.tn})
    if (v < 1 || v > 4096) return "every size must be in 1..4096";
  if (s.bm % s.tm != 0 || s.bn % s.tn != 0) return "tm must divide bm and tn divide bn";
  const char* names[2] = {"bm", "bn"};
  for (unsigned side = 0; side < 2; ++side)
    if (mp.lengths[side] % s.block(side) != 0)
      return std::string(names[side]) + "=" + std::to_string(s.block(side)) + " does not divide GROUP axis " +
             std::to_string(mp.axes[side]) + "'s length " + std::to_string(mp.lengths[side]) + " (pad it first)";
  if (mp.trip_count % s.bk != 0)
    return "bk=" + std::to_string(s.bk) + " does not divide the trip count " + std::to_string(mp.trip_count) + " (pad it first)";
  if (s.threads() > device.max_local_threads || s.threads(1) > device.max_local_dims[0] ||
      s.threads(0) > device.max_local_dims[1])
    return std::to_string(s.threads(1)) + " x " + std::to_string(s.threads(0)) + " threads per group exceed the device's " +
           std::to_string(device.max_local_threads) + " (" + std::to_string(device.max_local_dims[0]) + " x " +
           std::to_string(device.max_local_dims[1]) + ")";
  // Each thread copies its share of every tile, written out: bounded.
  std::int64_t copies = 0;
  for (const tile::StagedLoad& staged : mp.staged) copies += (s.bk * s.block(staged.side) + s.threads() - 1) / s.threads();
  if (copies > 4096 || static_cast<std::uint64_t>(kernel.size()) * static_cast<std::uint64_t>(s.tm * s.tn) > (1u << 20))
    return "the tiled kernel would be too large (each thread copies " + std::to_string(copies) + " elements per k step)";
  std::uint64_t local_bytes = 0;
  for (const tile::StagedLoad& staged : mp.staged)
    local_bytes += static_cast<std::uint64_t>(s.bk * s.block(staged.side)) * ir::dtype_bytes(kernel[staged.load].dtype);
  if (local_bytes > device.local_memory_bytes)
    return "the tiles need " + std::to_string(local_bytes) + " LOCAL bytes; the device has " +
           std::to_string(device.local_memory_bytes);
  return "";
}

// Emits the tiled kernel through the jam engine.
class Tiler {
 public:
  Tiler(const Kernel& old, const tile::MatrixProduct& mp, const Shape& s)
      : old_(old), mp_(mp), s_(s),
        jammer_(old, mp.indices, {static_cast<std::uint32_t>(s.tm), static_cast<std::uint32_t>(s.tn)}) {
    jammer_.coordinates = [this](unsigned side) { return coordinates(side); };
    jammer_.special_loop = mp.loop;
    jammer_.emit_special_loop = [this] { emit_loop(); };
    jammer_.replace_load = [this](ValueId load, std::uint32_t r, std::uint32_t c) { return staged_read(load, r, c); };
  }

  jam::Jammer& jammer() { return jammer_; }
  Kernel run() { return jammer_.run(); }

 private:
  ir::Builder& out() { return jammer_.out(); }
  jam::ScopedEmitter& emit() { return jammer_.emitter(); }

  // Side 0 (m): group * bm + ly * tm + r; side 1 (n): group * bn + lx * tn + c.
  std::vector<Value> coordinates(unsigned side) {
    const Value group = out().group_index(mp_.axes[side], emit().constant(mp_.lengths[side] / s_.block(side)));
    // LOCAL axis 0 along n: neighbouring threads touch neighbouring columns.
    ir::Op local;
    local.kind = OpKind::Index;
    local.dtype = ir::kIndexType;
    local.code = static_cast<std::uint8_t>(ir::Scope::Local);
    local.attr = side == 0 ? 1 : 0;
    local.src[0] = emit().constant(s_.threads(side)).id;
    thread_[side] = out().append(local);
    group_base_[side] = emit().affine(group, s_.block(side), 0);
    thread_base_[side] = emit().affine(thread_[side], s_.per_thread(side), 0);
    const Value base = emit().add(group_base_[side], thread_base_[side]);
    std::vector<Value> coordinates;
    for (std::int64_t copy = 0; copy < s_.per_thread(side); ++copy) coordinates.push_back(emit().affine(base, 1, copy));
    return coordinates;
  }

  void emit_loop() {
    for (const tile::StagedLoad& staged : mp_.staged)
      tiles_[staged.load] =
          out().storage(ir::Scope::Local, old_[staged.load].dtype, static_cast<std::uint64_t>(s_.bk * s_.block(staged.side)));
    const Value t = emit().add(emit().affine(thread_[0], s_.threads(1), 0), thread_[1]);
    const Value outer = out().loop(emit().constant(mp_.trip_count / s_.bk));
    const Value k0 = emit().affine(outer, s_.bk, 0);
    for (const tile::StagedLoad& staged : mp_.staged) stage(staged, t, k0);
    out().barrier();
    const Value inner = out().loop(emit().constant(s_.bk));
    jammer_.set_value(mp_.loop, emit().add(k0, inner));
    for (unsigned side = 0; side < 2; ++side)
      row_base_[side] = emit().add(emit().affine(inner, s_.block(side), 0), thread_base_[side]);
    jammer_.emit_body(mp_.loop);
    out().end_loop(inner);
    out().barrier();
    out().end_loop(outer);
  }

  // Copies this k step's tile of one operand into LOCAL storage, laid out
  // [k][row]: element (kk, rr) at kk * block + rr.
  void stage(const tile::StagedLoad& staged, Value t, Value k0) {
    const std::int64_t block = s_.block(staged.side), count = s_.bk * block, threads = s_.threads();
    const std::int64_t fast_extent = staged.k_fastest ? s_.bk : block;
    const auto copy_element = [&](Value fast, Value slow) {
      const Value kk = staged.k_fastest ? fast : slow, rr = staged.k_fastest ? slow : fast;
      std::map<ValueId, Value> memo;
      const Value coordinate = emit().add(group_base_[staged.side], rr);
      const Value k = emit().add(k0, kk);
      const Value index = clone(old_[staged.load].src[1], staged.side, coordinate, k, memo);
      const Value value = out().load(jammer_.value(old_[staged.load].src[0], 0, 0), index);
      out().store(tiles_[staged.load], emit().add(emit().affine(kk, block, 0), rr), value);
    };
    const std::int64_t per_thread = count / threads;
    if (count % threads == 0 && fast_extent % per_thread == 0) {
      // Each thread a run of per_thread consecutive elements of one row:
      // written so that vectorize can prove the run consecutive and aligned.
      const std::int64_t threads_per_row = fast_extent / per_thread;
      const Value slow = emit().div(t, threads_per_row);
      const Value fast_base = emit().affine(emit().mod(t, threads_per_row), per_thread, 0);
      for (std::int64_t q = 0; q < per_thread; ++q) copy_element(emit().affine(fast_base, 1, q), slow);
      return;
    }
    // Otherwise element e = q * threads + t (neighbouring threads read
    // neighbouring elements), guarded past the end.
    for (std::int64_t q = 0; q * threads < count; ++q) {
      const Value e = emit().affine(t, 1, q * threads);
      const bool guarded = (q + 1) * threads > count;
      ValueId guard = ir::kNoValue;
      if (guarded) guard = out().if_(out().cmplt(e, emit().constant(count)));
      const Value fast = emit().mod(e, fast_extent);
      const Value slow = emit().div(e, fast_extent);
      copy_element(fast, slow);
      if (guarded) out().end_if(guard);
    }
  }

  // The old index expression `id` with the staged axis at `coordinate` and
  // the loop counter at `k`.
  Value clone(ValueId id, unsigned side, Value coordinate, Value k, std::map<ValueId, Value>& memo) {
    if (id == mp_.indices[side]) return coordinate;
    if (id == mp_.loop) return k;
    if ((mp_.deps[id] & 7) == 0 && id < mp_.loop) return jammer_.value(id, 0, 0);
    if (const auto found = memo.find(id); found != memo.end()) return found->second;
    ir::Op op = old_[id];
    for (ValueId& operand : op.operands()) operand = clone(operand, side, coordinate, k, memo).id;
    const Value made = out().append(op);
    memo.emplace(id, made);
    return made;
  }

  std::optional<Value> staged_read(ValueId load, std::uint32_t r, std::uint32_t c) {
    const auto tile = tiles_.find(load);
    if (tile == tiles_.end()) return std::nullopt;
    const unsigned side = std::find_if(mp_.staged.begin(), mp_.staged.end(), [&](const tile::StagedLoad& s) {
                            return s.load == load;
                          })->side;
    return out().load(tile->second, emit().affine(row_base_[side], 1, side == 0 ? r : c));
  }

  const Kernel& old_;
  const tile::MatrixProduct& mp_;
  Shape s_;
  jam::Jammer jammer_;
  std::array<Value, 2> thread_{}, group_base_{}, thread_base_{}, row_base_{};
  std::map<ValueId, Value> tiles_;  // staged load -> its LOCAL tile
};

Shape shape_of(const OptStep& step) {
  return {step.param("bm"), step.param("bn"), step.param("bk"), step.param("tm"), step.param("tn")};
}

class LocalTile final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "matrix products: a work-group stages bk x bm and bk x bn tiles of the operands in LOCAL storage, each "
           "thread computes a tm x tn tile of the bm x bn block from them";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    if (!ir::verify(kernel).ok()) return {};  // only valid kernels have variants
    std::vector<OptStep> steps;
    if (device.max_local_threads <= 1) return steps;
    auto matched = tile::match_matrix_product(kernel);
    if (!std::holds_alternative<tile::MatrixProduct>(matched)) return steps;
    const tile::MatrixProduct& mp = std::get<tile::MatrixProduct>(matched);
    for (const auto& staged : mp.staged)
      if (!cloneable(kernel, mp, kernel[staged.load].src[1])) return steps;
    if (jam::Jammer(kernel, mp.indices, {2, 2}).obstacle()) return steps;
    for (std::int64_t bm : {128, 64})
      for (std::int64_t bn : {128, 64})
        for (std::int64_t tm : {8, 4})
          for (std::int64_t tn : {8, 4})
            for (std::int64_t bk : {8, 16, 32}) {
              const Shape s{bm, bn, bk, tm, tn};
              if (!misfit(kernel, mp, s, device).empty()) continue;
              const jam::Jammer jammer(kernel, mp.indices, {static_cast<std::uint32_t>(tm), static_cast<std::uint32_t>(tn)});
              if (device.register_bytes > 0 && jammer.storage_bytes(ir::Scope::Register) > device.register_bytes) continue;
              steps.push_back(make_step(kName, {{"bm", bm}, {"bn", bn}, {"bk", bk}, {"tm", tm}, {"tn", tn}}));
            }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    if (Result<void> valid = ir::verify(kernel); !valid.ok())
      return step_error(step, "the kernel does not verify: " + valid.error().message);
    for (const char* key : {"bm", "bn", "bk", "tm", "tn"}) KILN_TRY(require_param(step, key));
    auto matched = tile::match_matrix_product(kernel);
    if (std::holds_alternative<std::string>(matched)) return step_error(step, "not a matrix product: " + std::get<std::string>(matched));
    const tile::MatrixProduct& mp = std::get<tile::MatrixProduct>(matched);
    const Shape s = shape_of(step);
    if (const std::string why = misfit(kernel, mp, s, device); !why.empty()) return step_error(step, why);
    for (const auto& staged : mp.staged)
      if (!cloneable(kernel, mp, kernel[staged.load].src[1]))
        return step_error(step, "the index of `" + ir::print_op(kernel, staged.load) +
                                    "` is not computed from the grid and the loop counter alone");
    Tiler tiler(kernel, mp, s);
    if (auto why = tiler.jammer().obstacle()) return step_error(step, *why);
    const std::uint64_t registers = tiler.jammer().storage_bytes(ir::Scope::Register);
    if (device.register_bytes > 0 && registers > device.register_bytes)
      return step_error(step, "the tile needs " + std::to_string(registers) + " REGISTER bytes per thread; the device has " +
                                  std::to_string(device.register_bytes));
    return tiler.run();
  }
};

}  // namespace

const Optimization& local_tile() {
  static const LocalTile instance;
  return instance;
}

}  // namespace kiln::passes::opts
