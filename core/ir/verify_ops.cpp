// The rules of each op kind: dtypes and lanes as kernel_ir.h defines them,
// memory targets, index lengths, barriers, and the alignment and range of
// memory accesses where they can be proven wrong.
#include "kiln/ir/text.hpp"
#include "verifier.hpp"

#include <kiln/sdk/op_rules.hpp>
#include <kiln/sdk/wire.hpp>

#include <map>

namespace kiln::ir::verify_detail {

namespace {

std::string tn(ValueType t) { return type_name(t); }
std::string unary_name(const Op& op) { return std::string(sdk::unary_name(op.code)); }
std::string binary_name(const Op& op) { return std::string(sdk::binary_name(op.code)); }

// Why an op is not defined on `dtype`, from the categories of
// kiln/sdk/op_rules.hpp (the rules the interpreter and plugins use too).
std::string not_defined(std::string_view op, DType dtype) {
  std::string hint;
  switch (sdk::dtype_category(static_cast<unsigned>(dtype))) {
    case sdk::DTypeCategory::Float: hint = "floats allow every op but the bitwise ones and shifts"; break;
    case sdk::DTypeCategory::Int: hint = "integers allow no pow and no float-only unary op"; break;
    case sdk::DTypeCategory::Bool: hint = "bool allows logic, comparisons, max and min"; break;
    default: hint = "unknown dtype"; break;
  }
  return std::string(op) + " is not defined on " + std::string(dtype_name(dtype)) + " (" + hint + ")";
}

}  // namespace

bool Verifier::check_op(ValueId id) {
  const Op& op = kernel_[id];
  switch (op.kind) {
    case OpKind::Const: return check_const(id, op);
    case OpKind::Param: return check_param(id, op);
    case OpKind::Storage: return check_storage(id, op);
    case OpKind::Load: case OpKind::Store: return check_memory_access(id, op);
    case OpKind::CopyAsync: return check_copy_async(id, op);
    case OpKind::Prefetch: {
      // kernel_ir.h, PREFETCH: any index (it never faults), of a buffer param.
      const Op& memory = kernel_[op.src[0]];
      if (memory.kind != OpKind::Param)
        return fail(id, "prefetch-target", "%" + std::to_string(op.src[0]) + " is storage, not a buffer param (only params are prefetched)");
      if (!is_i64_scalar(op.src[1]))
        return fail(id, "index-type", "the element index must be i64, got " + tn(type(op.src[1])));
      if (op.dtype != memory.dtype || op.lanes != 1)
        return fail(id, "prefetch-type", "prefetch of " + tn(type(id)) + " from " + std::string(dtype_name(memory.dtype)) +
                                             " memory (it names one element of the param's dtype)");
      return true;
    }
    case OpKind::LoadMatrix: return check_load_matrix(id, op);
    case OpKind::Wgmma: return check_wgmma(id, op);
    case OpKind::WgmmaFence: return check_wgmma_collective(id, "wgmma_fence");
    case OpKind::WgmmaCommit: return check_wgmma_collective(id, "wgmma_commit");
    case OpKind::WgmmaWait:
      if (op.attr > sdk::kMaxWgmmaWaitGroups)
        return fail(id, "wgmma-wait-groups", "wgmma_wait leaves at most " + std::to_string(sdk::kMaxWgmmaWaitGroups) +
                                                 " groups pending, not " + std::to_string(op.attr));
      return check_wgmma_collective(id, "wgmma_wait");
    case OpKind::CopyWait:
      if (op.attr > kMaxCopyWaitGroups)
        return fail(id, "copy-wait-groups", "copy_wait leaves at most " + std::to_string(kMaxCopyWaitGroups) +
                                                " groups pending, not " + std::to_string(op.attr));
      return true;
    case OpKind::Index: return check_index(id, op);
    case OpKind::Loop:
      if (type(id) != ValueType{DType::I64, 1}) return fail(id, "loop-count", "a loop counter is i64, not " + tn(type(id)));
      if (!is_i64_scalar(op.src[0])) return fail(id, "loop-count", "the trip count must be i64, got " + tn(type(op.src[0])));
      return true;
    case OpKind::If:
      if (type(op.src[0]) != ValueType{DType::Bool, 1})
        return fail(id, "if-condition", "the condition must be a bool scalar, got " + tn(type(op.src[0])));
      return true;
    case OpKind::Barrier: return check_barrier(id, op);
    case OpKind::Unary: return check_unary(id, op);
    case OpKind::Binary: return check_binary(id, op);
    case OpKind::Cast:
      if (type(op.src[0]).lanes != op.lanes)
        return fail(id, "cast-type", "cast keeps the lanes of its operand (" + tn(type(op.src[0])) + ")");
      return true;
    case OpKind::Mad:
      if (!sdk::mad_allowed(static_cast<unsigned>(op.dtype))) return fail(id, "mad-type", not_defined("mad", op.dtype));
      for (ValueId v : op.operands())
        if (type(v) != type(id))
          return fail(id, "mad-type", "mad operands must all be " + tn(type(id)) + ", got " + tn(type(v)));
      return true;
    case OpKind::Select: {
      const ValueType cond = type(op.src[0]);
      if (cond.dtype != DType::Bool || (cond.lanes != 1 && cond.lanes != op.lanes))
        return fail(id, "select-type", "the condition must be bool with 1 or " + std::to_string(op.lanes) +
                                           " lanes, got " + tn(cond));
      if (type(op.src[1]) != type(id) || type(op.src[2]) != type(id))
        return fail(id, "select-type", "both choices must be " + tn(type(id)) + ", got " + tn(type(op.src[1])) +
                                           " and " + tn(type(op.src[2])));
      return true;
    }
    case OpKind::Broadcast: case OpKind::Insert: case OpKind::Extract: return check_vector(id, op);
    case OpKind::Mma: return check_mma(id, op);
    case OpKind::SubgroupReduce: return check_subgroup_reduce(id, op);
    case OpKind::Bf16Pair: case OpKind::DotBf16: return check_bf16_dot(id, op);
    default:
      return true;  // END markers: nesting already checked
  }
}

bool Verifier::check_const(ValueId id, const Op& op) {
  if (op.lanes != 1) return fail(id, "const-type", "a const is a scalar (use broadcast for vectors)");
  if (!bits_canonical(op.dtype, op.imm))
    return fail(id, "const-bits", "imm has bits beyond the " + std::string(dtype_name(op.dtype)) + " value" +
                                      (op.dtype == DType::Bool ? " (bool is 0 or 1)" : ""));
  return true;
}

namespace {

// The most bytes one PARAM or STORAGE may declare (256 TiB): far past any
// device, and small enough that elements * dtype size, and every offset a
// plugin computes from it, fits in 64 bits (a count near 2^62 used to wrap
// the host's byte count and overflow its buffers).
constexpr std::uint64_t kMaxMemoryBytes = std::uint64_t{1} << 48;

std::string too_large(const Op& op) {
  return std::to_string(op.imm) + " " + std::string(sdk::dtype_name(static_cast<unsigned>(op.dtype))) +
         " elements exceed the " + std::to_string(kMaxMemoryBytes) + "-byte limit of one memory";
}

bool exceeds_memory_limit(const Op& op) {
  const unsigned bytes = sdk::dtype_bytes(static_cast<unsigned>(op.dtype));
  return bytes != 0 && op.imm > kMaxMemoryBytes / bytes;
}

}  // namespace

bool Verifier::check_param(ValueId id, const Op& op) {
  const auto kind = op.param_kind();
  if (kind != ParamKind::Global && kind != ParamKind::GlobalMut && kind != ParamKind::Variable)
    return fail(id, "param-kind", "unknown param kind " + std::to_string(op.code));
  if (op.lanes != 1) return fail(id, "param-type", "a param's element type is a scalar");
  if (kind == ParamKind::Variable && op.imm != 0)
    return fail(id, "param-kind", "a var param has no element count (imm must be 0)");
  if (exceeds_memory_limit(op)) return fail(id, "param-size", too_large(op));
  return true;
}

bool Verifier::check_storage(ValueId id, const Op& op) {
  if (op.scope() != Scope::Local && op.scope() != Scope::Register)
    return fail(id, "storage-scope", "storage scope must be local or register, got " +
                                         std::string(sdk::scope_name(op.code)));
  if (op.lanes != 1) return fail(id, "storage-type", "a storage's element type is a scalar");
  if (op.imm == 0) return fail(id, "storage-size", "storage needs at least one element");
  if (exceeds_memory_limit(op)) return fail(id, "storage-size", too_large(op));
  return true;
}

bool Verifier::check_memory_access(ValueId id, const Op& op) {
  const Op& memory = kernel_[op.src[0]];
  const std::string kind(sdk::op_kind_name(static_cast<unsigned>(op.kind)));
  if (!is_i64_scalar(op.src[1]))
    return fail(id, "index-type", "the element index must be i64, got " + tn(type(op.src[1])));
  if (op.dtype != memory.dtype)
    return fail(id, kind + "-type", kind + " of " + std::string(dtype_name(op.dtype)) + " from " +
                                        std::string(dtype_name(memory.dtype)) + " memory");
  if (op.kind == OpKind::Store) {
    if (memory.kind == OpKind::Param && memory.param_kind() != ParamKind::GlobalMut)
      return fail(id, "store-target", "%" + std::to_string(op.src[0]) +
                                          " is a read-only global param (stores go to global_mut params and storage)");
    if (type(op.src[2]) != type(id))
      return fail(id, "store-type", "the stored value is " + tn(type(op.src[2])) + ", the store says " + tn(type(id)));
  }
  if (op.attr != 0 && (op.attr != KILN_ACCESS_UNALIGNED || op.lanes == 1))
    return fail(id, kind + "-attr", "attr " + std::to_string(op.attr) +
                                        " is neither 0 nor KILN_ACCESS_UNALIGNED (1: any element index, lanes > 1)");
  return check_alignment_and_range(id, op, memory);
}

bool Verifier::check_alignment_and_range(ValueId id, const Op& op, const Op& memory) {
  const auto form = affine_forms_.of(op.src[1]);
  if (!form) return true;
  const std::int64_t lanes = op.lanes;
  if (lanes > 1 && op.attr != KILN_ACCESS_UNALIGNED) {
    bool residue_known = true;
    for (const auto& [atom, coefficient] : form->terms) residue_known = residue_known && coefficient % lanes == 0;
    const std::int64_t residue = ((form->constant % lanes) + lanes) % lanes;
    if (residue_known && residue != 0)
      return fail(id, "alignment", "a " + std::to_string(lanes) + "-lane access needs an index that is a multiple of " +
                                       std::to_string(lanes) + "; this one is always " + std::to_string(residue) +
                                       " more than one");
  }
  // Range: only for accesses that run in every thread and iteration (no
  // enclosing IF, every enclosing LOOP with a constant positive count), with
  // an affine index over atoms of known range: then its extremes are reached.
  const std::uint64_t elements = memory.imm;
  if (elements == 0) return true;
  for (ValueId p = blocks_.parent[id]; p != kNoValue; p = blocks_.parent[p])
    if (kernel_[p].kind != OpKind::Loop || !atom_range(kernel_, p)) return true;
  __int128 low = form->constant;
  __int128 high = form->constant;
  for (const auto& [atom, coefficient] : form->terms) {
    const auto range = atom_range(kernel_, atom);
    if (!range) return true;
    const __int128 a = static_cast<__int128>(coefficient) * range->first;
    const __int128 b = static_cast<__int128>(coefficient) * range->second;
    low += std::min(a, b);
    high += std::max(a, b);
  }
  if (low < 0 || high + lanes > static_cast<__int128>(elements))
    return fail(id, "index-range", "the index reaches [" + std::to_string(static_cast<long long>(low)) + ", " +
                                       std::to_string(static_cast<long long>(high + lanes - 1)) +
                                       "] but the memory has " + std::to_string(elements) + " elements");
  return true;
}

bool Verifier::check_index(ValueId id, const Op& op) {
  if (op.scope() != Scope::Group && op.scope() != Scope::Local)
    return fail(id, "index-scope", "index scope must be group or local, got " + std::string(sdk::scope_name(op.code)));
  if (op.attr >= KILN_MAX_AXES) return fail(id, "index-axis", "axis " + std::to_string(op.attr) + " is not 0, 1 or 2");
  if (type(id) != ValueType{DType::I64, 1}) return fail(id, "index-type", "an index is i64, not " + tn(type(id)));
  if (!is_i64_scalar(op.src[0])) return fail(id, "index-length", "the length must be i64, got " + tn(type(op.src[0])));
  const auto [first, inserted] = indices_.emplace(std::pair{op.code, op.attr}, id);
  if (!inserted)
    return fail(id, "index-duplicate", "op " + std::to_string(first->second) + " already is the " +
                                           std::string(sdk::scope_name(op.code)) + " index of axis " +
                                           std::to_string(op.attr));
  const auto length = constant_int(kernel_, op.src[0]);
  if (op.scope() == Scope::Local) {
    if (kernel_[op.src[0]].kind != OpKind::Const) return fail(id, "local-length", "a local length must be a const");
    if (*length < 1 || *length > UINT32_MAX)
      return fail(id, "local-length", "a local length must be in 1..2^32-1, got " + std::to_string(*length));
    return true;
  }
  if (const auto why = not_host_evaluable(kernel_, op.src[0]))
    return fail(id, "group-length", "the host must be able to compute a group length before launch: " + *why);
  if (length && *length < 1) return fail(id, "group-length", "the group length is " + std::to_string(*length) + " (must be >= 1)");
  return true;
}

bool Verifier::check_barrier(ValueId id, const Op& op) {
  if (op.scope() != Scope::Local) return fail(id, "barrier-scope", "a barrier's scope is local");
  if (!has_local_index_)
    return fail(id, "barrier-local", "a barrier needs local threads, but the kernel has no local index");
  for (ValueId p = blocks_.parent[id]; p != kNoValue; p = blocks_.parent[p]) {
    const ValueId controller = kernel_[p].src[0];
    if (controller < varying_.size() && varying_[controller])
      return fail(id, "barrier-uniform", "the barrier is inside the " +
                                             std::string(sdk::op_kind_name(static_cast<unsigned>(kernel_[p].kind))) +
                                             " at op " + std::to_string(p) +
                                             ", whose " + (kernel_[p].kind == OpKind::If ? "condition" : "trip count") +
                                             " may differ between the threads of a group");
  }
  return true;
}

bool Verifier::check_unary(ValueId id, const Op& op) {
  if (op.code == 0 || op.code >= KILN_UNARY_COUNT) return fail(id, "unary-op", "unknown unary op " + std::to_string(op.code));
  const ValueType x = type(op.src[0]);
  if (x != type(id)) return fail(id, "unary-type", unary_name(op) + " of " + tn(x) + " gives " + tn(x) + ", not " + tn(type(id)));
  if (!sdk::unary_allowed(static_cast<unsigned>(x.dtype), op.code))
    return fail(id, "unary-type", not_defined(unary_name(op), x.dtype));
  return true;
}

bool Verifier::check_binary(ValueId id, const Op& op) {
  if (op.code == 0 || op.code >= KILN_BINARY_COUNT) return fail(id, "binary-op", "unknown binary op " + std::to_string(op.code));
  const ValueType x = type(op.src[0]);
  const ValueType y = type(op.src[1]);
  if (x != y) return fail(id, "binary-type", "operands of " + binary_name(op) + " must have one type, got " + tn(x) + " and " + tn(y));
  const ValueType result = sdk::binary_is_comparison(op.code) ? ValueType{DType::Bool, x.lanes} : x;
  if (type(id) != result) return fail(id, "binary-type", binary_name(op) + " of " + tn(x) + " gives " + tn(result) + ", not " + tn(type(id)));
  if (!sdk::binary_allowed(static_cast<unsigned>(x.dtype), op.code))
    return fail(id, "binary-type", not_defined(binary_name(op), x.dtype));
  return true;
}

bool Verifier::check_vector(ValueId id, const Op& op) {
  const ValueType v = type(op.src[0]);
  switch (op.kind) {
    case OpKind::Broadcast:
      if (v.lanes != 1 || v.dtype != op.dtype)
        return fail(id, "vector-type", "broadcast to " + tn(type(id)) + " needs a " + std::string(dtype_name(op.dtype)) + " scalar, got " + tn(v));
      return true;
    case OpKind::Insert:
      if (v != type(id)) return fail(id, "vector-type", "insert into " + tn(v) + " gives " + tn(v) + ", not " + tn(type(id)));
      if (type(op.src[1]) != ValueType{v.dtype, 1})
        return fail(id, "vector-type", "the inserted value must be a " + std::string(dtype_name(v.dtype)) + " scalar, got " + tn(type(op.src[1])));
      break;
    default:
      if (type(id) != ValueType{v.dtype, 1})
        return fail(id, "vector-type", "extract from " + tn(v) + " gives a " + std::string(dtype_name(v.dtype)) + " scalar, not " + tn(type(id)));
      break;
  }
  if (op.attr >= v.lanes) return fail(id, "vector-lane", "lane " + std::to_string(op.attr) + " of a " + std::to_string(v.lanes) + "-lane vector");
  return true;
}

}  // namespace kiln::ir::verify_detail
