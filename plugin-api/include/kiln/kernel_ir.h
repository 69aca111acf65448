/*
 * kiln/kernel_ir.h - the kernel IR as it crosses the plugin ABI (wire format).
 *
 * Part of the kiln plugin ABI, version 1. C99, no C++. Included by kiln/plugin.h;
 * a plugin never needs to include it directly.
 *
 * A kernel is a flat array of fixed-size POD ops (kiln_op) in SSA order:
 *   - an op's result is named by the op's own index in the array;
 *   - every operand names an EARLIER op (definitions before uses);
 *   - structured control flow is written as begin/end markers
 *     (LOOP ... END_LOOP, IF ... END_IF), properly nested;
 *   - a value defined inside a LOOP or IF is visible only until its END marker.
 *
 * The host (libkiln) only hands plugins kernels that passed its verifier, so a
 * plugin may rely on every rule written below. A plugin that meets an op kind,
 * op code or dtype it does not support returns KILN_STATUS_UNSUPPORTED naming
 * the op index (see kiln_compile_args.failed_op); it never crashes.
 *
 * Semantics are defined by the reference interpreter of the plugin SDK; the
 * rules below are its contract.
 *
 * ABI stability: every enum value below is frozen for ABI major 1. New values
 * may be appended in a minor version; a plugin seeing a value it does not know
 * answers KILN_STATUS_UNSUPPORTED. kiln_op's layout is frozen (32 bytes).
 */
#ifndef KILN_KERNEL_IR_H
#define KILN_KERNEL_IR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- dtypes -- */

/* Element types. 0 is never a valid dtype (a zero-filled op is invalid). */
typedef enum kiln_dtype {
  KILN_DTYPE_INVALID = 0,
  KILN_DTYPE_BF16 = 1, /* bfloat16; arithmetic as f32, result rounded to nearest even */
  KILN_DTYPE_F16 = 2,  /* IEEE binary16; arithmetic as f32, rounded to nearest even */
  KILN_DTYPE_F32 = 3,
  KILN_DTYPE_F64 = 4,
  KILN_DTYPE_U8 = 5,
  KILN_DTYPE_U16 = 6,
  KILN_DTYPE_U32 = 7,
  KILN_DTYPE_U64 = 8,
  KILN_DTYPE_I8 = 9,
  KILN_DTYPE_I16 = 10,
  KILN_DTYPE_I32 = 11,
  KILN_DTYPE_I64 = 12, /* also the index type: INDEX and LOOP values are i64 */
  KILN_DTYPE_BOOL = 13, /* one byte in memory, 0 or 1 */
  KILN_DTYPE_COUNT = 14
} kiln_dtype;

/* ---------------------------------------------------------------- op kinds -- */

typedef enum kiln_op_kind {
  KILN_OP_INVALID = 0,

  /* CONST: a scalar constant. dtype = its type, lanes = 1.
   * imm = the value's bit pattern in its own dtype, zero-extended to 64 bits
   * (f32 -> IEEE bits in the low 32 bits; i8 -1 -> 0xFF; bool -> 0 or 1). */
  KILN_OP_CONST = 1,

  /* PARAM: a launch argument. code = kiln_param_kind, dtype = element type,
   * lanes = 1, attr = argument slot (0-based; slots 0..n-1 each appear exactly
   * once; launch argument i binds to the PARAM whose slot is i).
   * imm = number of elements for GLOBAL/GLOBAL_MUT when known, 0 if unknown;
   * 0 for VARIABLE.
   * A GLOBAL/GLOBAL_MUT param's result is a memory reference, usable only as
   * the memory operand of LOAD / STORE. Aliasing: the memory bound to a
   * GLOBAL_MUT param overlaps no other param's memory (as C's `restrict`);
   * GLOBAL params may share memory with each other. Optimizations rely on
   * it; the host refuses a launch that binds a written buffer twice. A VARIABLE param's result is the
   * scalar value itself. PARAMs appear outside every LOOP and IF. */
  KILN_OP_PARAM = 2,

  /* STORAGE: kernel-internal memory. code = kiln_scope (LOCAL: shared by the
   * threads of a work-group; REGISTER: private to a thread), dtype = element
   * type, lanes = 1, imm = number of elements (> 0, a constant).
   * Result: a memory reference (as PARAM buffers). Contents start undefined.
   * STORAGE appears outside every LOOP and IF. */
  KILN_OP_STORAGE = 3,

  /* LOAD: src[0] = memory (PARAM buffer or STORAGE), src[1] = element index
   * (i64 scalar). Reads `lanes` consecutive elements [index, index+lanes).
   * dtype = the memory's element type. For lanes > 1, index is a multiple
   * of lanes (the interpreter reports a violation), unless attr is
   * KILN_ACCESS_UNALIGNED (ABI 1.1): then any element index, for a device
   * that claims KILN_FEATURE_UNALIGNED_VECTORS (CPUs, whose vector loads
   * take any address) or, for a LOAD of a PARAM buffer,
   * KILN_FEATURE_UNALIGNED_VECTOR_LOADS (GPUs, whose vector loads need
   * aligned addresses, read the aligned vectors around the elements and
   * shift); the host sends such an op nowhere else.
   * attr is 0 otherwise. Out-of-range access is a kernel bug (the interpreter reports
   * it; devices are undefined). */
  KILN_OP_LOAD = 4,

  /* STORE: src[0] = memory (GLOBAL_MUT param or STORAGE), src[1] = element
   * index (i64 scalar), src[2] = value (the memory's element type, lanes
   * consecutive elements, same alignment rule and attr as LOAD). No result;
   * dtype = value's dtype, lanes = value's lanes. */
  KILN_OP_STORE = 5,

  /* INDEX: a thread coordinate. code = kiln_scope (GROUP: work-group id on
   * grid axis attr; LOCAL: thread id within the work-group on axis attr),
   * attr = axis (0, 1 or 2), src[0] = length (i64 scalar): the number of
   * work-groups (GROUP) or of threads per group (LOCAL) on that axis.
   * dtype = I64, lanes = 1; result in [0, length).
   * A GROUP length is an expression the host can evaluate before launch:
   * CONSTs, VARIABLE params, and UNARY/BINARY/CAST over them. A LOCAL length
   * is a CONST. At most one INDEX per (scope, axis); INDEX appears outside
   * every LOOP and IF. A missing axis has length 1. */
  KILN_OP_INDEX = 6,

  /* LOOP: src[0] = trip count (i64 scalar, evaluated once on entry).
   * Result: the i64 counter, 0 .. count-1 (no iteration when count <= 0).
   * END_LOOP: src[0] = the matching LOOP. No result. */
  KILN_OP_LOOP = 7,
  KILN_OP_END_LOOP = 8,

  /* IF: src[0] = condition (bool scalar). The ops up to the matching END_IF
   * run only when it is true. END_IF: src[0] = the matching IF. No result.
   * There is no ELSE: use a second IF or SELECT. */
  KILN_OP_IF = 9,
  KILN_OP_END_IF = 10,

  /* BARRIER: code = kiln_scope LOCAL. Every thread of the work-group reaches
   * it before any goes on; LOCAL storage writes before it are visible to all
   * threads of the group after it. All threads of a group must reach the same
   * barrier (never inside an IF or LOOP whose condition or trip count differs
   * between the group's threads). */
  KILN_OP_BARRIER = 11,

  /* UNARY: code = kiln_unary_op, src[0] = x. Result dtype/lanes = x's. */
  KILN_OP_UNARY = 12,

  /* BINARY: code = kiln_binary_op, src[0] = x, src[1] = y (same dtype and
   * lanes). Result: x's dtype and lanes, except the comparisons (CMPLT,
   * CMPGT, NOT_EQ, EQ), whose result dtype is BOOL with x's lanes. */
  KILN_OP_BINARY = 13,

  /* CAST: src[0] = x. dtype = target dtype, lanes = x's lanes.
   * float -> int truncates toward zero (out of range: undefined);
   * int -> float rounds to nearest even; any -> bool is (x != 0);
   * bool -> any is 0 or 1; int -> int wraps (two's complement). */
  KILN_OP_CAST = 14,

  /* MAD: src[0] * src[1] + src[2], all of one dtype and lanes. The device
   * may fuse (one rounding) or not. */
  KILN_OP_MAD = 15,

  /* SELECT: src[0] = condition (bool, lanes 1 or equal to the result's),
   * src[1] = value if true, src[2] = value if false (same dtype and lanes). */
  KILN_OP_SELECT = 16,

  /* VEC_BROADCAST: src[0] = scalar x; result: `lanes` copies of x. */
  KILN_OP_VEC_BROADCAST = 17,

  /* VEC_INSERT: src[0] = vector v, src[1] = scalar s of v's dtype,
   * attr = lane (< lanes). Result: v with lane attr replaced by s.
   * Building a vector from scalars is a VEC_BROADCAST then VEC_INSERTs. */
  KILN_OP_VEC_INSERT = 18,

  /* VEC_EXTRACT: src[0] = vector v, attr = lane. Result: that lane (lanes 1). */
  KILN_OP_VEC_EXTRACT = 19,

  /* ---- appended in ABI 1.1: sent only to a device that claims the kind in
   * kiln_device_info.op_kind_dtypes[kind] (for the result dtype, F32). ---- */

  /* MMA: warp-level matrix multiply-accumulate, D = A * B + C, of one tile
   * per warp (32 consecutive threads of LOCAL axis 0), as PTX's mma.sync.
   * code = kiln_mma_shape, attr = the dtype of A and B (kiln_dtype, below),
   * src[0] = A, src[1] = B, src[2] = C: each thread's fragment of the tile,
   * a vector. Result: D's fragment, dtype F32, lanes 4 (C's type).
   *
   *   shape (code)        attr        A          B          C, D
   *   KILN_MMA_M16N8K16   F16/BF16    attr x 8   attr x 4   f32 x 4
   *   KILN_MMA_M16N8K8    F32 (tf32)  f32 x 4    f32 x 2    f32 x 4
   *
   * A is M x K (row major), B is K x N, C and D are M x N. The lane layout
   * (PTX ISA, "Matrix Fragments for mma.m16n8k16 / m16n8k8"): with
   * lane = thread id on LOCAL axis 0 mod 32, g = lane / 4, t = lane % 4,
   * element i of each thread's fragment holds
   *   m16n8k16  A[g + 8*((i/2)%2)][2t + i%2 + 8*(i/4)]   (i < 8)
   *             B[2t + i%2 + 8*(i/2)][g]                 (i < 4)
   *   m16n8k8   A[g + 8*(i%2)][t + 4*(i/2)]              (i < 4)
   *             B[t + 4*i][g]                            (i < 2)
   *   both      C, D[g + 8*(i/2)][2t + i%2]              (i < 4)
   *
   * Numerics: every product and sum is in f32. A and B elements are taken
   * as their dtype holds them (f16/bf16 values are exact in f32); with attr
   * F32 (tf32) each A and B element is first rounded to tf32 (10 mantissa
   * bits) to nearest, ties away from zero, as PTX cvt.rna.tf32.f32 (a device
   * emits that conversion, so inputs agree exactly). Then
   *   D[m][n] = (...((C[m][n] + A[m][0]*B[0][n]) + A[m][1]*B[1][n]) ...)
   * with each product and each sum rounded to f32, k ascending: the
   * reference interpreter computes exactly this. Hardware sums in another
   * order and precision (tensor cores add several products at once), so a
   * device's D may differ in the last bits; compare devices with a
   * tolerance.
   *
   * The op is collective over the warp: every thread of the warp executes
   * it together (it is never under an IF or LOOP whose condition or trip
   * count may differ between the threads of a warp), and the kernel's LOCAL
   * axis 0 has a multiple of 32 threads. Devices claim each shape and dtype
   * as a feature bit (KILN_FEATURE_MMA_*, below). */
  KILN_OP_MMA = 20,

  /* SUBGROUP_REDUCE: the reduction of a scalar over a subgroup, every thread
   * of the subgroup receiving it (CUDA __shfl_xor_sync, OpenCL/Vulkan
   * subgroup shuffles). code = the reduction, a kiln_binary_op: ADD, MUL,
   * MAX or MIN; attr = the subgroup width w, a power of two from 2 to 64;
   * src[0] = x, a scalar (lanes 1) of a non-bool dtype; the result has x's
   * dtype. Subgroups: the work-group's threads in linear local-index order
   * (l = x + X * (y + Y * z) for LOCAL indices x, y, z of axis lengths X, Y)
   * form consecutive subgroups of w threads, [0, w), [w, 2w), ...; the
   * work-group has a multiple of w threads. Within a subgroup, lane = l % w.
   *
   * Order (exact; the reference interpreter computes this): v = x, then for
   * m = w/2, w/4, ..., 1 (halving), every lane at once
   *     v = op(v of lane (lane & ~m), v of lane (lane | m))
   * i.e. the lower lane of each pair (lane, lane ^ m) is the left operand,
   * each step rounded to the dtype as BINARY op does. Both lanes of a pair
   * compute the same op on the same operands, so every lane ends with the
   * bitwise same value (also for MAX/MIN of -0 and +0, whatever NaNs give),
   * and lane 0's value is exactly the LOCAL tree
   *     for s = w/2, ..., 1: t[i] = op(t[i], t[i + s]) for i < s
   * (tiled_reduce with branch 2: the two forms agree bit for bit). A device
   * reproduces it with xor shuffles: y = shuffle_xor(v, m), then
   * v = (lane & m) ? op(y, v) : op(v, y).
   *
   * The op is collective over the subgroup: it is never under an IF or LOOP
   * whose condition or trip count may differ between the threads of a
   * work-group. A device claims op_kind_dtypes[KILN_OP_SUBGROUP_REDUCE] for
   * each dtype it runs and runs every width w <= its warp_size
   * (kiln_device_info, plugin.h); the host sends no wider one. */
  KILN_OP_SUBGROUP_REDUCE = 21,

  /* BF16_PAIR: two bf16 values side by side in one 32-bit word, the operand
   * form of DOT_BF16 (below). src[0] = lo, src[1] = hi, both BF16 of `lanes`
   * lanes; the result is U32 of `lanes` lanes, per lane
   *     bits(lo) | bits(hi) << 16
   * (the bf16 bit patterns; no rounding, NaNs keep their bits). */
  KILN_OP_BF16_PAIR = 22,

  /* DOT_BF16: the pairwise bf16 dot-accumulate of x86's VDPBF16PS
   * (AVX512_BF16, _mm512_dpbf16_ps). src[0] = acc, F32; src[1] = a and
   * src[2] = b, U32 words of two bf16 values each (BF16_PAIR: element 2j in
   * the low half, 2j+1 in the high half); all three and the result have the
   * same `lanes` (1..16). Per lane, exactly (the reference interpreter
   * computes this; Intel SDM, VDPBF16PS, and measured equal on AMD Zen 4):
   *     t = daz(acc)
   *     t = ftz(fma(daz(a.hi), daz(b.hi), t))
   *     t = ftz(fma(daz(a.lo), daz(b.lo), t))
   * where fma rounds once to f32, to nearest even (a bf16 product is exact in
   * f32, so this is the exact product added and rounded); daz(x) is x with a
   * subnormal replaced by a zero of its sign (inputs, acc included) and
   * ftz(x) the same for the result of each step. The high pair is added
   * first. MXCSR plays no part. A NaN result is a NaN (payload unspecified).
   * A device claims op_kind_dtypes[KILN_OP_DOT_BF16] for F32 (and
   * op_kind_dtypes[KILN_OP_BF16_PAIR] for U32) to be sent these. */
  KILN_OP_DOT_BF16 = 23,

  /* COPY_ASYNC: an asynchronous copy into LOCAL storage (PTX cp.async):
   * src[0] = LOCAL STORAGE, src[1] = element index (i64 scalar), src[2] =
   * the value, as STORE (dtype/lanes = the value's, lanes a multiple of the
   * alignment rule of LOAD; exactly 16 bytes: lanes * element size = 16).
   * No result. The copy belongs to the issuing thread's open copy group
   * (closed by COPY_COMMIT). Its elements are written at some moment
   * between the op and the COPY_WAIT of the same thread that covers its
   * group; until then no thread may read or write them (a kernel bug: the
   * reference interpreter writes them at that COPY_WAIT and, when it checks
   * storage, reports any access before). Other threads see them after the
   * COPY_WAIT and a BARRIER, as any LOCAL write.
   * A device emits it as a hardware copy when the value is a LOAD of a
   * read-only (GLOBAL) param, or SELECT(c, that LOAD, zeros) (the zeros
   * written where c is false), and may write any other value at once (a
   * correct kernel cannot tell). A device claims
   * op_kind_dtypes[KILN_OP_COPY_ASYNC] for each dtype it copies; such a
   * device runs COPY_COMMIT and COPY_WAIT too. */
  KILN_OP_COPY_ASYNC = 24,

  /* COPY_COMMIT: no operands, no result, no dtype. Closes the issuing
   * thread's open group of COPY_ASYNC ops (an empty group is allowed); a
   * later COPY_ASYNC opens the next. */
  KILN_OP_COPY_COMMIT = 25,

  /* COPY_WAIT: no operands, no result, no dtype; attr = N (0..7). The
   * thread waits until at most N of its committed copy groups, the most
   * recent ones, are pending: every copy of the older groups has written
   * its elements. Copies not yet committed are not waited for. */
  KILN_OP_COPY_WAIT = 26,

  /* LOAD_MATRIX: a warp-collective load of 8 x 8 matrices of 16-bit
   * elements from LOCAL storage (PTX ldmatrix.m8n8.b16), each thread
   * receiving the fragment an MMA operand wants. src[0] = LOCAL STORAGE of
   * a 16-bit dtype (f16, bf16, u16, i16), src[1] = this thread's row index
   * (i64 scalar, a multiple of 8): row r of matrix j is the 8 consecutive
   * elements at the index thread 8j + r of the warp gives (lane = thread id
   * on LOCAL axis 0 mod 32; lanes 8 * attr and up give none, their index is
   * not read). attr = the number of matrices, 1, 2 or 4; code = 1 for the
   * transposed form (.trans), else 0. dtype = the storage's, lanes =
   * 2 * attr. With g = lane / 4, t = lane % 4 and row(j, r) the index lane
   * 8j + r gives, element 2j + e (e = 0, 1) of the result is
   *   code 0:  memory[row(j, g) + 2t + e]
   *   code 1:  memory[row(j, 2t + e) + g]
   * e.g. A of m16n8k16 from a row-major tile with attr 4, B from a [k][n]
   * tile with code 1. Collective over the warp, as MMA (never under
   * warp-varying control flow; LOCAL axis 0 a multiple of 32 threads).
   * Sent to a device that claims op_kind_dtypes[KILN_OP_LOAD_MATRIX] for
   * the dtype. */
  KILN_OP_LOAD_MATRIX = 27,

  /* WGMMA: a warp-group matrix multiply-accumulate with A and B in LOCAL
   * storage (PTX wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16},
   * sm_90a), asynchronous like COPY_ASYNC. A warp group is 128 consecutive
   * threads of LOCAL axis 0 (4 warps; axis 0 a multiple of 128 threads).
   * src[0] = LOCAL STORAGE of dtype F16 or BF16 (or F32, the tf32 form
   * below) holding A and B (the op's
   * dtype, lanes 1); src[1] = an I64 x 2 vector (a, b): the element indices
   * of A's and B's tiles in it, the same in every thread of the warp group;
   * src[2] = the accumulator, REGISTER STORAGE of F32 with at least N / 2
   * elements (each thread's fragment of D, elements 0 .. N/2 - 1).
   * attr = N, a multiple of 8 in 8..256. No result.
   *
   * Layout (the 128-byte swizzle of the PTX "matrix descriptor", here fixed;
   * the device's LOCAL storage starts at a 1024-byte boundary). Element e of
   * the storage is kept at element swz(e) = e ^ (((e >> 6) & 7) << 3): in
   * each 8 x 64-element (8 x 128-byte) atom the 16-byte chunk index of row r
   * is XORed with r. A is 64 x 16 (M x K, K-major), B 16 x N (K x N,
   * N-major):
   *   A[m][k] = storage[swz(a + 64 m + k)]                (m < 64, k < 16)
   *   B[k][n] = storage[swz(b + 1024 (n / 64) + 64 k + n % 64)]  (n < N)
   * with a % 512 in {0, 16, 32, 48} and b % 512 == 0 (a device builds the
   * descriptors: A K-major, stride 1024 bytes between 8-row groups; B
   * N-major, 2048 bytes between 64-column atoms, 1024 between 8-k groups).
   *
   * The tf32 form: dtype F32 (storage F32; PTX
   * wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32), k 8 per op, both
   * tiles K-major (PTX has no transposed tf32 operand), the same 128-byte
   * swizzle over 4-byte elements, 32 to a row: swz4(e) = e ^ (((e >> 5) & 7)
   * << 2), and B kept as its transpose (n rows of k):
   *   A[m][k] = storage[swz4(a + 32 m + k)]   (m < 64, k < 8)
   *   B[k][n] = storage[swz4(b + 32 n + k)]   (n < N, k < 8)
   * with a % 256 and b % 256 in {0, 8, 16, 24} (both descriptors A's:
   * K-major, 1024 bytes between 8-row groups). Each A and B element is read
   * as tf32 by dropping its low 13 mantissa bits (truncation toward zero, as
   * the tensor cores read f32 bits from shared memory; a NaN stays a NaN),
   * then the sum below with k < 8.
   *
   * Fragment: with w = (thread id on axis 0 / 32) % 4, lane = thread id %
   * 32, g = lane / 4, t = lane % 4, accumulator element i (i < N / 2) is
   *   D[16 w + g + 8 ((i / 2) % 2)][8 (i / 4) + 2 t + i % 2].
   * Numerics as MMA: D[m][n] = (...((C[m][n] + A[m][0] B[0][n]) + A[m][1]
   * B[1][n]) ...), k ascending, each product and sum rounded to f32, where C
   * is the accumulator's value before the op (ops on one accumulator apply
   * in issue order).
   *
   * A from registers (code = 1, the tf32 form only; code 0 is A in LOCAL
   * as above): A's 64 x 8 tile is the warp group's fragments, kept in the
   * accumulator's storage (src[2]) at elements a .. a + 3 of each thread
   * (a = lane 0 of src[1], the same in every thread, a >= N / 2: past the
   * accumulator), b as above. With w, lane, g, t as for the accumulator
   * below, element j of thread (w, g, t)'s fragment is
   *   A[16 w + g + 8 (j % 2)][t + 4 (j / 2)],
   * read as tf32 (the low 13 mantissa bits dropped) like the LOCAL tiles
   * (PTX wgmma.mma_async...m64nNk8.f32.tf32.tf32 with A as four .b32
   * registers). The fragments are read at some moment between the op and
   * the WGMMA_WAIT that covers it, so, as the accumulator's, their elements
   * are not accessed meanwhile (the storage's other elements may be: the
   * next step's fragments); a WGMMA_FENCE comes after the last write of the
   * fragments and before the op. A device claims it with the
   * KILN_FEATURE_WGMMA_TF32_A_REGISTERS bit (with op_kind_dtypes[WGMMA] for
   * F32); the core sends code 1 to no other device.
   *
   * Asynchrony: the op joins the thread's open WGMMA group (closed by
   * WGMMA_COMMIT); it reads A and B and writes the accumulator at some
   * moment between the op and the WGMMA_WAIT of the same thread that covers
   * its group; until then no thread may write those LOCAL elements and the
   * thread may not access the accumulator (the reference interpreter does
   * the whole op at that wait and reports accumulator accesses before it).
   * A WGMMA_FENCE must come after the last BARRIER (and after the thread's
   * last write of the accumulator) before the op. Collective over the warp
   * group (never under an IF or LOOP whose condition or trip count may
   * differ between its threads). Sent to a device that claims
   * op_kind_dtypes[KILN_OP_WGMMA] for the dtype; such a device runs the
   * three ops below. */
  KILN_OP_WGMMA = 28,

  /* WGMMA_FENCE: no operands, no result, no dtype. Orders the thread's
   * earlier accesses of accumulators and the LOCAL writes made visible to it
   * (BARRIER, COPY_WAIT) before the WGMMAs that follow (PTX
   * fence.proxy.async.shared::cta; wgmma.fence.sync.aligned). Collective
   * over the warp group. */
  KILN_OP_WGMMA_FENCE = 29,

  /* WGMMA_COMMIT: no operands, no result, no dtype. Closes the thread's open
   * group of WGMMA ops (wgmma.commit_group). Collective over the warp group. */
  KILN_OP_WGMMA_COMMIT = 30,

  /* WGMMA_WAIT: no operands, no result, no dtype; attr = N (0..7). The
   * thread waits until at most N of its committed WGMMA groups, the most
   * recent, are pending (wgmma.wait_group N). Collective over the warp
   * group. */
  KILN_OP_WGMMA_WAIT = 31,

  /* PREFETCH: a hint that the thread will soon read a buffer param's
   * element: src[0] = a GLOBAL or GLOBAL_MUT param, src[1] = element index
   * (i64 scalar). No result, no effect on any result; dtype = the param's,
   * lanes = 1, code = attr = imm = 0. The index may lie outside the buffer
   * (the next row after the last): the op never faults and reads nothing
   * (the reference interpreter does nothing). A CPU brings the element's
   * cache line into its caches (C: __builtin_prefetch(p, 0, 2), x86
   * prefetcht1: the L2 and outward). A device claims
   * op_kind_dtypes[KILN_OP_PREFETCH] for each dtype it prefetches; the host
   * drops the op from kernels for a device that does not claim it. */
  KILN_OP_PREFETCH = 32,

  KILN_OP_KIND_COUNT = 33
} kiln_op_kind;

/* MMA shapes (KILN_OP_MMA code). */
typedef enum kiln_mma_shape {
  KILN_MMA_SHAPE_INVALID = 0,
  KILN_MMA_M16N8K16 = 1, /* A, B: f16 or bf16 */
  KILN_MMA_M16N8K8 = 2,  /* A, B: f32 read as tf32 */
  KILN_MMA_SHAPE_COUNT = 3
} kiln_mma_shape;

/* Feature numbers of the MMA shapes and input dtypes: they index
 * kiln_device_info.features (KILN_FEATURE_WORD / KILN_FEATURE_MASK in
 * plugin.h). A device that runs MMA claims op_kind_dtypes[KILN_OP_MMA] for
 * F32 and the bit of each shape and dtype it runs. */
#define KILN_FEATURE_MMA_M16N8K16_F16 0u
#define KILN_FEATURE_MMA_M16N8K16_BF16 1u
#define KILN_FEATURE_MMA_M16N8K8_TF32 2u
/* What a CPU device's processor has (cpuid), for the user and the
 * optimizations' choices: AVX512_BF16 (VDPBF16PS, KILN_OP_DOT_BF16 runs on
 * it where also claimed in op_kind_dtypes) and AMX-BF16 tiles (no op runs
 * on them yet). */
#define KILN_FEATURE_CPU_AVX512_BF16 3u
#define KILN_FEATURE_CPU_AMX_BF16 4u
/* The device runs WGMMA's tf32 form with A from registers (code 1). */
#define KILN_FEATURE_WGMMA_TF32_A_REGISTERS 5u
/* The device runs LOAD and STORE of lanes > 1 at any element index when
 * their attr is KILN_ACCESS_UNALIGNED (a CPU's vector loads and stores take
 * any address). */
#define KILN_FEATURE_UNALIGNED_VECTORS 6u
/* The device runs LOAD (not STORE) of lanes > 1 at any element index when
 * its attr is KILN_ACCESS_UNALIGNED and its memory is a PARAM buffer. It
 * may read the rest of the aligned vectors that hold the elements (which
 * never cross a page of the buffer's allocation) and drop it. */
#define KILN_FEATURE_UNALIGNED_VECTOR_LOADS 7u
/* LOAD and STORE attr: the index need not be a multiple of lanes. */
#define KILN_ACCESS_UNALIGNED 1u

typedef enum kiln_param_kind {
  KILN_PARAM_INVALID = 0,
  KILN_PARAM_GLOBAL = 1,     /* device buffer, read only in this kernel */
  KILN_PARAM_GLOBAL_MUT = 2, /* device buffer, read and written */
  KILN_PARAM_VARIABLE = 3    /* scalar passed by value (e.g. a dynamic size) */
} kiln_param_kind;

typedef enum kiln_scope {
  KILN_SCOPE_INVALID = 0,
  KILN_SCOPE_GROUP = 1,    /* INDEX only: work-group (grid) coordinate */
  KILN_SCOPE_LOCAL = 2,    /* INDEX: thread in group; STORAGE: shared per group; BARRIER */
  KILN_SCOPE_REGISTER = 3  /* STORAGE only: private per thread */
} kiln_scope;

/* Unary ops (KILN_OP_UNARY code). Floats use the usual libm meaning; on
 * integers NEG wraps, ABS wraps for the minimum value, BIT_NOT is ~x (on
 * BOOL: logical not); the transcendental ops and FLOOR/TRUNC/RECIP/SQRT/
 * RSQRT are float only. */
typedef enum kiln_unary_op {
  KILN_UNARY_INVALID = 0,
  KILN_UNARY_NEG = 1,
  KILN_UNARY_BIT_NOT = 2,
  KILN_UNARY_EXP = 3,
  KILN_UNARY_EXP2 = 4,
  KILN_UNARY_LN = 5,
  KILN_UNARY_LOG2 = 6,
  KILN_UNARY_RECIP = 7, /* 1 / x */
  KILN_UNARY_SQRT = 8,
  KILN_UNARY_SIN = 9,
  KILN_UNARY_COS = 10,
  KILN_UNARY_FLOOR = 11,
  KILN_UNARY_TRUNC = 12,
  KILN_UNARY_ABS = 13,
  /* ---- ABI 1.1: no KILN_CAP_UNARY bit (the 1.0 word is full); a device
   * runs them only where its unary_dtypes[] says so, else the core lowers
   * them to the ops above (docs/ir.md states each one's accuracy). ---- */
  KILN_UNARY_TANH = 14,
  KILN_UNARY_ERF = 15,
  KILN_UNARY_SIGMOID = 16, /* 1 / (1 + e^-x) */
  KILN_UNARY_RSQRT = 17,   /* 1 / sqrt(x) */
  KILN_UNARY_LOG1P = 18,   /* ln(1 + x) */
  KILN_UNARY_EXPM1 = 19,   /* e^x - 1 */
  KILN_UNARY_COUNT = 20
} kiln_unary_op;

/* Binary ops (KILN_OP_BINARY code). Integer arithmetic wraps (two's
 * complement); integer DIV truncates toward zero and MOD is the C remainder
 * (sign of x); integer x DIV 0 and x MOD 0 are 0, and MIN DIV -1 wraps to MIN
 * (MIN MOD -1 is 0): defined on every backend, never a trap. Float MOD is fmod. POW is float only. MAX/MIN are
 * (x > y ? x : y) and (x < y ? x : y); NaN handling is unspecified.
 * AND/OR are logical on BOOL and bitwise on integers; BIT_* are integer/bool.
 * SHL/SHR shift by y mod (bit width); SHR is arithmetic on signed types. */
typedef enum kiln_binary_op {
  KILN_BINARY_INVALID = 0,
  KILN_BINARY_ADD = 1,
  KILN_BINARY_SUB = 2,
  KILN_BINARY_MUL = 3,
  KILN_BINARY_DIV = 4,
  KILN_BINARY_POW = 5,
  KILN_BINARY_MOD = 6,
  KILN_BINARY_CMPLT = 7,
  KILN_BINARY_CMPGT = 8,
  KILN_BINARY_MAX = 9,
  KILN_BINARY_MIN = 10,
  KILN_BINARY_OR = 11,
  KILN_BINARY_AND = 12,
  KILN_BINARY_BIT_XOR = 13,
  KILN_BINARY_BIT_OR = 14,
  KILN_BINARY_BIT_AND = 15,
  KILN_BINARY_SHL = 16,
  KILN_BINARY_SHR = 17,
  KILN_BINARY_NOT_EQ = 18,
  KILN_BINARY_EQ = 19,
  KILN_BINARY_COUNT = 20
} kiln_binary_op;

/* ABI 1.0's capability bit of an op in kiln_device_info.dtype_ops[dtype]:
 * unary op u -> bit (u - 1), binary op b -> bit (13 + b - 1). The word is
 * full: only the ops of 1.0 (unary < 14, binary < 20) have a bit. ABI 1.1
 * states every op, these and later ones, in the per-op arrays
 * (kiln_device_info.unary_dtypes and friends, plugin.h). */
#define KILN_CAP_UNARY(u) (UINT32_C(1) << ((uint32_t)(u) - 1u))
#define KILN_CAP_BINARY(b) (UINT32_C(1) << (13u + (uint32_t)(b) - 1u))

/* Operand index meaning "no operand". */
#define KILN_NO_OPERAND UINT32_MAX

/* One op. Fixed size (32 bytes), frozen for ABI major 1. Fields a kind does
 * not use are zero (src[] entries: KILN_NO_OPERAND). */
typedef struct kiln_op {
  uint8_t kind;     /* kiln_op_kind */
  uint8_t dtype;    /* kiln_dtype: of the result, or of the memory (PARAM, STORAGE) */
  uint8_t lanes;    /* vector width of the result / access; 1 for scalars; max 16 */
  uint8_t code;     /* kind-specific: kiln_unary_op, kiln_binary_op (BINARY, SUBGROUP_REDUCE), kiln_param_kind, kiln_scope, kiln_mma_shape */
  uint32_t attr;    /* kind-specific: PARAM slot, INDEX axis, VEC_INSERT/EXTRACT lane, MMA input dtype, subgroup width */
  uint32_t src[3];  /* operands: indices of earlier ops */
  uint32_t reserved; /* zero */
  uint64_t imm;     /* kind-specific: CONST bits, PARAM/STORAGE element count */
} kiln_op;

#define KILN_MAX_LANES 16u
#define KILN_MAX_AXES 3u

/* A kernel: `n_ops` ops at `ops`. Owned by the caller; valid for the call. */
typedef struct kiln_kernel {
  size_t struct_size; /* KILN_KERNEL_STRUCT_SIZE */
  const kiln_op* ops;
  size_t n_ops;
  size_t op_size; /* sizeof(kiln_op) as the host knows it: 32 in ABI 1 */
} kiln_kernel;

#define KILN_KERNEL_STRUCT_SIZE (offsetof(kiln_kernel, op_size) + sizeof(size_t))

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KERNEL_IR_H */
