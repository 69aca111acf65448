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
  std::vector<ValueId> matches = ops_shaped_like(given, op);
  // A lowering may change an op's code (exp -> exp2): then the ops of the
  // same kind and dtype are the candidates.
  const bool same_shape = !matches.empty();
  if (!same_shape)
    for (ValueId id = 0; id < given.size(); ++id)
      if (given[id].kind == op.kind && given[id].dtype == op.dtype) matches.push_back(id);
  std::string where = " (the plugin named op " + std::to_string(error.op) + " of the lowered kernel, " + shape_of(op);
  // Error::op names an op of the kernel given, the first candidate when
  // several fit (the message lists them all); -1 when none does.
  if (matches.empty()) {
    where += ", which the lowering made: no op of the kernel given has its kind and dtype)";
    error.op = -1;
  } else if (!same_shape) {
    where += ", which the lowering made from an op of its kind and dtype: in the kernel given, op";
    for (std::size_t i = 0; i < matches.size(); ++i) where += (i ? ", " : matches.size() > 1 ? "s " : " ") + std::to_string(matches[i]);
    where += ")";
    error.op = matches[0];
  } else if (matches.size() == 1) {
    where += ")";
    error.op = matches[0];
  } else {
    where += "; in the kernel given, ops";
    for (std::size_t i = 0; i < matches.size(); ++i) where += (i ? ", " : " ") + std::to_string(matches[i]);
    where += " have that shape)";
    error.op = matches[0];
  }
  error.message += where;
  return error;
}

}  // namespace kiln::ir
