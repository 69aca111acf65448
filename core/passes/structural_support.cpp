#include "structural_support.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/verify.hpp"
#include "opt_support.hpp"

#include <string>

namespace kiln::passes::opts {

using ir::Kernel;
using ir::Op;
using ir::OpKind;
using ir::ValueId;

Result<std::vector<std::int64_t>> step_params(const OptStep& step, std::initializer_list<std::string_view> keys) {
  KILN_TRY(known_params(step, keys));
  std::vector<std::int64_t> values;
  for (std::string_view key : keys) {
    KILN_TRY_ASSIGN(const std::int64_t value, require_param(step, key));
    values.push_back(value);
  }
  return values;
}

bool is_valid(const Kernel& kernel) { return ir::verify(kernel).ok(); }

Result<void> check_input(const OptStep& step, const Kernel& kernel) {
  if (Result<void> valid = ir::verify(kernel); !valid.ok())
    return step_error(step, "the kernel is not valid: " + valid.error().to_string());
  return {};
}

Result<Kernel> checked_output(const OptStep& step, Kernel kernel) {
  if (Result<void> valid = ir::verify(kernel); !valid.ok())
    return step_error(step, "does not fit: the result would break " + valid.error().to_string());
  return kernel;
}

std::vector<LoopSite> loop_sites(const Kernel& kernel) {
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  std::vector<LoopSite> sites;
  for (ValueId id = 0; id < kernel.size(); ++id) {
    if (kernel[id].kind != OpKind::Loop) continue;
    LoopSite site;
    site.loop = id;
    site.end = blocks.end[id];
    site.count = ir::constant_int(kernel, kernel[id].src[0]);
    sites.push_back(site);
  }
  return sites;
}

std::optional<LoopSite> loop_at(const Kernel& kernel, std::int64_t position) {
  const std::vector<LoopSite> sites = loop_sites(kernel);
  if (position < 0 || position >= static_cast<std::int64_t>(sites.size())) return std::nullopt;
  const LoopSite& site = sites[static_cast<std::size_t>(position)];
  if (site.end == ir::kNoValue) return std::nullopt;
  return site;
}

Result<LoopSite> step_loop(const OptStep& step, const Kernel& kernel, std::int64_t position) {
  std::optional<LoopSite> site = loop_at(kernel, position);
  if (!site) return step_error(step, "the kernel has no LOOP number " + std::to_string(position) + " (counting from 0)");
  return *site;
}

Result<LoopSite> step_counted_loop(const OptStep& step, const Kernel& kernel, std::int64_t position) {
  KILN_TRY_ASSIGN(LoopSite site, step_loop(step, kernel, position));
  if (!site.count) return step_error(step, "the loop's count is not a constant");
  return site;
}

bool is_pure_value(const Op& op) {
  switch (op.kind) {
    case OpKind::Const: case OpKind::Unary: case OpKind::Binary: case OpKind::Cast: case OpKind::Mad:
    case OpKind::Select: case OpKind::Broadcast: case OpKind::Insert: case OpKind::Extract:
      return true;
    default:
      return false;
  }
}

std::optional<LoopSite> perfectly_nested_loop(const Kernel& kernel, std::span<const LoopSite> sites,
                                              std::size_t outer) {
  if (outer + 1 >= sites.size()) return std::nullopt;
  const LoopSite& out = sites[outer];
  const LoopSite& in = sites[outer + 1];  // the next LOOP in program order
  if (out.end == ir::kNoValue || in.end == ir::kNoValue || in.end + 1 != out.end) return std::nullopt;
  for (ValueId id = out.loop + 1; id < in.loop; ++id)
    if (!is_pure_value(kernel[id])) return std::nullopt;
  return in;
}

GroupLength group_length(const Kernel& kernel, ValueId index) {
  GroupLength length;
  length.op = kernel[index].src[0];
  length.value = ir::constant_int(kernel, length.op);
  if (length.value) return length;
  const Op& op = kernel[length.op];
  if (op.kind != OpKind::Binary || op.dtype != ir::DType::I64 || op.lanes != 1) return length;
  if (op.binary() == ir::BinaryOp::Mul) {
    for (int side = 0; side < 2; ++side) {
      const auto c = ir::constant_int(kernel, op.src[side]);
      if (c && *c >= 1) {
        length.base = op.src[1 - side];
        length.multiple = *c;
        return length;
      }
    }
  } else if (op.binary() == ir::BinaryOp::Shl) {
    const auto s = ir::constant_int(kernel, op.src[1]);
    if (s && *s >= 0 && *s < 62) {
      length.base = op.src[0];
      length.multiple = std::int64_t{1} << *s;
    }
  }
  return length;
}

bool divides(const GroupLength& length, std::int64_t factor) {
  if (factor < 1) return false;
  if (length.value) return *length.value >= factor && *length.value % factor == 0;
  return length.base != ir::kNoValue && length.multiple % factor == 0;
}

ir::Value emit_divided_length(ir::Rewriter& rw, const GroupLength& length, std::int64_t factor) {
  ir::Builder& b = rw.out();
  if (length.value) return b.constant_i64(*length.value / factor);
  const ir::Value base = rw.map(length.base);
  if (length.multiple == factor) return base;
  return b.mul(base, b.constant_i64(length.multiple / factor));
}

std::vector<bool> top_level_declarations(const Kernel& kernel) {
  std::vector<bool> keep(kernel.size(), false);
  // Operands precede their users, so one backward sweep closes the set.
  for (ValueId id = static_cast<ValueId>(kernel.size()); id-- > 0;) {
    const Op& op = kernel[id];
    if (op.kind == OpKind::Param || op.kind == OpKind::Storage || op.kind == OpKind::Index) keep[id] = true;
    if (!keep[id]) continue;
    for (ValueId v : op.operands())
      if (v < id) keep[v] = true;
  }
  return keep;
}

bool has_local_storage(const Kernel& kernel) {
  for (const Op& op : kernel.ops)
    if (op.kind == OpKind::Storage && op.scope() == ir::Scope::Local) return true;
  return false;
}

bool has_local_index(const Kernel& kernel) {
  for (const Op& op : kernel.ops)
    if (op.kind == OpKind::Index && op.scope() == ir::Scope::Local) return true;
  return false;
}

bool has_barrier(const Kernel& kernel, ValueId first, ValueId last) {
  for (ValueId id = first; id < last && id < kernel.size(); ++id)
    // Copy groups order a thread's asynchronous copies as barriers order a group.
    if (kernel[id].kind == OpKind::Barrier || kernel[id].kind == OpKind::CopyCommit || kernel[id].kind == OpKind::CopyWait ||
        kernel[id].kind == OpKind::WgmmaFence || kernel[id].kind == OpKind::WgmmaCommit || kernel[id].kind == OpKind::WgmmaWait)
      return true;
  return false;
}

void clone_ops(ir::Rewriter& rw, ValueId first, ValueId last, std::vector<ValueId>& overrides) {
  for (ValueId id = first; id < last; ++id) {
    Op op = rw.old()[id];
    for (ValueId& v : op.operands()) v = overrides[v] != ir::kNoValue ? overrides[v] : rw.map(v).id;
    overrides[id] = rw.out().append(op).id;
  }
}

void drop_range(ir::Rewriter& rw, ValueId first, ValueId last) {
  for (ValueId id = first; id <= last; ++id) rw.drop(id);
}

}  // namespace kiln::passes::opts
