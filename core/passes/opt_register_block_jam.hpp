// The engine register_block and local_tile share: "unroll and jam" of two
// GROUP axes. Each thread of the new kernel does the work of tm x tn threads
// of the old one (copies r < tm along axis m, c < tn along axis n), in ONE
// instruction stream: every op is emitted once per copy it varies with
// (an op that depends only on m gets tm copies, one that depends on both
// tm x tn, one that depends on neither a single copy), so a value shared by
// the tile is computed and loaded once and reused. REGISTER/LOCAL storage
// that holds per-thread data is widened to one slot per copy (element e of
// copy k at e * copies + k: copies of one element lie side by side, which
// is what vectorize needs along n; storage already accessed with vectors
// gets one block per copy instead, at k * length + e).
//
// Jamming keeps each old thread's own op order, so it is exact whenever the
// old threads were independent (kernel_ir.h: work-groups are). It refuses a
// LOOP trip count or IF condition that differs between the copies: those
// cannot be shared by one instruction stream.
#pragma once

#include "kiln/ir/builder.hpp"
#include "kiln/ir/kernel.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::passes::opts::jam {

// What a value varies with (bits), for dependences().
inline constexpr std::uint8_t kAlongM = 1, kAlongN = 2, kAlongLoop = 4;

// For every op: the bits of `roots` (root i sets bit i) its value depends
// on, through operands and through REGISTER/LOCAL storage (a load depends on
// everything ever stored into that storage, and a store's bits flow into its
// storage). Buffer params are not tracked: a thread reads back only what it
// wrote itself, at an index that carries the dependence.
std::vector<std::uint8_t> dependences(const ir::Kernel& kernel, std::span<const ir::ValueId> roots);

// Emits i64 constants once per open block (a constant made inside a loop is
// not visible after it), and index arithmetic with the no-ops left out.
class ScopedEmitter {
 public:
  explicit ScopedEmitter(ir::Builder& out) : out_(out) {}
  ir::Builder& out() { return out_; }

  ir::Value constant(std::int64_t value);
  // x * scale + offset (i64), folding constants and leaving out * 1 and + 0.
  ir::Value affine(ir::Value x, std::int64_t scale, std::int64_t offset);
  ir::Value add(ir::Value x, ir::Value y);
  // x / divisor and x % divisor (i64, divisor > 0; x >= 0 where folded).
  ir::Value div(ir::Value x, std::int64_t divisor);
  ir::Value mod(ir::Value x, std::int64_t divisor);
  // `value` (an i64 CONST made by other means, at top level) stands for `number`.
  void remember(std::int64_t number, ir::Value value) { scopes_.front().constants.emplace(number, value); }
  // The i64 value of a new op, when it is a CONST.
  std::optional<std::int64_t> constant_of(ir::Value value) const;

 private:
  struct Scope {
    ir::ValueId block = ir::kNoValue;  // the LOOP/IF it lives in (kNoValue: top level)
    std::map<std::int64_t, ir::Value> constants;
  };
  ir::Builder& out_;
  std::vector<Scope> scopes_{1};
};

class Jammer {
 public:
  // `axes`: the INDEX ops of the two tiled axes (m, n); `copies`: tm, tn.
  Jammer(const ir::Kernel& old, std::array<ir::ValueId, 2> axes, std::array<std::uint32_t, 2> copies);
  Jammer(const Jammer&) = delete;
  Jammer& operator=(const Jammer&) = delete;

  const ir::Kernel& old() const { return old_; }
  // kAlongM / kAlongN bits of every old op, for the axes of more than one
  // copy (a store carries its storage's bits).
  const std::vector<std::uint8_t>& deps() const { return deps_; }
  // Why the kernel cannot be jammed, or nullopt.
  std::optional<std::string> obstacle() const;
  // Elements per old element of a widened storage (1 when not widened).
  std::uint32_t storage_copies(ir::ValueId storage) const;
  // REGISTER / LOCAL bytes per thread / group after widening.
  std::uint64_t storage_bytes(ir::Scope scope) const;

  // --- hooks, set before run() --------------------------------------------
  // At the INDEX op of side 0 (m) or 1 (n): the copies[side] coordinates.
  std::function<std::vector<ir::Value>(unsigned axis)> coordinates;
  // A LOOP the transformation emits itself (kNoValue: none): the hook emits
  // the markers and calls emit_body(loop) once per body copy.
  ir::ValueId special_loop = ir::kNoValue;
  std::function<void()> emit_special_loop;
  // Copy (r, c) of a LOAD emitted in another way (nullopt: as usual).
  std::function<std::optional<ir::Value>(ir::ValueId load, std::uint32_t r, std::uint32_t c)> replace_load;

  // --- emission ------------------------------------------------------------
  ScopedEmitter& emitter() { return emit_; }
  ir::Builder& out() { return out_; }
  ir::Kernel run();
  // Emits the ops inside LOOP/IF `block` (not its markers).
  void emit_body(ir::ValueId block);
  // From now on, old op `old_id` (of no tiled dependence) stands for `value`.
  void set_value(ir::ValueId old_id, ir::Value value) { map_[old_id] = {value}; }
  // The new value of old op `old_id` as copy (r, c) sees it.
  ir::Value value(ir::ValueId old_id, std::uint32_t r, std::uint32_t c) const;
  std::uint32_t copy_count(std::uint8_t deps) const;

 private:
  std::uint32_t copy_index(std::uint8_t deps, std::uint32_t r, std::uint32_t c) const;
  void emit_range(ir::ValueId first, ir::ValueId last);
  void emit_op(ir::ValueId id);
  ir::Value widened_index(ir::ValueId memory, ir::Value index, std::uint32_t r, std::uint32_t c);

  const ir::Kernel& old_;
  std::array<ir::ValueId, 2> axes_;
  std::array<std::uint32_t, 2> copies_;
  std::vector<std::uint8_t> deps_;
  std::vector<ir::ValueId> end_;  // END marker of each LOOP/IF
  std::vector<std::uint32_t> vector_lanes_;  // per memory: the widest access (storage widened in blocks when > 1)
  ir::Builder out_;
  ScopedEmitter emit_{out_};
  std::vector<std::vector<ir::Value>> map_;  // per old op: one value per copy
};

}  // namespace kiln::passes::opts::jam
