// Internal: the base of the optimizations that write a kernel anew with an
// ir::Builder (mma_tile, mma_staged, wgmma_staged, pack_tile): the builder, and the i64
// constants the new kernel uses, each made once per SSA scope. A constant
// made inside a LOOP or IF does not dominate what follows it, so entering
// and leaving one starts the cache afresh (the always-on passes merge the
// copies).
#pragma once

#include "kiln/ir/builder.hpp"

#include <cstdint>
#include <map>

namespace kiln::passes::opts {

class KernelWriter {
 protected:
  // A LOOP of `count` iterations, and its end.
  ir::Value loop(std::int64_t count) {
    const ir::Value kt = b_.loop(c(count));
    new_scope();
    return kt;
  }
  void end_loop(ir::Value kt) {
    b_.end_loop(kt);
    new_scope();
  }
  // Call on entering and leaving a block of one's own (an IF).
  void new_scope() { constants_.clear(); }
  // Runs `body`, which opens and closes a block (a LOOP or IF through the
  // builder); the constants made before it stay usable after it.
  template <class Body>
  void scoped(Body&& body) {
    const std::map<std::int64_t, ir::Value> outside = constants_;
    body();
    constants_ = outside;
  }
  ir::Value c(std::int64_t v) {
    auto [it, fresh] = constants_.try_emplace(v);
    if (fresh) it->second = b_.constant_i64(v);
    return it->second;
  }
  ir::Value scaled(ir::Value x, std::int64_t scale) { return affine(x, scale, 0); }
  // x * scale + offset, without the identity ops.
  ir::Value affine(ir::Value x, std::int64_t scale, std::int64_t offset) {
    if (scale == 0) return c(offset);
    ir::Value v = scale == 1 ? x : b_.mul(x, c(scale));
    return offset == 0 ? v : b_.add(v, c(offset));
  }

  ir::Builder b_;

 private:
  std::map<std::int64_t, ir::Value> constants_;
};

}  // namespace kiln::passes::opts
