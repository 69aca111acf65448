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
#include <vector>

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

  // The k loop of a kernel that stages its A and B tiles through LOCAL
  // memory (mma_staged, simt_staged), `steps` tiles of k. `stager` copies
  // and computes: plan_copy_units(), copy_tile(kt, stage) (asynchronous
  // copies), load_tile(kt) -> values and store_tile(values, stage) (through
  // registers), compute(stage).
  //   async: `stages` buffers filled by asynchronous copies, stages - 1
  //     tiles in flight before the loop, one copy group each (empty past the
  //     last tile, so the count of groups stays known);
  //   stages 1: load, store, barrier, compute, barrier per step;
  //   else two buffers: the next tile's loads go out before this step's
  //     compute and are stored after it, one barrier per step.
  template <class Stager>
  void staged_k_loop(Stager& stager, std::int64_t steps, bool async, std::int64_t stages) {
    if (async) {
      const std::int64_t ahead = stages - 1;
      stager.plan_copy_units();
      for (std::int64_t t = 0; t < ahead; ++t) {
        if (t < steps) stager.copy_tile(c(t), c(t));
        b_.copy_commit();
      }
      const ir::Value kt = loop(steps);
      // Tile kt has landed once at most stages - 2 groups are pending; the
      // barrier shows it to every thread and ends every read of the buffer
      // that tile kt + stages - 1 goes into (the one step kt - 1 read).
      b_.copy_wait(static_cast<std::uint32_t>(ahead - 1));
      b_.barrier();
      const ir::Value next = b_.add(kt, c(ahead));
      const ir::ValueId branch = b_.if_(b_.cmplt(next, c(steps)));
      new_scope();  // constants made inside the IF stay inside it
      stager.copy_tile(next, b_.mod(next, c(stages)));
      b_.end_if(branch);
      new_scope();
      b_.copy_commit();
      stager.compute(b_.mod(kt, c(stages)));
      end_loop(kt);
    } else if (stages == 1) {
      const ir::Value kt = loop(steps);
      stager.store_tile(stager.load_tile(kt), c(0));
      b_.barrier();
      stager.compute(c(0));
      b_.barrier();
      end_loop(kt);
    } else {
      stager.store_tile(stager.load_tile(c(0)), c(0));
      b_.barrier();
      const ir::Value kt = loop(steps);
      const ir::Value current = b_.mod(kt, c(2));
      // The last step loads its own tile again (into the buffer nobody
      // reads): no IF around the loads, which go out before the compute.
      const ir::Value next = b_.min(b_.add(kt, c(1)), c(steps - 1));
      const std::vector<ir::Value> copies = stager.load_tile(next);
      stager.compute(current);
      stager.store_tile(copies, b_.sub(c(1), current));
      b_.barrier();
      end_loop(kt);
    }
  }

  ir::Builder b_;

 private:
  std::map<std::int64_t, ir::Value> constants_;
};

}  // namespace kiln::passes::opts
