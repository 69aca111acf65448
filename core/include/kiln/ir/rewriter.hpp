// kiln/ir/rewriter.hpp - the toolkit passes use to build a new kernel from
// an old one. Ops have no identity beyond their position, so a pass never
// edits in place: it walks the old ops and, for each, copies it (operands
// renamed to their new values), replaces it by other values, emits new ops
// before or after it, or drops it.
//
//   // x * 1 -> x
//   Kernel out = rewrite(old, [](Rewriter& rw, ValueId id) {
//     const Op& op = rw.old()[id];
//     if (op.kind != OpKind::Binary || op.binary() != BinaryOp::Mul) return false;  // copy as is
//     if (constant_double(rw.old(), op.src[1]) != 1.0) return false;
//     rw.replace(id, rw.map(op.src[0]));  // later uses of id use x; nothing emitted
//     return true;
//   });
//
// Uses of a dropped value, or of a value not yet visited, become missing
// operands, which verify() reports ("operand-missing").
#pragma once

#include "kiln/ir/builder.hpp"
#include "kiln/ir/kernel.hpp"

#include <vector>

namespace kiln::ir {

class Rewriter {
 public:
  explicit Rewriter(const Kernel& old);

  const Kernel& old() const { return old_; }
  // The kernel being built: emit new ops through it.
  Builder& out() { return out_; }

  // The new value that stands for old op `old_id` (for LOOP/IF markers: the
  // new marker). Invalid when it was dropped or has not been handled yet.
  Value map(ValueId old_id) const;
  // Whether old op `old_id` was already copied, replaced or dropped.
  bool handled(ValueId old_id) const;

  // Appends old op `old_id` with its operands mapped; it now stands for it.
  Value copy(ValueId old_id);
  // From now on, uses of old op `old_id` use `value` instead.
  void replace(ValueId old_id, Value value);
  // Emits nothing for old op `old_id`.
  void drop(ValueId old_id);
  // Copies every old op in [first, last) that is not handled yet.
  void copy_range(ValueId first, ValueId last);

  Kernel finish() { return out_.finish(); }

 private:
  const Kernel& old_;
  Builder out_;
  std::vector<ValueId> map_;
  std::vector<bool> handled_;
};

// Walks the old kernel in order; `visit(rewriter, id)` handles op `id` (and
// returns true) or returns false to have it copied. Ops a visit already
// handled (e.g. hoisted out of a loop) are skipped.
template <class Visit>
Kernel rewrite(const Kernel& old, Visit&& visit) {
  Rewriter rw(old);
  for (ValueId id = 0; id < old.size(); ++id) {
    if (rw.handled(id)) continue;
    if (!visit(rw, id)) rw.copy(id);
  }
  return rw.finish();
}

}  // namespace kiln::ir
