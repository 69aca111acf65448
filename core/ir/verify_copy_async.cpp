// The rules of the asynchronous copy (kernel_ir.h, KILN_OP_COPY_ASYNC): a
// 16-byte copy into LOCAL storage, typed as a STORE; and, where the verifier
// can see it, no access of the copied elements before a COPY_WAIT: a LOAD or
// STORE of the same storage at the same index value later in the same block
// (so it runs whenever the copy does) with no COPY_WAIT between them. The
// reference interpreter checks every other case as it runs (its storage
// checks report any access of an element whose copy is still pending).
#include "verifier.hpp"

#include <kiln/sdk/wire.hpp>

namespace kiln::ir::verify_detail {

bool Verifier::check_copy_async(ValueId id, const Op& op) {
  const Op& memory = kernel_[op.src[0]];
  if (memory.kind != OpKind::Storage || memory.scope() != Scope::Local)
    return fail(id, "copy-async-target", "%" + std::to_string(op.src[0]) + " is not LOCAL storage (copies go into LOCAL storage)");
  if (!is_i64_scalar(op.src[1])) return fail(id, "index-type", "the element index must be i64, got " + type_name(type(op.src[1])));
  if (op.dtype != memory.dtype || type(op.src[2]) != type(id))
    return fail(id, "copy-async-type", "the copied value is " + type_name(type(op.src[2])) + " and the copy says " +
                                           type_name(type(id)) + ", into " + std::string(dtype_name(memory.dtype)) + " storage");
  if (static_cast<std::uint64_t>(op.lanes) * dtype_bytes(op.dtype) != sdk::kCopyAsyncBytes)
    return fail(id, "copy-async-size", "a copy moves exactly " + std::to_string(sdk::kCopyAsyncBytes) + " bytes, not " +
                                           std::to_string(op.lanes * dtype_bytes(op.dtype)));
  if (!check_alignment_and_range(id, op, memory)) return false;
  for (ValueId later = id + 1; later < kernel_.size(); ++later) {
    const Op& next = kernel_[later];
    if (next.kind == OpKind::CopyWait) break;
    if ((next.kind == OpKind::EndLoop || next.kind == OpKind::EndIf) && next.src[0] == blocks_.parent[id]) break;
    if ((next.kind == OpKind::Load || next.kind == OpKind::Store) && blocks_.parent[later] == blocks_.parent[id] &&
        next.src[0] == op.src[0] && next.src[1] == op.src[1])
      return fail(id, "copy-async-wait", "op " + std::to_string(later) + " " +
                                             (next.kind == OpKind::Load ? "reads" : "writes") +
                                             " the copied elements before a copy_wait");
  }
  return true;
}

}  // namespace kiln::ir::verify_detail
