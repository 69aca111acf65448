// kiln/sdk/capabilities.hpp - what a device runs, as kiln_device_info states
// it: the per-op dtype masks of ABI 1.1 (op_kind_dtypes, unary_dtypes,
// binary_dtypes), the feature bits, and ABI 1.0's per-dtype words
// (dtype_ops), which 1.1 keeps for older hosts.
//
// A plugin describes its device with the set_* calls; the SDK's
// answer_device_info then writes dtype_ops from the arrays (normalize), so
// the two forms never disagree. The host reads a 1.0 plugin's info through
// normalize too, which derives the arrays from dtype_ops.
#pragma once

#include <kiln/plugin.h>

#include "kiln/sdk/op_rules.hpp"

#include <cstdint>

namespace kiln::sdk {

// Op kinds ABI 1.0 defined: a 1.0 plugin's nonzero dtype word means all of
// them run on that dtype.
inline constexpr unsigned kOpKinds1_0 = 20;  // KILN_OP_KIND_COUNT of ABI 1.0
// kUnaryOps1_0 / kBinaryOps1_0 (op_rules.hpp): the unary and binary ops
// that have a bit in ABI 1.0's dtype_ops word. Unary ops from 14 on (TANH
// ...) have none: a 1.0 plugin cannot claim them, normalize never derives
// them from a word, and a 1.1 plugin claims them with set_unary only.

static_assert(KILN_OP_KIND_COUNT <= KILN_CAP_SLOTS && KILN_UNARY_COUNT <= KILN_CAP_SLOTS &&
                  KILN_BINARY_COUNT <= KILN_CAP_SLOTS,
              "an op code outside the capability arrays: raise KILN_CAP_SLOTS in a new major");

constexpr bool in_slots(unsigned code) { return code < KILN_CAP_SLOTS; }
constexpr bool in_dtypes(unsigned dt) { return dt < 32; }

inline bool has_op_kind(const kiln_device_info& info, unsigned dt, unsigned kind) {
  return in_slots(kind) && in_dtypes(dt) && (info.op_kind_dtypes[kind] & KILN_DTYPE_BIT(dt)) != 0;
}
inline bool has_unary(const kiln_device_info& info, unsigned dt, unsigned op) {
  return in_slots(op) && in_dtypes(dt) && (info.unary_dtypes[op] & KILN_DTYPE_BIT(dt)) != 0;
}
inline bool has_binary(const kiln_device_info& info, unsigned dt, unsigned op) {
  return in_slots(op) && in_dtypes(dt) && (info.binary_dtypes[op] & KILN_DTYPE_BIT(dt)) != 0;
}
inline bool has_feature(const kiln_device_info& info, unsigned feature) {
  return KILN_FEATURE_WORD(feature) < KILN_FEATURE_WORDS &&
         (info.features[KILN_FEATURE_WORD(feature)] & KILN_FEATURE_MASK(feature)) != 0;
}
// Whether any op runs on `dt` (the dtype is supported at all).
inline bool has_dtype(const kiln_device_info& info, unsigned dt) {
  for (unsigned kind = 0; kind < KILN_CAP_SLOTS; ++kind)
    if (has_op_kind(info, dt, kind)) return true;
  return false;
}

inline void set_op_kind(kiln_device_info& info, unsigned dt, unsigned kind, bool on = true) {
  if (!in_slots(kind) || !in_dtypes(dt)) return;
  if (on) info.op_kind_dtypes[kind] |= KILN_DTYPE_BIT(dt);
  else info.op_kind_dtypes[kind] &= ~KILN_DTYPE_BIT(dt);
}
inline void set_unary(kiln_device_info& info, unsigned dt, unsigned op, bool on = true) {
  if (!in_slots(op) || !in_dtypes(dt)) return;
  if (on) info.unary_dtypes[op] |= KILN_DTYPE_BIT(dt);
  else info.unary_dtypes[op] &= ~KILN_DTYPE_BIT(dt);
}
inline void set_binary(kiln_device_info& info, unsigned dt, unsigned op, bool on = true) {
  if (!in_slots(op) || !in_dtypes(dt)) return;
  if (on) info.binary_dtypes[op] |= KILN_DTYPE_BIT(dt);
  else info.binary_dtypes[op] &= ~KILN_DTYPE_BIT(dt);
}
inline void set_feature(kiln_device_info& info, unsigned feature) {
  if (KILN_FEATURE_WORD(feature) < KILN_FEATURE_WORDS)
    info.features[KILN_FEATURE_WORD(feature)] |= KILN_FEATURE_MASK(feature);
}

// Describes dtype `dt` with a 1.0-style word (KILN_CAP_UNARY/BINARY bits):
// those unary and binary ops, and every 1.0 op kind when the word is
// nonzero. Replaces what was said of `dt` before for those ops and kinds.
inline void set_dtype_caps(kiln_device_info& info, unsigned dt, std::uint32_t legacy_bits) {
  for (unsigned kind = 1; kind < kOpKinds1_0; ++kind) set_op_kind(info, dt, kind, legacy_bits != 0);
  for (unsigned u = 1; u < kUnaryOps1_0; ++u) set_unary(info, dt, u, (legacy_bits & KILN_CAP_UNARY(u)) != 0);
  for (unsigned b = 1; b < kBinaryOps1_0; ++b) set_binary(info, dt, b, (legacy_bits & KILN_CAP_BINARY(b)) != 0);
}

// Claims, for `dt`, the unary ops appended after 1.0 (TANH ... EXPM1: no
// dtype_ops bit) for which `runs(op)` is true; the others are cleared. Call
// it after set_dtype_caps, which knows only the 1.0 ops.
template <class Runs>
void set_unary_after_1_0(kiln_device_info& info, unsigned dt, Runs runs) {
  for (unsigned u = kUnaryOps1_0; u < KILN_UNARY_COUNT; ++u) set_unary(info, dt, u, runs(u));
}

// Claims every op `dt` allows (op_rules.hpp), the ops after 1.0 included:
// what a device that runs the dtype fully (the interpreter) reports.
inline void set_all_ops(kiln_device_info& info, unsigned dt) {
  set_dtype_caps(info, dt, all_op_caps(dt));
  set_unary_after_1_0(info, dt, [dt](unsigned u) { return unary_allowed(dt, u); });
}

// Claims SUBGROUP_REDUCE (kernel_ir.h) on every dtype the device has but
// bool (its reductions, add/mul/max/min, are defined on all of them): for a
// device whose every work-group runs in subgroups of warp_size consecutive
// linear local ids (plugin.h, op_kind_dtypes). Call it after the dtypes are
// described.
inline void set_subgroup_reduce(kiln_device_info& info) {
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt)
    if (dt != KILN_DTYPE_BOOL && has_op_kind(info, dt, KILN_OP_BINARY)) set_op_kind(info, dt, KILN_OP_SUBGROUP_REDUCE);
}

// Claims DOT_BF16 (f32 results) and BF16_PAIR (u32 words) (kernel_ir.h):
// for a device that runs them bit for bit as the interpreter does.
inline void set_dot_bf16(kiln_device_info& info) {
  set_op_kind(info, KILN_DTYPE_F32, KILN_OP_DOT_BF16);
  set_op_kind(info, KILN_DTYPE_U32, KILN_OP_BF16_PAIR);
}

// Claims COPY_ASYNC (and with it COPY_COMMIT and COPY_WAIT, kernel_ir.h) on
// every dtype the device loads: for a device that copies 16 bytes from
// global into LOCAL memory asynchronously (CUDA's cp.async, sm_80+).
inline void set_copy_async(kiln_device_info& info) {
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt)
    if (has_op_kind(info, dt, KILN_OP_LOAD)) set_op_kind(info, dt, KILN_OP_COPY_ASYNC);
}

// Claims LOAD_MATRIX (kernel_ir.h) on the 16-bit dtypes the device loads:
// for a device with a warp-collective 8 x 8 matrix load (CUDA's ldmatrix).
inline void set_load_matrix(kiln_device_info& info) {
  for (unsigned dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16, KILN_DTYPE_U16, KILN_DTYPE_I16})
    if (has_op_kind(info, dt, KILN_OP_LOAD)) set_op_kind(info, dt, KILN_OP_LOAD_MATRIX);
}

// Claims WGMMA (and with it WGMMA_FENCE, _COMMIT and _WAIT, kernel_ir.h) on
// f16, bf16 and f32 (the tf32 form) where the device loads them: for a device with warp-group
// MMAs reading swizzled shared memory (CUDA's wgmma.mma_async, sm_90a),
// and the tf32 form's A from registers (KILN_FEATURE_WGMMA_TF32_A_REGISTERS:
// every wgmma.mma_async takes A from registers as well).
inline void set_wgmma(kiln_device_info& info) {
  for (unsigned dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16, KILN_DTYPE_F32})
    if (has_op_kind(info, dt, KILN_OP_LOAD)) set_op_kind(info, dt, KILN_OP_WGMMA);
  if (has_op_kind(info, KILN_DTYPE_F32, KILN_OP_WGMMA)) set_feature(info, KILN_FEATURE_WGMMA_TF32_A_REGISTERS);
}

// Claims LOAD and STORE of lanes > 1 at any element index (attr
// KILN_ACCESS_UNALIGNED): for a device whose vector accesses take any
// address, as a CPU's do.
inline void set_unaligned_vectors(kiln_device_info& info) { set_feature(info, KILN_FEATURE_UNALIGNED_VECTORS); }

// Claims LOAD (not STORE) of lanes > 1 at any element index: for a device
// whose vector loads need aligned addresses but whose compiler reads the
// aligned vectors around the elements and shifts them into place (the
// CUDA dialect's kiln_load_any).
inline void set_unaligned_vector_loads(kiln_device_info& info) {
  set_feature(info, KILN_FEATURE_UNALIGNED_VECTOR_LOADS);
}

// Claims PREFETCH (kernel_ir.h) on every dtype the device loads: for a
// device whose compiler turns it into a cache prefetch (the C plugin's
// __builtin_prefetch).
inline void set_prefetch(kiln_device_info& info) {
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt)
    if (has_op_kind(info, dt, KILN_OP_LOAD)) set_op_kind(info, dt, KILN_OP_PREFETCH);
}

// The 1.0 word of `dt` that the arrays imply.
inline std::uint32_t legacy_dtype_caps(const kiln_device_info& info, unsigned dt) {
  std::uint32_t bits = 0;
  for (unsigned u = 1; u < kUnaryOps1_0; ++u)
    if (has_unary(info, dt, u)) bits |= KILN_CAP_UNARY(u);
  for (unsigned b = 1; b < kBinaryOps1_0; ++b)
    if (has_binary(info, dt, b)) bits |= KILN_CAP_BINARY(b);
  return bits;
}

inline bool arrays_empty(const kiln_device_info& info) {
  for (unsigned i = 0; i < KILN_CAP_SLOTS; ++i)
    if (info.op_kind_dtypes[i] != 0 || info.unary_dtypes[i] != 0 || info.binary_dtypes[i] != 0) return false;
  return true;
}

// Makes the two forms agree. Info whose arrays are all empty (a 1.0 plugin,
// or a 1.1 plugin that filled only dtype_ops) gets its arrays from
// dtype_ops; otherwise dtype_ops is rewritten from the arrays.
inline void normalize_capabilities(kiln_device_info& info) {
  constexpr unsigned kWords = sizeof(info.dtype_ops) / sizeof(info.dtype_ops[0]);
  if (arrays_empty(info)) {
    for (unsigned dt = 1; dt < kWords; ++dt)
      if (info.dtype_ops[dt] != 0) set_dtype_caps(info, dt, info.dtype_ops[dt]);
    return;
  }
  for (unsigned dt = 1; dt < kWords; ++dt) info.dtype_ops[dt] = legacy_dtype_caps(info, dt);
}

}  // namespace kiln::sdk
