#include "kiln/ir/builder.hpp"

#include <kiln/sdk/wire.hpp>

namespace kiln::ir {

namespace {

Op make(OpKind kind, std::uint8_t code = 0, std::initializer_list<ValueId> operands = {}) {
  Op op;
  op.kind = kind;
  op.code = code;
  std::size_t i = 0;
  for (ValueId v : operands) op.src[i++] = v;
  return op;
}

template <class E>
std::uint8_t code_of(E e) {
  return static_cast<std::uint8_t>(e);
}

}  // namespace

std::optional<ValueType> inferred_type(const Kernel& kernel, const Op& op) {
  auto operand = [&](int i) -> std::optional<ValueType> {
    const ValueId id = op.src[static_cast<std::size_t>(i)];
    if (id >= kernel.size()) return std::nullopt;
    const Op& def = kernel[id];
    return ValueType{def.dtype, def.lanes};
  };
  switch (op.kind) {
    case OpKind::Index:
    case OpKind::Loop:
      return ValueType{DType::I64, 1};
    case OpKind::Load:
    case OpKind::LoadMatrix: {
      auto memory = operand(0);
      if (!memory) return std::nullopt;
      return ValueType{memory->dtype, op.lanes};
    }
    case OpKind::Prefetch: {
      auto memory = operand(0);
      if (!memory) return std::nullopt;
      return ValueType{memory->dtype, 1};
    }
    case OpKind::Store:
    case OpKind::CopyAsync:
      return operand(2);
    case OpKind::Unary:
    case OpKind::Mad:
    case OpKind::SubgroupReduce:
      return operand(0);
    case OpKind::Binary: {
      auto x = operand(0);
      if (x && sdk::binary_is_comparison(op.code)) x->dtype = DType::Bool;
      return x;
    }
    case OpKind::Select:
      return operand(1);
    case OpKind::Insert:
      return operand(0);
    case OpKind::Extract: {
      auto v = operand(0);
      if (v) v->lanes = 1;
      return v;
    }
    case OpKind::Mma:
      return ValueType{DType::F32, 4};  // D's fragment, whatever the shape
    case OpKind::Bf16Pair: {
      auto lo = operand(0);
      if (lo) lo->dtype = DType::U32;
      return lo;
    }
    case OpKind::DotBf16:
      return operand(0);
    default:
      return std::nullopt;
  }
}

Builder::Builder(Kernel start) : kernel_(std::move(start)) {
  for (ValueId id = 0; id < kernel_.size(); ++id) {
    const Op& op = kernel_[id];
    if (op.kind == OpKind::Loop || op.kind == OpKind::If) open_.push_back(id);
    if ((op.kind == OpKind::EndLoop || op.kind == OpKind::EndIf) && !open_.empty()) open_.pop_back();
    if (op.kind == OpKind::Param) {
      if (op.attr >= slot_taken_.size() && op.attr < (1u << 20)) slot_taken_.resize(op.attr + 1);
      if (op.attr < slot_taken_.size()) slot_taken_[op.attr] = true;
    }
  }
}

Value Builder::append(const Op& op) {
  const ValueId id = kernel_.next_id();
  kernel_.ops.push_back(op);
  if (op.kind == OpKind::Loop || op.kind == OpKind::If) open_.push_back(id);
  if ((op.kind == OpKind::EndLoop || op.kind == OpKind::EndIf) && !open_.empty()) open_.pop_back();
  return Value{id};
}

Value Builder::append_inferred(Op op) {
  if (auto type = inferred_type(kernel_, op)) {
    op.dtype = type->dtype;
    op.lanes = type->lanes;
  }
  return append(op);
}

ValueType Builder::type_of(Value value) const {
  if (value.id >= kernel_.size()) return {};
  const Op& op = kernel_[value.id];
  return {op.dtype, op.lanes};
}

Value Builder::param(ParamKind kind, DType dtype, std::uint64_t elements, std::optional<std::uint32_t> slot) {
  std::uint32_t chosen = 0;
  if (slot) {
    chosen = *slot;
  } else {
    while (chosen < slot_taken_.size() && slot_taken_[chosen]) ++chosen;
  }
  if (chosen < (1u << 20)) {  // slots beyond any sane kernel are left to verify()
    if (chosen >= slot_taken_.size()) slot_taken_.resize(chosen + 1);
    slot_taken_[chosen] = true;
  }
  Op op = make(OpKind::Param, code_of(kind));
  op.dtype = dtype;
  op.attr = chosen;
  op.imm = kind == ParamKind::Variable ? 0 : elements;
  return append(op);
}

Value Builder::storage(Scope scope, DType dtype, std::uint64_t elements) {
  Op op = make(OpKind::Storage, code_of(scope));
  op.dtype = dtype;
  op.imm = elements;
  return append(op);
}

Value Builder::load(Value memory, Value index, std::uint8_t lanes) {
  Op op = make(OpKind::Load, 0, {memory.id, index.id});
  op.lanes = lanes;
  return append_inferred(op);
}

void Builder::store(Value memory, Value index, Value value) {
  append_inferred(make(OpKind::Store, 0, {memory.id, index.id, value.id}));
}

Value Builder::constant_bits(DType dtype, std::uint64_t bits) {
  Op op = make(OpKind::Const);
  op.dtype = dtype;
  op.imm = bits;
  return append(op);
}

Value Builder::group_index(std::uint32_t axis, Value length) {
  Op op = make(OpKind::Index, code_of(Scope::Group), {length.id});
  op.attr = axis;
  return append_inferred(op);
}

Value Builder::local_index(std::uint32_t axis, std::uint32_t length) {
  const Value len = constant_i64(length);
  Op op = make(OpKind::Index, code_of(Scope::Local), {len.id});
  op.attr = axis;
  return append_inferred(op);
}

Value Builder::loop(Value count) { return append_inferred(make(OpKind::Loop, 0, {count.id})); }

void Builder::end_loop(Value loop) { append(make(OpKind::EndLoop, 0, {loop.id})); }

ValueId Builder::if_(Value condition) { return append(make(OpKind::If, 0, {condition.id})).id; }

void Builder::end_if(ValueId if_op) { append(make(OpKind::EndIf, 0, {if_op})); }

void Builder::end_block() {
  const ValueId innermost = open_.empty() ? kNoValue : open_.back();
  const bool is_loop = innermost != kNoValue && kernel_[innermost].kind == OpKind::Loop;
  append(make(is_loop ? OpKind::EndLoop : OpKind::EndIf, 0, {innermost}));
}

void Builder::barrier() { append(make(OpKind::Barrier, code_of(Scope::Local))); }

void Builder::copy_async(Value local, Value index, Value value) {
  append_inferred(make(OpKind::CopyAsync, 0, {local.id, index.id, value.id}));
}
Value Builder::load_matrix(Value local, Value row_index, std::uint32_t matrices, bool transposed) {
  Op op = make(OpKind::LoadMatrix, transposed ? 1 : 0, {local.id, row_index.id});
  op.attr = matrices;
  op.lanes = static_cast<std::uint8_t>(2 * matrices);
  return append_inferred(op);
}
void Builder::copy_commit() { append(make(OpKind::CopyCommit)); }
void Builder::prefetch(Value buffer, Value index) { append_inferred(make(OpKind::Prefetch, 0, {buffer.id, index.id})); }
void Builder::wgmma(Value local, Value tiles, Value accumulator, std::uint32_t n, bool a_registers) {
  Op op = make(OpKind::Wgmma, a_registers ? 1 : 0, {local.id, tiles.id, accumulator.id});
  op.attr = n;
  op.dtype = type_of(local).dtype;
  op.lanes = 1;
  append(op);
}
void Builder::wgmma_fence() { append(make(OpKind::WgmmaFence)); }
void Builder::wgmma_commit() { append(make(OpKind::WgmmaCommit)); }
void Builder::wgmma_wait(std::uint32_t pending_groups) {
  Op op = make(OpKind::WgmmaWait);
  op.attr = pending_groups;
  append(op);
}
void Builder::copy_wait(std::uint32_t pending_groups) {
  Op op = make(OpKind::CopyWait);
  op.attr = pending_groups;
  append(op);
}

Value Builder::unary(UnaryOp u, Value x) { return append_inferred(make(OpKind::Unary, code_of(u), {x.id})); }

Value Builder::binary(BinaryOp b, Value x, Value y) {
  return append_inferred(make(OpKind::Binary, code_of(b), {x.id, y.id}));
}

Value Builder::cast(DType dtype, Value x) {
  Op op = make(OpKind::Cast, 0, {x.id});
  op.dtype = dtype;
  op.lanes = type_of(x).lanes;
  return append(op);
}

Value Builder::mad(Value a, Value b, Value c) { return append_inferred(make(OpKind::Mad, 0, {a.id, b.id, c.id})); }

Value Builder::select(Value condition, Value if_true, Value if_false) {
  return append_inferred(make(OpKind::Select, 0, {condition.id, if_true.id, if_false.id}));
}

Value Builder::broadcast(Value scalar, std::uint8_t lanes) {
  Op op = make(OpKind::Broadcast, 0, {scalar.id});
  op.dtype = type_of(scalar).dtype;
  op.lanes = lanes;
  return append(op);
}

Value Builder::insert(Value vector, Value scalar, std::uint32_t lane) {
  Op op = make(OpKind::Insert, 0, {vector.id, scalar.id});
  op.attr = lane;
  return append_inferred(op);
}

Value Builder::extract(Value vector, std::uint32_t lane) {
  Op op = make(OpKind::Extract, 0, {vector.id});
  op.attr = lane;
  return append_inferred(op);
}

Value Builder::mma(MmaShape shape, Value a, Value b, Value c) {
  Op op = make(OpKind::Mma, code_of(shape), {a.id, b.id, c.id});
  op.attr = static_cast<std::uint32_t>(type_of(a).dtype);
  return append_inferred(op);
}

Value Builder::bf16_pair(Value lo, Value hi) { return append_inferred(make(OpKind::Bf16Pair, 0, {lo.id, hi.id})); }

Value Builder::dot_bf16(Value acc, Value a, Value b) {
  return append_inferred(make(OpKind::DotBf16, 0, {acc.id, a.id, b.id}));
}

Value Builder::subgroup_reduce(BinaryOp reduction, Value x, std::uint32_t width) {
  Op op = make(OpKind::SubgroupReduce, static_cast<std::uint8_t>(reduction), {x.id});
  op.attr = width;
  return append_inferred(op);
}

}  // namespace kiln::ir
