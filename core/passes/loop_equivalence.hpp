// Whether two values computed in two LOOPs are the same function of the
// loops' counters (internal to libkiln; row_cache and online_softmax use it
// to find a later loop's load of what an earlier loop loaded).
#pragma once

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/kernel.hpp"

#include <map>
#include <utility>

namespace kiln::passes::opts {

// equivalent(a, b): `a` (in LOOP la) and `b` (in LOOP lb) compute the same
// value when the two counters are equal: the counters themselves, one SSA
// value defined outside both loops, equal constants, or the same pure op
// (kind, dtype, lanes, code, attr, imm) of equivalent operands, or loads of
// one read-only (GLOBAL) buffer at equivalent indices. Other loads never are
// (what memory holds may differ between the loops).
class LoopEquivalence {
 public:
  LoopEquivalence(const ir::Kernel& kernel, const ir::Blocks& blocks, ir::ValueId la, ir::ValueId lb)
      : kernel_(kernel), blocks_(blocks), la_(la), lb_(lb) {}

  bool operator()(ir::ValueId a, ir::ValueId b) { return equivalent(a, b, 0); }

 private:
  bool equivalent(ir::ValueId a, ir::ValueId b, int depth);

  const ir::Kernel& kernel_;
  const ir::Blocks& blocks_;
  ir::ValueId la_, lb_;
  std::map<std::pair<ir::ValueId, ir::ValueId>, bool> memo_;
};

}  // namespace kiln::passes::opts
