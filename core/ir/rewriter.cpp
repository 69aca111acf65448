#include "kiln/ir/rewriter.hpp"

namespace kiln::ir {

Rewriter::Rewriter(const Kernel& old)
    : old_(old), map_(old.size(), kNoValue), handled_(old.size(), false) {
  out_.reserve(old.size());  // most rewrites keep about as many ops as they read
}

Value Rewriter::map(ValueId old_id) const { return Value{old_id < map_.size() ? map_[old_id] : kNoValue}; }

bool Rewriter::handled(ValueId old_id) const { return old_id < handled_.size() && handled_[old_id]; }

Value Rewriter::copy(ValueId old_id) {
  Op op = old_[old_id];
  for (ValueId& v : op.operands()) v = map(v).id;
  const Value copied = out_.append(op);
  map_[old_id] = copied.id;
  handled_[old_id] = true;
  return copied;
}

void Rewriter::replace(ValueId old_id, Value value) {
  map_[old_id] = value.id;
  handled_[old_id] = true;
}

void Rewriter::drop(ValueId old_id) {
  map_[old_id] = kNoValue;
  handled_[old_id] = true;
}

void Rewriter::copy_range(ValueId first, ValueId last) {
  for (ValueId id = first; id < last && id < old_.size(); ++id)
    if (!handled(id)) copy(id);
}

}  // namespace kiln::ir
