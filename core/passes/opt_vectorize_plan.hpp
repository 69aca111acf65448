// What vectorize(lanes) will do to a kernel, found before anything is
// emitted: groups of `lanes` scalar ops that become one vector op.
//
//   - store groups: STOREs into one memory, in one block, at indices
//     base + 0 .. base + lanes-1 (provably, by ir::affine_form) with base a
//     provable multiple of lanes, or, on a device that claims vector
//     accesses at any element index (AnyIndex), base any affine index
//     whose constant is a multiple of lanes (the group is then marked
//     unaligned unless base is provably a multiple); the stored values form
//     a tree of nodes;
//   - load nodes: LOADs grouped the same way (from store trees, then any
//     left over, whose lanes are read back with VEC_EXTRACT), at any index
//     also on a device that claims such loads alone (of PARAM buffers);
//   - op nodes: one UNARY/BINARY/CAST/MAD/SELECT op per lane, of one code
//     and dtype, in one block, whose operands are nodes again;
//   - broadcast nodes (one scalar for every lane) and gather nodes (any
//     scalars: BROADCAST then INSERTs, the costly fallback).
//
// Where they go: a load node at its first member (no possibly-aliasing
// store, and for LOCAL memory no barrier, may lie between its members), an
// op node at its last member, a store group at its last member (nothing that
// reads or writes possibly-aliasing memory between its members).
// Broadcasts and gathers are made where their user is. Every operand of a
// node's members precedes its last member, so each node's operands exist
// when it is emitted. GLOBAL params are read-only for the whole launch, so
// they alias nothing that is written; two GLOBAL_MUT params may alias.
#pragma once

#include "kiln/ir/kernel.hpp"

#include <cstdint>
#include <vector>

namespace kiln::passes::opts::vec {

enum class NodeKind { Load, Op, Broadcast, Gather };

struct Node {
  NodeKind kind = NodeKind::Gather;
  std::vector<ir::ValueId> members;  // one old op per lane (Broadcast: the scalar, once per lane)
  std::vector<int> operands;         // Op: the node of each operand (-1: the scalar of members[0], SELECT's shared condition)
  ir::ValueId place = ir::kNoValue;  // Load: first member; Op: last member; others: their user's place
  bool aligned = true;               // Load: the first index a provable multiple of lanes
};

struct StoreGroup {
  std::vector<ir::ValueId> members;  // by lane
  int value = -1;                    // node of the stored values
  bool aligned = true;               // the first index a provable multiple of lanes
};

struct Plan {
  std::uint32_t lanes = 0;
  std::vector<Node> nodes;
  std::vector<StoreGroup> stores;
  bool empty() const { return stores.empty() && nodes.empty(); }
};

// Which vector accesses the device runs at any element index: LOADs and
// STOREs (KILN_FEATURE_UNALIGNED_VECTORS), or LOADs of PARAM buffers alone
// (KILN_FEATURE_UNALIGNED_VECTOR_LOADS).
struct AnyIndex {
  bool loads = false;   // of PARAM buffers (with `stores`: of any memory)
  bool stores = false;  // and loads of any memory
};

Plan plan_vectorize(const ir::Kernel& kernel, std::uint32_t lanes, AnyIndex any_index = {});

}  // namespace kiln::passes::opts::vec
