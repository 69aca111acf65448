// kiln/sdk/c_emitter.hpp - C-family source code from a wire kernel.
//
// One emitter serves every plugin that compiles a C-like language (C, OpenCL C,
// CUDA, GLSL): everything that differs between the languages lives in a
// Dialect, a small table of type names, spellings and a few hooks for the
// parts that are structurally different (the kernel's signature, casts and
// literals, how a vector is loaded). The emitter itself walks the ops once and
// writes one statement per op: op i defines the variable `v<i>`.
//
// Semantics follow kernel_ir.h exactly, whatever the target compiler's flags:
//   - f16/bf16 are stored as 16-bit patterns and computed in float, rounded to
//     nearest even after every op (software conversion in the prelude, so every
//     dialect rounds bit-identically to kiln/sdk/half.hpp; a dialect may use
//     its hardware's conversions instead, Dialect::half_conversion, and
//     convert whole vectors, Dialect::half_vector (C: F16C/AVX-512F), which
//     must agree on every value but NaN: a NaN stays a NaN, its payload and
//     sign may differ, as CUDA's canonical NaN does);
//   - BOOL is one byte holding 0 or 1 in memory, and in values too unless the
//     dialect has a native bool (GLSL);
//   - integer ADD/SUB/MUL/NEG/ABS/SHL are computed in an unsigned type of at
//     least 32 bits, so they wrap without -fwrapv (and without the int promotion
//     trap of u16 * u16); shift counts are taken mod the bit width;
//   - integer DIV/MOD go through prelude helpers: by zero gives 0 and
//     MIN / -1 wraps, so a buggy kernel cannot raise SIGFPE in the host.
//
// Vector values (lanes > 1) use the dialect's vector types. Ops the dialect
// can write on whole vectors (float + - * / and MAD, bitwise ops) are emitted
// as one expression; every other vector op as a vector literal of one scalar
// expression per lane.
//
// Anything the dialect cannot express (a lane count, a LOCAL axis on a dialect
// without threads...) throws PluginError(UNSUPPORTED) naming the op; a kernel
// that breaks the wire format's rules throws PluginError(INVALID_ARGUMENT).
#pragma once

#include <kiln/plugin.h>
#include <kiln/sdk/launch_args.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::sdk {

// What the structural hooks of a dialect need to know about the kernel.
struct KernelShape {
  std::string entry;                          // function name
  std::vector<ParamSlot> params;              // by slot
  std::array<bool, 3> group_axes{};           // axes with a GROUP index
  std::array<std::int64_t, 3> local_sizes{1, 1, 1};  // LOCAL index lengths (1: none)
  bool parallel = false;                      // C: run group loops with OpenMP
  int threads = 0;                            // C: OpenMP threads (0: runtime default)
  bool uses_f64 = false;                      // OpenCL: enable cl_khr_fp64
  bool vector_math = false;                   // C: libm functions have SIMD variants (glibc libmvec)
  bool streaming_stores = false;              // C: some vector stores bypass the caches (kiln_stream64)
  bool uses_subgroups = false;                // GLSL: enable the subgroup shuffle extensions
  std::uint64_t dynamic_local_bytes = 0;      // LOCAL storage in one dynamic buffer (Dialect::dynamic_local_above)
};

struct Dialect;

// One WGMMA for Dialect::wgmma.
struct WgmmaStatement {
  std::string_view local;        // pointer expression to the LOCAL storage (A and B)
  std::string_view a, b;         // element index expressions of the tiles
  std::string_view accumulator;  // the REGISTER array (f32)
  unsigned n = 0;                // tile width
  unsigned dtype = 0;            // KILN_DTYPE_F16, _BF16 or _F32 (tf32)
  bool a_registers = false;      // tf32 code 1: A is accumulator[a .. a + 3] of each thread
};

// A vector memory access the dialect may write as one statement.
struct VectorAccess {
  std::string_view value;        // LOAD: the variable to define; STORE: the value stored
  std::string_view vector_type;  // of `value`
  std::string_view memory;       // variable naming the buffer or storage
  std::string_view index;        // first element
  unsigned dtype = 0;
  unsigned lanes = 0;
  bool store = false;
  // A 64-byte vector STORE into a large written buffer, which the dialect may
  // write as a non-temporal store (set only for dialects with
  // streaming_stores).
  bool streaming = false;
  // A LOAD at any element index (attr KILN_ACCESS_UNALIGNED; set only for a
  // LOAD of a buffer in dialects with any_index_loads).
  bool any_index = false;
};

// What Dialect::mma writes: a helper of this name and these fragment types.
struct MmaHelper {
  std::string_view name;
  unsigned shape = 0;  // kiln_mma_shape
  unsigned input = 0;  // dtype of A and B
  std::string_view a_type, b_type, c_type;
  bool raw = false;  // A and B are f16/bf16 bits (U16 vectors, Dialect::raw_halves), not float values
};

// What Dialect::shuffle_xor reads: `value` (a variable of dtype `dtype`, held
// as the dialect's value type) from the thread whose subgroup lane is this
// thread's lane ^ mask, in a subgroup of `width` threads (SUBGROUP_REDUCE,
// kernel_ir.h); `linear` is an i64 expression of the thread's linear local id.
struct SubgroupShuffle {
  unsigned dtype = 0;
  std::string_view value;
  unsigned mask = 0;
  unsigned width = 0;
  std::string_view linear;
};

// What Dialect::half_vector writes: a helper converting a whole vector of
// f16/bf16 (`dtype`) of `lanes` lanes, whose value type is `vector_type`
// (floats, as every f16/bf16 value):
//   Load:        vector_type name(const STORAGE* p)    p[0..lanes) to floats
//   Store:       void name(STORAGE* p, vector_type v)  v rounded into p[0..lanes)
//   StreamStore: the same as Store, non-temporal where it can be
//   Round:       vector_type name(vector_type v)       v rounded to the dtype
//   RoundNormal: the same as Round, for a v none of whose lanes is an f32
//                subnormal (kiln_exp_f32's results: it gives 0 below FLT_MIN)
// (STORAGE: the dialect's storage type of the dtype). It must give exactly
// the scalar conversions' values (kiln/sdk/half.hpp) for every non-NaN value,
// and a NaN for a NaN.
enum class HalfVectorOp { Load, Store, StreamStore, Round, RoundNormal };
struct HalfVector {
  std::string_view name;
  HalfVectorOp op = HalfVectorOp::Load;
  unsigned dtype = 0;
  unsigned lanes = 0;
  std::string_view vector_type;
};

// What Dialect::dot_bf16 writes: a helper of this name computing DOT_BF16
// (kernel_ir.h) on `lanes` lanes: acc_type name(acc_type acc, word_type a,
// word_type b), the words holding bf16 pairs.
struct DotBf16Helper {
  std::string_view name;
  unsigned lanes = 1;
  std::string_view acc_type, word_type;
};

struct Dialect {
  std::string_view name;      // "c", "opencl-c", "cuda", "glsl": the program_source language
  // How each dtype is held in a variable, and how its elements lie in memory
  // (f16/bf16: float values, 16-bit storage; BOOL: an 8-bit 0/1 in memory,
  // and in variables too unless native_bool).
  std::array<std::string_view, KILN_DTYPE_COUNT> value_types;
  std::array<std::string_view, KILN_DTYPE_COUNT> storage_types;
  std::uint32_t vector_lanes = 0;    // bit n: vectors of n lanes can be written
  bool whole_vector_ops = false;     // + - * / & | ^ apply to whole vectors
  std::string_view function_prefix;  // before prelude helper definitions
  std::string_view f32_suffix;       // of float literals: "f"
  std::string_view i64_suffix, u64_suffix;  // of 64-bit integer literals
  // libm-style names per unary op (index kiln_unary_op) for f32 and f64;
  // empty where the op is not a function call.
  std::array<std::string_view, KILN_UNARY_COUNT> unary_f32, unary_f64;
  std::string_view pow_f32, pow_f64, fmod_f32, fmod_f64;
  std::string_view local_storage_prefix;  // "__local ", "__shared__ " ("" in C: one thread per group)
  // Before a REGISTER array ("" where none is needed): CUDA aligns it to 16
  // bytes, as its vector accesses (16-bit rows kept as loaded, in 16-byte
  // blocks of bits) assume.
  std::string_view register_storage_prefix;
  // CUDA: when a kernel's LOCAL storage is more than this many bytes (static
  // __shared__ arrays stop at 48 KiB), it is carved out of one dynamic
  // buffer instead (`extern __shared__`, 16-byte aligned pieces), whose size
  // the launch passes: EmittedKernel::dynamic_local_bytes. 0: never.
  std::uint64_t dynamic_local_above = 0;
  bool local_storage_global = false;      // LOCAL storage is declared at file scope (GLSL's `shared`)
  std::string_view barrier;               // statement; empty: no-op (one thread per group)
  // Strictly typed languages (GLSL): BOOL values are the language's bool
  // (logical operators; converted to and from the 8-bit memory form), ...
  bool native_bool = false;
  // ... results computed in a wider type (the wrapping integer arithmetic)
  // are converted back to the result type explicitly, ...
  bool explicit_conversions = false;
  // ... and array subscripts are converted to this type ("": the i64 index).
  std::string_view subscript_type = {};
  // A 32-bit signed integer type ("int"), or "": the scalar i64 values whose
  // range the kernel proves within 32 bits (kiln/sdk/integer_ranges.hpp:
  // the indices of kernels with fewer than 2^31 elements and threads) are
  // declared with it. GPUs compute 64-bit integer ops in two instructions
  // or more; CPUs gain nothing (the C dialect leaves it empty).
  std::string_view index32_type = {};
  // C: a vector libm call goes through a helper looping over the lanes under
  // `omp simd` (so GCC calls libmvec's vector variant, e.g. _ZGVeN16v_expf)
  // when KernelShape::vector_math; otherwise one scalar call per lane.
  bool simd_function_helpers = false;
  // ... which, for a `function` and width the dialect computes on whole
  // vectors itself, does so where `condition` (a preprocessor expression)
  // holds: `statements` set `out` from `x` (both of the helper's vector
  // type), the lane loop runs elsewhere; {} for the lane loop alone;
  // nullptr: always the loop.
  struct SimdWhole {
    std::string condition, statements;
  };
  SimdWhole (*simd_function_whole)(std::string_view function, unsigned lanes) = nullptr;
  // C: 64-byte vector stores into written buffers of at least
  // kStreamingStoreBytes are non-temporal (they would only evict the caches;
  // no read-for-ownership traffic), fenced at the end of each thread's work.
  bool streaming_stores = false;
  // f16/bf16 values that are only moved (LOADed, STOREd, taken apart and put
  // together with VEC_EXTRACT/VEC_INSERT/VEC_BROADCAST, SELECTed, fed to an
  // MMA) stay in their 16-bit storage form ("raw", typed as U16): no
  // conversion to float and back per element, and whole-vector accesses.
  // Requires `mma` to take raw fragments when MmaHelper::raw is set.
  bool raw_halves = false;
  // Vector LOADs and STOREs at any element index (attr KILN_ACCESS_UNALIGNED)
  // compile to correct code: C (memcpy, unaligned intrinsics) and OpenCL
  // (vloadn/vstoren take element-aligned addresses). Elsewhere the emitter
  // refuses them (UNSUPPORTED, naming the op), but for
  bool any_index_vectors = false;
  // vector LOADs of a buffer at any element index, which vector_access
  // writes when VectorAccess::any_index is set (CUDA: the aligned vectors
  // around the elements, shifted).
  bool any_index_loads = false;

  // Structural hooks.
  // `x` as `type`; x is a primary expression or parenthesized: "(T)x", "T(x)".
  std::string (*cast)(std::string_view type, std::string_view x);
  // A CONST of dtype `dtype` with the value bits `bits` (kiln_op.imm).
  std::string (*literal)(const Dialect&, unsigned dtype, std::uint64_t bits);
  // The definition of a helper of the dialect's own, named "kiln_..." in the
  // function tables above (pow_f32, ...); nullptr: the dialect has none.
  std::string (*helper)(const Dialect&, std::string_view name) = nullptr;
  std::string (*vector_type)(const Dialect&, unsigned dtype, unsigned lanes);
  // A declaration for the prelude, or "" when the type is built in.
  std::string (*vector_typedef)(const Dialect&, unsigned dtype, unsigned lanes);
  std::string (*lane)(std::string_view vector, unsigned lane);
  // A statement for a whole-vector LOAD/STORE, or "" to go lane by lane.
  std::string (*vector_access)(const Dialect&, const VectorAccess&);
  // A vector made of one expression per lane, as the initializer of a
  // declaration `const <vector_type> v = <literal>;`. (Every lane-by-lane
  // result is built this way, never by assigning lanes: GCC 12 -O2/-O3
  // miscompiles lane stores into 4-byte vector_size types.)
  std::string (*vector_literal)(std::string_view vector_type, const std::vector<std::string>& lanes);
  // Includes, pragmas, file-scope declarations, and the bit-cast helpers
  // kiln_f32_bits/kiln_bits_f32 the shared prelude relies on (and
  // kiln_bits_f64 where the dialect's literals use it).
  std::string (*prelude)(const Dialect&, const KernelShape&);
  // Everything before the body (signature, parameters, group loops: the body
  // then reads variable params from `v<op>_in`, buffers from `v<op>`), and
  // everything after it.
  std::string (*kernel_begin)(const Dialect&, const KernelShape&);
  std::string (*kernel_end)(const Dialect&, const KernelShape&);
  // Reading a GROUP / LOCAL coordinate on an axis, as an i64 expression.
  std::string (*group_index)(unsigned axis);
  std::string (*local_index)(unsigned axis);  // nullptr: LOCAL axes (> 1) unsupported
  // The file-scope definition of the function `name`(A a, B b, C c) -> C
  // computing an MMA (kernel_ir.h, KILN_OP_MMA) of `shape` with inputs of
  // `input` dtype on the fragment types given; nullptr: the dialect has no
  // MMA (the emitter refuses the op as UNSUPPORTED).
  std::string (*mma)(const Dialect&, const MmaHelper&) = nullptr;
  // The definition of the f16/bf16 conversion `name` (kiln_bf16_to_f32,
  // kiln_f32_to_bf16, kiln_f16_to_f32 or kiln_f32_to_f16: $u16 bits <-> $f32
  // value), given `software`, the shared definition in the dialect's
  // spelling, bit-identical to kiln/sdk/half.hpp; nullptr: that one. A
  // dialect's own must give half.hpp's bits for every non-NaN value (round to
  // nearest even, subnormals, overflow to infinity) and a NaN for a NaN.
  std::string (*half_conversion)(const Dialect&, std::string_view name, std::string_view software) = nullptr;
  // The expression of a subgroup shuffle (SubgroupShuffle above), or "" where
  // the dialect cannot read that dtype or width; nullptr: the dialect has no
  // subgroup operations (the emitter refuses SUBGROUP_REDUCE as UNSUPPORTED).
  std::string (*shuffle_xor)(const Dialect&, const SubgroupShuffle&) = nullptr;
  // The file-scope definition of a whole-vector f16/bf16 conversion
  // (HalfVector above), or "" to convert lane by lane; nullptr: lane by lane
  // always. The emitter defines the scalar conversions (kiln_f16_to_f32 ...)
  // before these, so a definition may fall back on them.
  std::string (*half_vector)(const Dialect&, const HalfVector&) = nullptr;
  // The file-scope definition of a DOT_BF16 helper (DotBf16Helper above),
  // bit-identical to the interpreter; nullptr: the dialect has none (the
  // emitter refuses DOT_BF16 as UNSUPPORTED). The C dialect's uses
  // _mm512/_mm256/_mm_dpbf16_ps where the compiler targets AVX512_BF16.
  std::string (*dot_bf16)(const Dialect&, const DotBf16Helper&) = nullptr;
  // COPY_ASYNC (kernel_ir.h) as a hardware copy: the statement copying 16
  // bytes from `global` (a pointer expression into a read-only buffer) to
  // `local` (one into LOCAL storage); `source_bytes`, when not empty, an int
  // expression of 16 or 0 (0: zeros written, nothing read). nullptr: every
  // COPY_ASYNC is written as a plain STORE (which a device may do: a correct
  // kernel cannot tell), COPY_COMMIT and COPY_WAIT as nothing.
  std::string (*copy_async)(std::string_view local, std::string_view global, std::string_view source_bytes) = nullptr;
  std::string (*copy_commit)() = nullptr;
  std::string (*copy_wait)(unsigned pending_groups) = nullptr;
  // LOAD_MATRIX (kernel_ir.h): the statement loading `count` 8 x 8 matrices
  // (transposed or not) whose rows this thread addresses at `address` (a
  // pointer expression into LOCAL storage) into `registers`[0 .. count), an
  // array of unsigned int: element 2j in the low half of register j.
  // nullptr: the dialect has none (the emitter refuses the op as UNSUPPORTED).
  std::string (*load_matrix)(std::string_view registers, unsigned count, bool transposed, std::string_view address) = nullptr;
  // WGMMA (kernel_ir.h): the statement issuing one warp-group MMA; `local`
  // is the LOCAL storage's pointer (its start 1024-byte aligned), `a` and `b`
  // i64 element indices of the tiles, `accumulator` the REGISTER array.
  // nullptr: the dialect has none (the emitter refuses the WGMMA ops as
  // UNSUPPORTED).
  std::string (*wgmma)(const WgmmaStatement&) = nullptr;
  std::string (*wgmma_fence)() = nullptr;
  std::string (*wgmma_commit)() = nullptr;
  std::string (*wgmma_wait)(unsigned pending_groups) = nullptr;
  // The statements that pin `count` elements of an accumulator array in
  // place around the asynchronous ops (the compiler may not move its reads
  // and writes across them).
  std::string (*wgmma_hold)(std::string_view accumulator, unsigned count) = nullptr;
  // PREFETCH (kernel_ir.h): the statement bringing the cache line at
  // `address` (a pointer expression into a buffer param, possibly past its
  // end) closer; nullptr: PREFETCH is written as nothing (it is a hint).
  std::string (*prefetch)(std::string_view address) = nullptr;
};

// The dialects shipped with the SDK.
const Dialect& c_dialect();       // GCC/Clang C: vector_size types, group loops, OpenMP
const Dialect& opencl_dialect();  // OpenCL C 1.2
const Dialect& cuda_dialect();    // CUDA C++ for NVRTC (no headers needed)
// GLSL 4.50 compute shaders for Vulkan (glslang), with the 8/16/64-bit
// arithmetic and storage extensions. The entry point is `main`; the local
// size is a layout constant; group indices are gl_WorkGroupID (which counts
// from a vkCmdDispatchBase base). Arguments: see glsl_arguments.
const Dialect& glsl_dialect();

// Where a kernel emitted with glsl_dialect() finds its launch arguments.
// GLOBAL / GLOBAL_MUT params are storage buffers of descriptor set 0, bound
// in slot order (binding = rank among the buffer params). VARIABLE params are
// the members of one push-constant block, in slot order, std430: a 4-byte
// word each (narrower values in its low bits), 8 bytes 8-aligned for 64-bit
// dtypes.
struct GlslArgument {
  std::uint32_t binding = 0;      // buffers
  std::uint32_t push_offset = 0;  // VARIABLE params: byte offset in the block
  std::uint32_t push_bytes = 0;   // VARIABLE params: 4 or 8; 0 for buffers
};
std::vector<GlslArgument> glsl_arguments(const KernelShape& shape);  // by slot

// The smallest written buffer (its PARAM's known size) whose 64-byte vector
// stores are streaming where the dialect has streaming_stores: far beyond
// the caches a thread's outputs could stay in.
inline constexpr std::uint64_t kStreamingStoreBytes = std::uint64_t{32} << 20;

struct EmitOptions {
  std::string entry = "kiln_kernel";
  bool parallel = false;  // C: OpenMP on the group loops
  int threads = 0;        // C: num_threads clause (0: none)
  // C: declare exp/log/sin/cos/pow `omp declare simd`, so loops over them
  // vectorise into glibc's libmvec (compile with -fopenmp or -fopenmp-simd,
  // -fno-math-errno, and link -lmvec).
  bool vector_math = false;
};

struct EmittedKernel {
  std::string source;
  KernelShape shape;
  // Bytes of dynamic LOCAL memory the launch must provide
  // (Dialect::dynamic_local_above); 0: the storage is static.
  std::uint64_t dynamic_local_bytes = 0;
};

// Emits the kernel. Throws PluginError (UNSUPPORTED or INVALID_ARGUMENT)
// with failed_op set to the op at fault.
EmittedKernel emit_c_family(std::span<const kiln_op> ops, const Dialect& dialect, const EmitOptions& options = {});

// What the emitter supports, for kiln_device_info.dtype_ops: the
// KILN_CAP_UNARY/KILN_CAP_BINARY bits of `dtype` (0: dtype unsupported).
std::uint32_t c_family_dtype_ops(const Dialect& dialect, unsigned dtype);
// Whether the emitter spells unary op `op` on `dtype` (any op, those after
// ABI 1.0 included).
bool c_family_has_unary(const Dialect& dialect, unsigned op, unsigned dtype);
// Describes `dtype` in `info` as the dialect runs it: the 1.0 word
// (c_family_dtype_ops) and the unary ops after 1.0 it spells (TANH ...,
// claimed in unary_dtypes only). Every C-family plugin calls this per dtype
// it supports; the core lowers what a dtype does not claim.
void set_c_family_caps(kiln_device_info& info, const Dialect& dialect, unsigned dtype);
// kiln_device_info.vector_widths for the dialect (bit 1 always set).
std::uint32_t c_family_vector_widths(const Dialect& dialect);
// What cuda_dialect() emits on a GPU of compute capability major.minor with
// warps of `warp_size`: every dtype's ops and vector widths
// (set_c_family_caps), mma.sync with f16/bf16/tf32 inputs, cp.async and
// ldmatrix from sm_80, wgmma on sm_90 (its sm_90a target), warp shuffles
// for SUBGROUP_REDUCE where warps are 32 threads. The CUDA plugin describes
// its devices with it, and preset:h200 (kiln/passes/device_presets.hpp) an
// H200 as that plugin would.
void set_cuda_caps(kiln_device_info& info, int cc_major, int cc_minor, std::uint32_t warp_size);

}  // namespace kiln::sdk
