// What tiled_reduce may split across the threads of a work-group: a LOOP
// whose iterations are independent except for accumulations.
//
//   reduction: every STORE in the body is an accumulation
//       store S[c], (load S[c]) OP v      S REGISTER, c loop-invariant,
//                                          OP add/mul/max/min (either order,
//                                          or a chain of OPs with the load at
//                                          its bottom: ((S[c] OP a) OP b)),
//                                          the load used by nothing else,
//                                          every other read of S in the body
//                                          is such a load;
//   parallel: no accumulation; every STORE goes to one GLOBAL_MUT buffer at
//       base + step * counter + k, affine, one base and step != 0 for all,
//       the offsets k (and a vector store's lanes after them) within a
//       window narrower than |step| (each iteration its own element, or its
//       own block of consecutive ones), and the body reads no GLOBAL_MUT
//       buffer (it cannot see another iteration's writes).
// Neither may hold a barrier or touch LOCAL storage.
#pragma once

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/kernel.hpp"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::passes::opts::reduce {

struct Accumulator {
  ir::ValueId storage = ir::kNoValue;
  ir::ValueId index = ir::kNoValue;  // the loop-invariant element index (old value)
  ir::BinaryOp op = ir::BinaryOp::Add;
  ir::DType dtype = ir::DType::Invalid;
  std::vector<ir::ValueId> loads, stores;  // its updates in the body
};

struct SplittableLoop {
  ir::ValueId loop = ir::kNoValue;
  std::vector<Accumulator> accumulators;  // empty: a parallel loop
};

// LOOP `loop` as tiled_reduce sees it, or why it cannot be split.
std::variant<SplittableLoop, std::string> match_loop(const ir::Kernel& kernel, const ir::Blocks& blocks,
                                                     ir::ValueId loop);

// For every op: whether its value (or, for a STORE, what it writes) may
// differ between threads along the LOCAL INDEX ops `roots`. Unlike
// ir::thread_varying, a load from LOCAL storage at a uniform index is
// uniform: in a kernel without races every thread reading one element
// between two barriers sees the same value (how a tree reduction's result
// reaches every thread), and a SUBGROUP_REDUCE is uniform along LOCAL axis 0
// when that axis's length divides its width (one segment holds the axis).
std::vector<bool> varying_along(const ir::Kernel& kernel, const ir::Blocks& blocks,
                                const std::vector<ir::ValueId>& roots);

// The element every thread starts a partial result from: x OP identity == x.
std::optional<std::uint64_t> identity_bits(ir::BinaryOp op, ir::DType dtype);

}  // namespace kiln::passes::opts::reduce
