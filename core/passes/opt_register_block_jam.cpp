#include "opt_register_block_jam.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"

#include <algorithm>

namespace kiln::passes::opts::jam {

using ir::Kernel;
using ir::Op;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

std::vector<std::uint8_t> dependences(const Kernel& kernel, std::span<const ValueId> roots) {
  std::vector<std::uint8_t> deps(kernel.size(), 0);
  for (std::size_t bit = 0; bit < roots.size(); ++bit)
    if (roots[bit] < kernel.size()) deps[roots[bit]] |= static_cast<std::uint8_t>(1u << bit);
  const auto is_storage = [&](ValueId id) { return id < kernel.size() && kernel[id].kind == OpKind::Storage; };
  // Bits only ever get set, so this ends; loads that read what a later op
  // stores (loop-carried values) need the extra rounds.
  for (bool changed = true; changed;) {
    changed = false;
    for (ValueId id = 0; id < kernel.size(); ++id) {
      const Op& op = kernel[id];
      std::uint8_t d = deps[id];
      for (std::size_t i = 0; i < op.operand_count(); ++i)
        if (op.src[i] < kernel.size()) d |= deps[op.src[i]];
      if (op.kind == OpKind::Store && is_storage(op.src[0]) && (deps[op.src[0]] | d) != deps[op.src[0]]) {
        deps[op.src[0]] |= d;
        changed = true;
      }
      if (op.kind == OpKind::Storage || op.kind == OpKind::Param) continue;  // a memory's bits are its stores'
      if (d != deps[id]) {
        deps[id] = d;
        changed = true;
      }
    }
  }
  return deps;
}

// ------------------------------------------------------------ ScopedEmitter --

Value ScopedEmitter::constant(std::int64_t value) {
  // The table mirrors the blocks open now: a scope whose block was closed
  // (or replaced by another at the same depth) is dropped.
  const std::vector<ValueId>& open = out_.open_blocks();
  std::size_t keep = 1;
  while (keep < scopes_.size() && keep - 1 < open.size() && scopes_[keep].block == open[keep - 1]) ++keep;
  scopes_.resize(keep);
  for (std::size_t depth = keep - 1; depth < open.size(); ++depth) scopes_.push_back({open[depth], {}});
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope)
    if (auto found = scope->constants.find(value); found != scope->constants.end()) return found->second;
  const Value made = out_.constant_i64(value);
  scopes_.back().constants.emplace(value, made);
  return made;
}

std::optional<std::int64_t> ScopedEmitter::constant_of(Value value) const {
  if (!value.valid() || value.id >= out_.kernel().size()) return std::nullopt;
  const Op& op = out_.kernel()[value.id];
  if (op.kind != OpKind::Const || op.dtype != ir::kIndexType) return std::nullopt;
  return ir::decode_int(op.dtype, op.imm);
}

Value ScopedEmitter::affine(Value x, std::int64_t scale, std::int64_t offset) {
  if (const auto known = constant_of(x)) return constant(*known * scale + offset);
  Value result = x;
  if (scale != 1) result = out_.mul(result, constant(scale));
  if (offset != 0) result = out_.add(result, constant(offset));
  return result;
}

Value ScopedEmitter::div(Value x, std::int64_t divisor) {
  if (divisor == 1) return x;
  if (const auto known = constant_of(x)) return constant(*known / divisor);
  return out_.div(x, constant(divisor));
}

Value ScopedEmitter::mod(Value x, std::int64_t divisor) {
  if (divisor == 1) return constant(0);
  if (const auto known = constant_of(x)) return constant(*known % divisor);
  return out_.mod(x, constant(divisor));
}

Value ScopedEmitter::add(Value x, Value y) {
  const auto cx = constant_of(x), cy = constant_of(y);
  if (cx && cy) return constant(*cx + *cy);
  if (cx == 0) return y;
  if (cy == 0) return x;
  return out_.add(x, y);
}

// ------------------------------------------------------------------ Jammer --

Jammer::Jammer(const Kernel& old, std::array<ValueId, 2> axes, std::array<std::uint32_t, 2> copies)
    : old_(old), axes_(axes), copies_(copies), map_(old.size()) {
  deps_ = dependences(old, axes);
  // An axis of one copy needs no copies of what depends on it.
  const std::uint8_t tiled = (copies[0] > 1 ? kAlongM : 0) | (copies[1] > 1 ? kAlongN : 0);
  for (std::uint8_t& d : deps_) d &= tiled;
  // A store is emitted once per copy of its storage, also when its own
  // operands are shared (each copy's slot gets the value).
  for (ValueId id = 0; id < old.size(); ++id) {
    const Op& op = old[id];
    if (op.kind == OpKind::Store && op.src[0] < old.size()) deps_[id] |= deps_[op.src[0]];
  }
  const ir::Blocks blocks = ir::analyze_blocks(old);
  end_ = blocks.end;
  vector_lanes_.assign(old.size(), 1);
  for (const Op& op : old.ops)
    if ((op.kind == OpKind::Load || op.kind == OpKind::Store) && op.src[0] < old.size())
      vector_lanes_[op.src[0]] = std::max<std::uint32_t>(vector_lanes_[op.src[0]], op.lanes);
}

std::optional<std::string> Jammer::obstacle() const {
  for (ValueId id = 0; id < old_.size(); ++id) {
    const Op& op = old_[id];
    if ((op.kind == OpKind::Loop || op.kind == OpKind::If) && deps_[id] != 0)
      return "`" + ir::print_op(old_, id) + "` (op " + std::to_string(id) + ") " +
             (op.kind == OpKind::Loop ? "has a trip count" : "has a condition") +
             " that differs between the tiled threads";
    if (op.kind == OpKind::Storage && storage_copies(id) > 1 && op.imm % vector_lanes_[id] != 0)
      return "`" + ir::print_op(old_, id) + "` (op " + std::to_string(id) + ") is accessed with " +
             std::to_string(vector_lanes_[id]) + "-lane vectors and cannot be widened keeping them aligned";
  }
  return std::nullopt;
}

std::uint32_t Jammer::copy_count(std::uint8_t deps) const {
  return ((deps & kAlongM) ? copies_[0] : 1u) * ((deps & kAlongN) ? copies_[1] : 1u);
}

std::uint32_t Jammer::copy_index(std::uint8_t deps, std::uint32_t r, std::uint32_t c) const {
  const std::uint32_t row = (deps & kAlongM) ? r : 0, column = (deps & kAlongN) ? c : 0;
  return row * ((deps & kAlongN) ? copies_[1] : 1u) + column;
}

std::uint32_t Jammer::storage_copies(ValueId storage) const {
  return old_[storage].kind == OpKind::Storage ? copy_count(deps_[storage]) : 1u;
}

std::uint64_t Jammer::storage_bytes(ir::Scope scope) const {
  std::uint64_t bytes = 0;
  for (ValueId id = 0; id < old_.size(); ++id) {
    const Op& op = old_[id];
    if (op.kind == OpKind::Storage && op.scope() == scope)
      bytes += op.imm * ir::dtype_bytes(op.dtype) * storage_copies(id);
  }
  return bytes;
}

Value Jammer::value(ValueId old_id, std::uint32_t r, std::uint32_t c) const {
  if (old_id >= map_.size() || map_[old_id].empty()) return {};
  const std::vector<Value>& copies = map_[old_id];
  if (copies.size() == 1) return copies[0];
  return copies[copy_index(deps_[old_id], r, c)];
}

Value Jammer::widened_index(ValueId memory, Value index, std::uint32_t r, std::uint32_t c) {
  const std::uint32_t n = storage_copies(memory);
  if (n == 1) return index;
  const std::uint32_t copy = copy_index(deps_[memory], r, c);
  // Vector accesses need their lanes side by side: one block per copy.
  if (vector_lanes_[memory] > 1) return emit_.affine(index, 1, static_cast<std::int64_t>(copy * old_[memory].imm));
  return emit_.affine(index, n, copy);
}

ir::Kernel Jammer::run() {
  emit_range(0, static_cast<ValueId>(old_.size()));
  return out_.finish();
}

void Jammer::emit_body(ValueId block) { emit_range(block + 1, end_[block]); }

void Jammer::emit_range(ValueId first, ValueId last) {
  for (ValueId id = first; id < last && id < old_.size(); ++id) {
    const Op& op = old_[id];
    if (op.kind == OpKind::Loop && id == special_loop) {
      emit_special_loop();
      id = end_[id];
    } else if (op.kind == OpKind::Loop) {
      const Value loop = out_.loop(value(op.src[0], 0, 0));
      map_[id] = {loop};
      emit_body(id);
      out_.end_loop(loop);
      id = end_[id];
    } else if (op.kind == OpKind::If) {
      const ValueId branch = out_.if_(value(op.src[0], 0, 0));
      emit_body(id);
      out_.end_if(branch);
      id = end_[id];
    } else {
      emit_op(id);
    }
  }
}

void Jammer::emit_op(ValueId id) {
  const Op& op = old_[id];
  if (op.kind == OpKind::Index && (id == axes_[0] || id == axes_[1])) {
    map_[id] = coordinates(id == axes_[0] ? 0 : 1);
    return;
  }
  if (op.kind == OpKind::Storage) {
    Op widened = op;
    widened.imm = op.imm * storage_copies(id);
    map_[id] = {out_.append(widened)};
    return;
  }
  if (op.kind == OpKind::Barrier) {
    out_.append(op);
    return;
  }
  const std::uint8_t d = deps_[id];
  std::vector<Value> made;
  made.reserve(copy_count(d));
  for (std::uint32_t r = 0; r < ((d & kAlongM) ? copies_[0] : 1u); ++r)
    for (std::uint32_t c = 0; c < ((d & kAlongN) ? copies_[1] : 1u); ++c) {
      if (op.kind == OpKind::Load && replace_load) {
        if (std::optional<Value> replaced = replace_load(id, r, c)) {
          made.push_back(*replaced);
          continue;
        }
      }
      Op copy = op;
      for (std::size_t i = 0; i < op.operand_count(); ++i) copy.src[i] = value(op.src[i], r, c).id;
      if (op.kind == OpKind::Load || op.kind == OpKind::Store)
        copy.src[1] = widened_index(op.src[0], value(op.src[1], r, c), r, c).id;
      made.push_back(out_.append(copy));
    }
  if (op.kind == OpKind::Const && op.dtype == ir::kIndexType && out_.open_blocks().empty())
    emit_.remember(ir::decode_int(op.dtype, op.imm), made.front());
  map_[id] = std::move(made);
}

}  // namespace kiln::passes::opts::jam
