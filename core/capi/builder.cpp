// kiln_builder_*: a kernel op by op from C, over ir::Builder. Each call
// checks that its operands are values defined so far; the whole kernel is
// verified by kiln_builder_finish.
#include "capi/handles.hpp"

#include <kiln/ir/dtype.hpp>
#include <kiln/ir/text.hpp>
#include <kiln/ir/verify.hpp>

#include <initializer_list>

using kiln::capi::guard;
using kiln::capi::make_status;
using kiln::capi::null_argument;
using kiln::ir::Value;

namespace {

kiln_status_t* invalid(const char* function, const std::string& what) {
  return make_status(KILN_CODE_INVALID_ARGUMENT, std::string(function) + ": " + what);
}

// Each operand must name an op defined so far that has a value.
kiln_status_t* check_operands(const char* function, const kiln_builder_t* b,
                              std::initializer_list<std::pair<const char*, kiln_value_t>> operands) {
  const kiln::ir::Kernel& kernel = b->builder.kernel();
  for (const auto& [name, id] : operands) {
    if (id >= kernel.size())
      return invalid(function, std::string(name) + " %" + std::to_string(id) + " is not defined (the kernel has " +
                                   std::to_string(kernel.size()) + " ops)");
    if (!kernel[id].has_result())
      return invalid(function, std::string(name) + " %" + std::to_string(id) + " has no value: `" +
                                   kiln::ir::print_op(kernel, id) + "`");
  }
  return nullptr;
}

bool valid_dtype(uint32_t dtype) { return dtype > KILN_DTYPE_INVALID && dtype < KILN_DTYPE_COUNT; }

kiln_status_t* check_dtype(const char* function, uint32_t dtype) {
  return valid_dtype(dtype) ? nullptr : invalid(function, "dtype " + std::to_string(dtype) + " is not a kiln_dtype");
}

// The common shape of every builder call: NULL checks, then `body`, which
// returns the new value (or kNoValue for calls without one).
template <class Body>
kiln_status_t* build(const char* function, kiln_builder_t* b, kiln_value_t* out, bool wants_out, Body&& body) {
  return guard(function, [&]() -> kiln_status_t* {
    if (b == nullptr) return null_argument(function, "builder");
    if (wants_out && out == nullptr) return null_argument(function, "out");
    kiln_status_t* error = nullptr;
    const Value value = body(error);
    if (error != nullptr) return error;
    if (wants_out) *out = value.id;
    return nullptr;
  });
}

}  // namespace

extern "C" {

kiln_status_t* kiln_builder_new(kiln_builder_t** out) {
  return guard("kiln_builder_new", [&]() -> kiln_status_t* {
    if (out == nullptr) return null_argument("kiln_builder_new", "out");
    *out = new kiln_builder_t;
    return nullptr;
  });
}

void kiln_builder_free(kiln_builder_t* builder) { delete builder; }

kiln_status_t* kiln_builder_param(kiln_builder_t* b, uint32_t kind, uint32_t dtype, uint64_t elements,
                                  kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_param";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    if (kind < KILN_PARAM_GLOBAL || kind > KILN_PARAM_VARIABLE)
      return error = invalid(f, "kind " + std::to_string(kind) + " is not a kiln_param_kind"), Value{};
    if ((error = check_dtype(f, dtype))) return {};
    if (kind == KILN_PARAM_VARIABLE && elements != 0)
      return error = invalid(f, "a VARIABLE param has no elements (got " + std::to_string(elements) + ")"), Value{};
    if (!b->builder.open_blocks().empty()) return error = invalid(f, "params come before any loop or if"), Value{};
    return b->builder.param(static_cast<kiln::ir::ParamKind>(kind), static_cast<kiln::ir::DType>(dtype), elements);
  });
}

kiln_status_t* kiln_builder_storage(kiln_builder_t* b, uint32_t scope, uint32_t dtype, uint64_t elements,
                                    kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_storage";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    if (scope != KILN_SCOPE_LOCAL && scope != KILN_SCOPE_REGISTER)
      return error = invalid(f, "scope " + std::to_string(scope) + " is neither LOCAL nor REGISTER"), Value{};
    if ((error = check_dtype(f, dtype))) return {};
    if (elements == 0) return error = invalid(f, "elements is 0"), Value{};
    if (!b->builder.open_blocks().empty()) return error = invalid(f, "storage comes before any loop or if"), Value{};
    return b->builder.storage(static_cast<kiln::ir::Scope>(scope), static_cast<kiln::ir::DType>(dtype), elements);
  });
}

kiln_status_t* kiln_builder_const_f64(kiln_builder_t* b, uint32_t dtype, double value, kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_const_f64";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    if ((error = check_dtype(f, dtype))) return {};
    return b->builder.constant(static_cast<kiln::ir::DType>(dtype), value);
  });
}

kiln_status_t* kiln_builder_const_i64(kiln_builder_t* b, uint32_t dtype, int64_t value, kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_const_i64";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    if ((error = check_dtype(f, dtype))) return {};
    return b->builder.constant(static_cast<kiln::ir::DType>(dtype), value);
  });
}

kiln_status_t* kiln_builder_index(kiln_builder_t* b, uint32_t axis, kiln_value_t length, kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_index";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    if (axis >= KILN_MAX_AXES) return error = invalid(f, "axis " + std::to_string(axis) + " is not 0, 1 or 2"), Value{};
    if ((error = check_operands(f, b, {{"length", length}}))) return {};
    if (!b->builder.open_blocks().empty()) return error = invalid(f, "indices come before any loop or if"), Value{};
    return b->builder.group_index(axis, Value{length});
  });
}

kiln_status_t* kiln_builder_loop(kiln_builder_t* b, kiln_value_t count, kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_loop";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    if ((error = check_operands(f, b, {{"count", count}}))) return {};
    return b->builder.loop(Value{count});
  });
}

kiln_status_t* kiln_builder_end_loop(kiln_builder_t* b, kiln_value_t loop) {
  constexpr const char* f = "kiln_builder_end_loop";
  return build(f, b, nullptr, false, [&](kiln_status_t*& error) -> Value {
    const auto& open = b->builder.open_blocks();
    if (open.empty() || open.back() != loop || b->builder.kernel()[loop].kind != kiln::ir::OpKind::Loop)
      return error = invalid(f, "%" + std::to_string(loop) + " is not the innermost open loop"), Value{};
    b->builder.end_loop(Value{loop});
    return {};
  });
}

kiln_status_t* kiln_builder_if(kiln_builder_t* b, kiln_value_t condition, kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_if";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    if ((error = check_operands(f, b, {{"condition", condition}}))) return {};
    return Value{b->builder.if_(Value{condition})};
  });
}

kiln_status_t* kiln_builder_end_if(kiln_builder_t* b, kiln_value_t if_op) {
  constexpr const char* f = "kiln_builder_end_if";
  return build(f, b, nullptr, false, [&](kiln_status_t*& error) -> Value {
    const auto& open = b->builder.open_blocks();
    if (open.empty() || open.back() != if_op || b->builder.kernel()[if_op].kind != kiln::ir::OpKind::If)
      return error = invalid(f, "%" + std::to_string(if_op) + " is not the innermost open if"), Value{};
    b->builder.end_if(if_op);
    return {};
  });
}

kiln_status_t* kiln_builder_load(kiln_builder_t* b, kiln_value_t memory, kiln_value_t index, kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_load";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    if ((error = check_operands(f, b, {{"memory", memory}, {"index", index}}))) return {};
    return b->builder.load(Value{memory}, Value{index});
  });
}

kiln_status_t* kiln_builder_store(kiln_builder_t* b, kiln_value_t memory, kiln_value_t index, kiln_value_t value) {
  constexpr const char* f = "kiln_builder_store";
  return build(f, b, nullptr, false, [&](kiln_status_t*& error) -> Value {
    if ((error = check_operands(f, b, {{"memory", memory}, {"index", index}, {"value", value}}))) return {};
    b->builder.store(Value{memory}, Value{index}, Value{value});
    return {};
  });
}

kiln_status_t* kiln_builder_unary(kiln_builder_t* b, uint32_t op, kiln_value_t x, kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_unary";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    // Codes appended by later minors are taken as given: the verifier knows which exist.
    if (op == KILN_UNARY_INVALID || op >= KILN_CAP_SLOTS)
      return error = invalid(f, "op " + std::to_string(op) + " is not a kiln_unary_op"), Value{};
    if ((error = check_operands(f, b, {{"x", x}}))) return {};
    return b->builder.unary(static_cast<kiln::ir::UnaryOp>(op), Value{x});
  });
}

kiln_status_t* kiln_builder_binary(kiln_builder_t* b, uint32_t op, kiln_value_t x, kiln_value_t y, kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_binary";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    if (op == KILN_BINARY_INVALID || op >= KILN_CAP_SLOTS)
      return error = invalid(f, "op " + std::to_string(op) + " is not a kiln_binary_op"), Value{};
    if ((error = check_operands(f, b, {{"x", x}, {"y", y}}))) return {};
    return b->builder.binary(static_cast<kiln::ir::BinaryOp>(op), Value{x}, Value{y});
  });
}

kiln_status_t* kiln_builder_cast(kiln_builder_t* b, uint32_t dtype, kiln_value_t x, kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_cast";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    if ((error = check_dtype(f, dtype))) return {};
    if ((error = check_operands(f, b, {{"x", x}}))) return {};
    return b->builder.cast(static_cast<kiln::ir::DType>(dtype), Value{x});
  });
}

kiln_status_t* kiln_builder_select(kiln_builder_t* b, kiln_value_t condition, kiln_value_t if_true,
                                   kiln_value_t if_false, kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_select";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    if ((error = check_operands(f, b, {{"condition", condition}, {"if_true", if_true}, {"if_false", if_false}})))
      return {};
    return b->builder.select(Value{condition}, Value{if_true}, Value{if_false});
  });
}

kiln_status_t* kiln_builder_mad(kiln_builder_t* b, kiln_value_t x, kiln_value_t y, kiln_value_t z, kiln_value_t* out) {
  constexpr const char* f = "kiln_builder_mad";
  return build(f, b, out, true, [&](kiln_status_t*& error) -> Value {
    if ((error = check_operands(f, b, {{"a", x}, {"b", y}, {"c", z}}))) return {};
    return b->builder.mad(Value{x}, Value{y}, Value{z});
  });
}

kiln_status_t* kiln_builder_finish(kiln_builder_t* b, kiln_kernel_t** out) {
  return guard("kiln_builder_finish", [&]() -> kiln_status_t* {
    if (b == nullptr) return null_argument("kiln_builder_finish", "builder");
    if (out == nullptr) return null_argument("kiln_builder_finish", "out");
    while (!b->builder.open_blocks().empty()) b->builder.end_block();
    kiln::ir::Kernel kernel = b->builder.finish();
    if (kiln::Result<void> verified = kiln::ir::verify(kernel); !verified) return make_status(verified.error());
    *out = new kiln_kernel_t{std::move(kernel)};
    return nullptr;
  });
}

}  // extern "C"
