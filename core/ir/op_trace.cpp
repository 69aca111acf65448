#include "ir/op_trace.hpp"

#include <kiln/sdk/wire.hpp>

#include <string>

namespace kiln::ir {

std::vector<ValueId> ops_shaped_like(const Kernel& given, const Op& lowered) {
  std::vector<ValueId> out;
  for (ValueId id = 0; id < given.size(); ++id) {
    const Op& op = given[id];
    if (op.kind == lowered.kind && op.code == lowered.code && op.dtype == lowered.dtype) out.push_back(id);
  }
  return out;
}

namespace {

std::string shape_of(const Op& op) {
  std::string s(sdk::op_kind_name(static_cast<unsigned>(op.kind)));
  if (op.kind == OpKind::Unary) s += " " + std::string(sdk::unary_name(op.code));
  if (op.kind == OpKind::Binary) s += " " + std::string(sdk::binary_name(op.code));
  s += " " + std::string(sdk::dtype_name(static_cast<unsigned>(op.dtype)));
  if (op.lanes > 1) s += "x" + std::to_string(op.lanes);
  return s;
}

}  // namespace

Error trace_to_given(Error error, const Kernel& given, const Kernel& lowered) {
  if (error.op < 0 || static_cast<std::uint64_t>(error.op) >= lowered.size()) return error;
  const Op& op = lowered[static_cast<ValueId>(error.op)];
  const std::vector<ValueId> matches = ops_shaped_like(given, op);
  std::string where = " (the plugin named op " + std::to_string(error.op) + " of the lowered kernel, " + shape_of(op);
  if (matches.size() == 1) {
    where += ")";
    error.op = matches[0];
  } else if (matches.empty()) {
    where += ", which the lowering made: no op of the kernel given has that shape)";
  } else {
    where += "; in the kernel given, ops";
    for (std::size_t i = 0; i < matches.size(); ++i) where += (i ? ", " : " ") + std::to_string(matches[i]);
    where += " have that shape)";
  }
  error.message += where;
  return error;
}

}  // namespace kiln::ir
