// The dialect tables: C (GCC/Clang), OpenCL C and CUDA (GLSL:
// glsl_dialect.cpp). Everything that differs between the languages is here;
// the emitter core is shared.
#include "c_emitter_detail.hpp"

#include "kiln/sdk/grid.hpp"
#include "kiln/sdk/half.hpp"
#include "kiln/sdk/wire.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kiln::sdk {

namespace {

using detail::joined;
using detail::value_bytes;

// Then TANH ERF SIGMOID RSQRT LOG1P EXPM1 (ABI 1.1): libm has all but
// sigmoid and rsqrt, which are prelude helpers (detail::math_helper). The f32
// exp is the prelude's kiln_exp_f32 (c_prelude: libm's expf, or with
// vector_math an inline polynomial).
constexpr std::array<std::string_view, KILN_UNARY_COUNT> kLibmF32 = {
    "", "", "", "kiln_exp_f32", "exp2f", "logf", "log2f", "", "sqrtf", "sinf", "cosf", "floorf", "truncf", "fabsf",
    "tanhf", "erff", "kiln_sigmoid_f32", "kiln_rsqrt_f32", "log1pf", "expm1f"};
constexpr std::array<std::string_view, KILN_UNARY_COUNT> kLibmF64 = {
    "", "", "", "exp", "exp2", "log", "log2", "", "sqrt", "sin", "cos", "floor", "trunc", "fabs",
    "tanh", "erf", "kiln_sigmoid_f64", "kiln_rsqrt_f64", "log1p", "expm1"};
// CUDA's math library has rsqrtf/rsqrt (2 ulp / 1 ulp in the CUDA C
// Programming Guide's tables), the rest as libm, but f32 exp2: a prelude
// helper (cuda_helper below).
constexpr std::array<std::string_view, KILN_UNARY_COUNT> kCudaF32 = {
    "", "", "", "expf", "kiln_exp2_f32", "logf", "log2f", "", "sqrtf", "sinf", "cosf", "floorf", "truncf", "fabsf",
    "tanhf", "erff", "kiln_sigmoid_f32", "rsqrtf", "log1pf", "expm1f"};
constexpr std::array<std::string_view, KILN_UNARY_COUNT> kCudaF64 = {
    "", "", "", "exp", "exp2", "log", "log2", "", "sqrt", "sin", "cos", "floor", "trunc", "fabs",
    "tanh", "erf", "kiln_sigmoid_f64", "rsqrt", "log1p", "expm1"};

std::string lane_subscript(std::string_view v, unsigned lane) { return std::string(v) + "[" + std::to_string(lane) + "]"; }

std::string c_cast(std::string_view type, std::string_view x) { return "(" + std::string(type) + ")" + std::string(x); }

// Exact literals in every C-family language: hex floats, suffixed integers.
std::string hex_float(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a", v);
  return buffer;
}

std::string c_float_literal(const Dialect& d, float v) {
  if (!std::isfinite(v)) return "kiln_bits_f32(" + std::to_string(std::bit_cast<std::uint32_t>(v)) + "u)";
  return "(" + hex_float(static_cast<double>(v)) + std::string(d.f32_suffix) + ")";
}

std::string c_literal(const Dialect& d, unsigned dt, std::uint64_t bits) {
  const std::string type(d.value_types[dt]);
  switch (dt) {
    case KILN_DTYPE_F32: return c_float_literal(d, std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
    case KILN_DTYPE_F16: return c_float_literal(d, f16_bits_to_f32(static_cast<std::uint16_t>(bits)));
    case KILN_DTYPE_BF16: return c_float_literal(d, bf16_bits_to_f32(static_cast<std::uint16_t>(bits)));
    case KILN_DTYPE_F64: {
      const double v = std::bit_cast<double>(bits);
      if (!std::isfinite(v)) return "kiln_bits_f64(" + std::to_string(bits) + std::string(d.u64_suffix) + ")";
      return "(" + hex_float(v) + ")";
    }
    case KILN_DTYPE_BOOL: return "((" + type + ")" + (bits != 0 ? "1" : "0") + ")";
    case KILN_DTYPE_U64: return "((" + type + ")" + std::to_string(bits) + std::string(d.u64_suffix) + ")";
    case KILN_DTYPE_I64: {
      const std::int64_t v = static_cast<std::int64_t>(bits);
      const std::string sfx(d.i64_suffix);
      if (v == std::numeric_limits<std::int64_t>::min()) return "((" + type + ")(-9223372036854775807" + sfx + " - 1" + sfx + "))";
      return "((" + type + ")" + std::to_string(v) + sfx + ")";
    }
    case KILN_DTYPE_U32: return "((" + type + ")" + std::to_string(static_cast<std::uint32_t>(bits)) + "u)";
    default:  // narrow integers and i32: always within long
      return "((" + type + ")" + std::to_string(int_from_bits(bits, dt)) + ")";
  }
}

// Vector type names of our own: kiln_f32x4, kiln_u8x16, ...
std::string kiln_vector_name(const Dialect&, unsigned dt, unsigned lanes) {
  return "kiln_" + std::string(dtype_name(dt)) + "x" + std::to_string(lanes);
}

// Buffer parameter declarations as C-style pointers; variables by value in
// their storage type, named v<op>_in (the emitter converts them).
// `read_only`: what follows the `*` of a GLOBAL (read-only) buffer's pointer.
std::string pointer_params(const Dialect& d, const KernelShape& shape, std::string_view address_space,
                           std::string_view read_only = "") {
  std::string out;
  for (const ParamSlot& p : shape.params) {
    if (!out.empty()) out += ", ";
    const std::string type(d.storage_types[p.dtype]), name = "v" + std::to_string(p.op);
    if (p.kind == KILN_PARAM_VARIABLE) out += type + " " + name + "_in";
    else if (p.kind == KILN_PARAM_GLOBAL) out += std::string(address_space) + "const " + type + "*" + std::string(read_only) + " " + name;
    else out += std::string(address_space) + type + "* " + name;
  }
  return out;
}

// ===================================================================== C ==
//
// One thread per group: group axes become loops (axis 0 innermost, so
// neighbouring groups touch neighbouring memory), run in parallel with
// OpenMP and collapsed. The entry point has one signature for every kernel:
//   void entry(void* const* args, const int64_t* groups)
// args[slot] points at a buffer's bytes, or at a VARIABLE's 64-bit value
// bits (little-endian: the value is in the low bytes); groups[axis] is the
// launch's group count.

std::string c_vector_typedef(const Dialect& d, unsigned dt, unsigned lanes) {
  return "typedef " + std::string(d.value_types[dt]) + " " + kiln_vector_name(d, dt, lanes) + " __attribute__((vector_size(" +
         std::to_string(lanes * value_bytes(dt)) + ")));\n";
}

// memcpy: element-aligned vector access, whatever the vector type's alignment.
std::string c_vector_access(const Dialect&, const VectorAccess& a) {
  const std::string at = "&" + std::string(a.memory) + "[" + std::string(a.index) + "]";
  if (a.streaming) return "kiln_stream64(" + at + ", &" + std::string(a.value) + ");";
  if (a.store) return "memcpy(" + at + ", &" + std::string(a.value) + ", sizeof " + std::string(a.value) + ");";
  return std::string(a.vector_type) + " " + std::string(a.value) + "; memcpy(&" + std::string(a.value) + ", " + at + ", sizeof " +
         std::string(a.value) + ");";
}

std::string c_vector_literal(std::string_view, const std::vector<std::string>& lanes) { return "{" + joined(lanes) + "}"; }

// The f32 exp with vector_math: plain arithmetic that GCC vectorises inline
// under `omp simd` (libmvec's _ZGVeN16v_expf is a call, twice as slow in
// softmax's exponential loop: 2.1 against 4.1 G exp/s a core on Zen 4).
// exp(x) = 2^n e^r, n = round(x log2 e) (in the low bits of t, the magic
// constant 1.5 * 2^23 rounding to an integer), r = x - n ln 2 in two parts
// (Cody and Waite: 0.693359375 has 9 bits, so n times it is exact) and e^r
// Cephes' degree-7 polynomial on |r| <= ln2 / 2. 2^n is added into the
// exponent field: n = 128 meets r <= 0 (p <= 1), n = -126 meets r >= 0 (p >= 1),
// so the field stays 1..254. Within 1.01 ulp of exp over every f32 input,
// with or without contraction (checked exhaustively); results below FLT_MIN
// (x < -87.33654) are 0, above FLT_MAX inf, NaN stays NaN.
constexpr std::string_view kInlineExpF32 = R"(static inline float kiln_exp_f32(float x) {
  const float t = x * 1.44269504088896341f + 12582912.0f;
  const float n = t - 12582912.0f;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  uint32_t tb, pb;
  memcpy(&tb, &t, sizeof tb);
  memcpy(&pb, &p, sizeof pb);
  pb += tb << 23;
  float y;
  memcpy(&y, &pb, sizeof y);
  y = x < -87.33654f ? 0.0f : y;
  return x <= 88.72283f ? y : x + INFINITY;
}
)";

// The f32 exp on whole AVX-512 registers (16, 8 and 4 lanes; the narrower
// ones need AVX512VL), with a table in place of most of the polynomial:
// exp(x) = 2^(n/16) e^r, n = round(16 x log2 e), r = x - n ln2/16 in two
// parts (the first has 12 bits, so n/16 times it is exact for |n| <= 2^11),
// e^r = 1 + r + r^2 (1/2 + r/6) on |r| <= ln2/32, 2^(j/16) for j = n mod 16
// taken from a register by vpermps (which reads the low four bits of t's
// lanes), and 2^floor(n/16) applied by vscalefps. t = x log2 e + 1.5 * 2^19
// is rounded to sixteenths (its ulp), so t - 1.5 * 2^19 is n/16 exactly,
// the operand vscalefps floors, and t's low mantissa bits are n's, as
// kiln_exp_f32's t at 1.5 * 2^23 holds them: the same values as scaling n
// by 1/16, one multiply fewer (checked bit for bit over every f32 input when
// written). Six multiply-adds where kiln_exp_f32 has ten, the port it is
// bound by on Zen 4: exp-chain over 2^18 elements, two threads, f32 29.4 ->
// 24.2 us with the table, -> 21.9 us without the scaling multiply; f16 44.5
// -> 38.3 -> 36.8 us (2026-12-04). Within 1.07 ulp of
// exp over every f32 input (checked exhaustively when written: worst 1.06),
// never subnormal: below -87.33654 the result is 0, as kiln_exp_f32's (a
// result there would be below FLT_MIN), so bf16 rounding may skip its
// subnormal check (kiln_round_normal_bf16x16); x above 89 is taken as 89
// (inf either way; min(89, NaN) keeps the NaN, the second operand). Not
// kiln_exp_f32's bits: scalar code (tails, lane loops) keeps the polynomial,
// whose table-free form GCC vectorises without gathers. The 4-lane form
// computes on 8 lanes, so all three widths give the same value.
constexpr std::string_view kExp2Sixteenths =
    "static const float kiln_exp2_sixteenths[16] = {0x1p+0f, 0x1.0b5586p+0f, 0x1.172b84p+0f, 0x1.2387a6p+0f,\n"
    "  0x1.306fep+0f, 0x1.3dea64p+0f, 0x1.4bfdaep+0f, 0x1.5ab07ep+0f, 0x1.6a09e6p+0f, 0x1.7a1148p+0f, 0x1.8ace54p+0f,\n"
    "  0x1.9c4918p+0f, 0x1.ae89fap+0f, 0x1.c199bep+0f, 0x1.d5818ep+0f, 0x1.ea4afap+0f};\n";

std::string avx512_exp_f32(int bits) {
  const std::string v = "__m" + std::to_string(bits), p = "_mm" + std::to_string(bits);
  const auto c = [&](const char* value) { return p + "_set1_ps(" + value + ")"; };
  const auto fma = [&](const std::string& a, const std::string& b, const std::string& acc) {
    return p + "_fmadd_ps(" + a + ", " + b + ", " + acc + ")";
  };
  // 16 table entries: one register of 16 lanes, two of 8 (vpermt2ps picks
  // between them by bit 3 of the index).
  const std::string lookup =
      bits == 512 ? "_mm512_permutexvar_ps(_mm512_castps_si512(t), _mm512_loadu_ps(kiln_exp2_sixteenths))"
                  : "_mm256_permutex2var_ps(_mm256_loadu_ps(kiln_exp2_sixteenths), _mm256_castps_si256(t), "
                    "_mm256_loadu_ps(kiln_exp2_sixteenths + 8))";
  return "static inline " + v + " kiln_exp_f32_m" + std::to_string(bits) + "(" + v + " x) {\n" +
         "  const " + v + " a = " + p + "_min_ps(" + c("89.0f") + ", x);\n" +
         "  const " + v + " t = " + fma("a", c("0x1.715476p+0f"), c("786432.0f")) + ";\n" +
         "  const " + v + " n16 = " + p + "_sub_ps(t, " + c("786432.0f") + ");\n" +
         "  " + v + " r = " + p + "_fnmadd_ps(n16, " + c("0x1.62ep-1f") + ", a);\n" +
         "  r = " + p + "_fnmadd_ps(n16, " + c("0x1.0bfbe8p-15f") + ", r);\n" +
         "  const " + v + " q = " + fma(fma(c("0x1.555556p-3f"), "r", c("0.5f")), p + "_mul_ps(r, r)", "r") + ";\n" +
         "  const " + v + " table = " + lookup + ";\n" +
         "  return " + p + "_maskz_mov_ps(" + p + "_cmp_ps_mask(x, " + c("-87.33654f") + ", _CMP_NLT_UQ), " + p +
         "_scalef_ps(" + fma("table", "q", "table") + ", n16));\n}\n";
}

// The 4-lane form on the low half of an 8-lane register (zeros above), so
// it gives the 8- and 16-lane forms' values; Zen 4 runs 128- and 256-bit
// operations at the same rate.
constexpr std::string_view kExpF32M128 = R"(static inline __m128 kiln_exp_f32_m128(__m128 x) {
  return _mm256_castps256_ps128(kiln_exp_f32_m256(_mm256_zextps128_ps256(x)));
}
)";

// kiln_simd_exp_f32_N on whole registers (Dialect::simd_function_whole):
// the AVX-512 form above where the compiler targets it.
Dialect::SimdWhole c_simd_function_whole(std::string_view function, unsigned lanes) {
  if (function != "kiln_exp_f32" || (lanes != 4 && lanes != 8 && lanes != 16)) return {};
  const std::string bits = std::to_string(32 * lanes);
  return {lanes == 16 ? "defined(__AVX512F__)" : "defined(__AVX512F__) && defined(__AVX512VL__)",
          "  __m" + bits + " v;\n  memcpy(&v, &x, sizeof v);\n  v = kiln_exp_f32_m" + bits + "(v);\n  memcpy(&out, &v, sizeof out);\n"};
}

std::string c_prelude(const Dialect&, const KernelShape& shape) {
  std::string out = R"(#include <math.h>
#include <stdint.h>
#include <string.h>
static inline uint32_t kiln_f32_bits(float x) { uint32_t u; memcpy(&u, &x, sizeof u); return u; }
static inline float kiln_bits_f32(uint32_t u) { float x; memcpy(&x, &u, sizeof x); return x; }
static inline uint64_t kiln_f64_bits(double x) { uint64_t u; memcpy(&u, &x, sizeof u); return u; }
static inline double kiln_bits_f64(uint64_t u) { double x; memcpy(&x, &u, sizeof x); return x; }
)";
  if (shape.vector_math) {
    out += kInlineExpF32;
    out += "#if defined(__AVX512F__)\n#include <immintrin.h>\n" + std::string(kExp2Sixteenths) + avx512_exp_f32(512) +
           "#endif\n#if defined(__AVX512F__) && defined(__AVX512VL__)\n" + avx512_exp_f32(256) + std::string(kExpF32M128) +
           "#endif\n";
    // The functions every glibc libmvec has (since 2.22 on x86-64).
    for (const char* f : {"exp", "log", "sin", "cos"})
      out += std::string("#pragma omp declare simd notinbranch\nfloat ") + f + "f(float);\n#pragma omp declare simd notinbranch\ndouble " + f +
             "(double);\n";
    out += "#pragma omp declare simd notinbranch\nfloat powf(float, float);\n#pragma omp declare simd notinbranch\ndouble pow(double, double);\n";
  }
  if (!shape.vector_math) out += "static inline float kiln_exp_f32(float x) { return expf(x); }\n";
  if (shape.streaming_stores)
    // Non-temporal where the compiler targets AVX-512 and the address is
    // 64-byte aligned (a host pointer may not be); a plain copy otherwise.
    out += R"(#if defined(__AVX512F__)
#include <immintrin.h>
static inline void kiln_stream64(void* p, const void* v) {
  if (((uintptr_t)p & 63) == 0) _mm512_stream_si512((__m512i*)p, _mm512_loadu_si512(v));
  else memcpy(p, v, 64);
}
#define kiln_sfence() _mm_sfence()
#else
static inline void kiln_stream64(void* p, const void* v) { memcpy(p, v, 64); }
#define kiln_sfence() ((void)0)
#endif
)";
  return out;
}

std::string c_kernel_begin(const Dialect& d, const KernelShape& shape) {
  std::string out = "\nvoid " + shape.entry + "(void* const* kiln_args, const int64_t* kiln_groups) {\n";
  for (std::size_t slot = 0; slot < shape.params.size(); ++slot) {
    const ParamSlot& p = shape.params[slot];
    const std::string type(d.storage_types[p.dtype]), name = "v" + std::to_string(p.op), arg = "kiln_args[" + std::to_string(slot) + "]";
    if (p.kind == KILN_PARAM_VARIABLE)
      out += "  " + type + " " + name + "_in; memcpy(&" + name + "_in, " + arg + ", sizeof " + name + "_in);\n";
    else if (p.kind == KILN_PARAM_GLOBAL)
      out += "  const " + type + "* const " + name + " = (const " + type + "*)" + arg + ";\n";
    else
      out += "  " + type + "* const " + name + " = (" + type + "*)" + arg + ";\n";
  }
  int loops = 0;
  for (int axis = 2; axis >= 0; --axis) {
    if (!shape.group_axes[axis]) continue;
    out += "  const int64_t kiln_n" + std::to_string(axis) + " = kiln_groups[" + std::to_string(axis) + "];\n";
    ++loops;
  }
  if (loops == 0) return out;
  if (shape.parallel) {
    // With streaming stores each thread fences its own after its share of
    // the loop: a parallel region holding the work-shared loop, then the fence.
    const std::string threads = shape.threads > 0 ? " num_threads(" + std::to_string(shape.threads) + ")" : "";
    if (shape.streaming_stores) out += "  #pragma omp parallel" + threads + "\n  {\n  #pragma omp for schedule(static)";
    else out += "  #pragma omp parallel for schedule(static)";
    if (loops > 1) out += " collapse(" + std::to_string(loops) + ")";
    if (!shape.streaming_stores) out += threads;
    out += "\n";
  }
  for (int axis = 2; axis >= 0; --axis) {
    if (!shape.group_axes[axis]) continue;
    const std::string g = "kiln_g" + std::to_string(axis);
    out += "  for (int64_t " + g + " = 0; " + g + " < kiln_n" + std::to_string(axis) + "; ++" + g + ")";
    out += --loops == 0 ? " {\n" : "\n";
  }
  return out;
}

std::string c_kernel_end(const Dialect&, const KernelShape& shape) {
  const bool loops = shape.group_axes[0] || shape.group_axes[1] || shape.group_axes[2];
  std::string out = loops ? "  }\n" : "";
  if (shape.streaming_stores) out += "  kiln_sfence();\n";
  if (shape.streaming_stores && loops && shape.parallel) out += "  }\n";
  return out + "}\n";
}

std::string c_group_index(unsigned axis) { return "kiln_g" + std::to_string(axis); }

// Whole-vector f16/bf16 conversions (Dialect::half_vector). f16: F16C's
// vcvtph2ps / vcvtps2ph with round to nearest even in the immediate (exact
// on subnormals whatever MXCSR holds: FTZ/DAZ do not apply to them), 16
// lanes at once where the compiler targets AVX-512F, 8 or 4 with F16C alone,
// and one software conversion per lane elsewhere (chosen by the compiler's
// own macros, so a change of -march in the plugin's flags picks the right
// one). They give half.hpp's bits for every non-NaN value; a signalling f16
// NaN comes back quiet (half.hpp keeps it signalling), every other NaN as
// half.hpp gives it. bf16: half.hpp's integer rounding on whole vectors
// (GCC/Clang vector extensions), bit for bit, NaNs included; 16 lanes with
// no NaN or subnormal by AVX-512 BF16's vcvtneps2bf16 where the compiler
// targets it (bf16_fast: it reads subnormals as zero, so those vectors keep
// the integer path).
struct F16Chunk {
  unsigned lanes;
  const char *floats, *bits, *load, *store, *up, *down;
};
constexpr F16Chunk kF16Chunks[] = {
    {16, "__m512", "__m256i", "_mm256_loadu_si256((const __m256i*)($P))", "_mm256_storeu_si256((__m256i*)($P), $X)",
     "_mm512_cvtph_ps", "_mm512_cvtps_ph"},
    {8, "__m256", "__m128i", "_mm_loadu_si128((const __m128i*)($P))", "_mm_storeu_si128((__m128i*)($P), $X)",
     "_mm256_cvtph_ps", "_mm256_cvtps_ph"},
    {4, "__m128", "__m128i", "_mm_loadl_epi64((const __m128i*)($P))", "_mm_storel_epi64((__m128i*)($P), $X)",
     "_mm_cvtph_ps", "_mm_cvtps_ph"},
};

std::string with(std::string text, std::string_view p, std::string_view x = {}) {
  text = detail::replace_all(std::move(text), "$P", p);
  return detail::replace_all(std::move(text), "$X", x);
}

// The body of an f16 conversion in chunks of c.lanes lanes.
std::string f16_chunks(const HalfVector& h, const F16Chunk& c, bool stream) {
  const std::string rne = ", _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)";
  const std::string n = std::to_string(c.lanes), floats(c.floats), bits(c.bits);
  std::string body = "  for (int i = 0; i < " + std::to_string(h.lanes) + "; i += " + n + ") {\n";
  const std::string take = "    " + floats + " x; memcpy(&x, (const char*)&v + 4 * i, sizeof x);\n";
  const std::string give = "    memcpy((char*)&out + 4 * i, &x, sizeof x);\n";
  switch (h.op) {
    case HalfVectorOp::Load:
      body += "    const " + floats + " x = " + c.up + "(" + with(c.load, "p + i") + ");\n" + give;
      break;
    case HalfVectorOp::Round:
    case HalfVectorOp::RoundNormal:
      body += take + "    x = " + c.up + "(" + c.down + "(x" + rne + ");\n" + give;
      break;
    default: {
      body += take + "    const " + bits + " b = " + c.down + "(x" + rne + ";\n";
      const std::string store = with(c.store, "p + i", "b");
      if (stream && c.lanes == 16)
        body += "    if (((uintptr_t)(p + i) & 31) == 0) _mm256_stream_si256((__m256i*)(p + i), b);\n    else " + store + ";\n";
      else
        body += "    " + store + ";\n";
    }
  }
  return body + "  }\n";
}

const std::string kIntrinsics = "#if defined(__AVX__) || defined(__F16C__)\n#include <immintrin.h>\n#endif\n";

// bf16 rounding by AVX-512 BF16's vcvtneps2bf16, on 16 lanes (a zmm) or,
// with AVX-512VL, 8 (a ymm), where no lane is a NaN or a subnormal
// (vpfpclassps with 0xa1: quiet NaN, subnormal, signalling NaN): for every
// other f32 it rounds to nearest even as half.hpp does, whatever MXCSR
// holds; it reads subnormals as zero and quiets NaNs its own way, so a
// vector with such a lane takes the integer path. 8 lanes by the integer
// path alone ran 2.4x slower than 16 by this one (bf16 exp-chain over 2^18
// elements on Zen 4, two threads: 104 against 42 us).
struct Bf16Chunk {
  const char *guard, *floats, *bh, *wide, *fpclass, *convert, *widen;
};
constexpr Bf16Chunk kBf16Zmm = {"defined(__AVX512BF16__)", "__m512", "__m256bh", "__m512i", "_mm512_fpclass_ps_mask",
                                "_mm512_cvtneps_pbh", "_mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)nb), 16)"};
constexpr Bf16Chunk kBf16Ymm = {"defined(__AVX512BF16__) && defined(__AVX512VL__)", "__m256", "__m128bh", "__m256i",
                                "_mm256_fpclass_ps_mask", "_mm256_cvtneps_pbh",
                                "_mm256_slli_epi32(_mm256_cvtepu16_epi32((__m128i)nb), 16)"};
const Bf16Chunk* bf16_chunk(unsigned lanes) { return lanes == 16 ? &kBf16Zmm : lanes == 8 ? &kBf16Ymm : nullptr; }

// Opens the fast path's `#if` and `if (no NaN or subnormal lane)`, which the
// caller completes with a block and closes with `#endif`.
std::string bf16_fast(const Bf16Chunk& c) {
  return std::string("#if ") + c.guard + " && defined(__AVX512DQ__)\n  " + c.floats + " f; memcpy(&f, &v, sizeof f);\n  if (!" +
         c.fpclass + "(f, 0xa1))\n";
}
// The rounded lanes widened back to floats, into `out`.
std::string bf16_widened(const Bf16Chunk& c, const std::string& indent) {
  return indent + "const " + c.bh + " nb = " + c.convert + "(f);\n" +  //
         indent + "const " + c.wide + " x = " + c.widen + ";\n" +     //
         indent + "memcpy(&out, &x, sizeof out);\n";
}

// Scalar f16 conversions (Dialect::half_conversion): F16C's vcvtph2ps /
// vcvtps2ph on one lane where the compiler targets F16C, with round to
// nearest even in the immediate, as the vector helpers above; the shared
// software form elsewhere. The software form is branchy and stops GCC from
// vectorizing the loops around it: on c:0 a sum over 2048 rows of 2048 f16
// elements in 16 scalar lane partials took 2.1 ms with it, 0.82 ms with F16C
// (0.12 ms for bf16, whose widening is a shift and vectorizes). Same bits as
// half.hpp for every non-NaN value;
// a signalling f16 NaN comes back quiet. bf16 keeps the integer form (already
// branch-free where it matters: the widening is a shift).
std::string c_half_conversion(const Dialect& d, std::string_view name, std::string_view software) {
  const std::string fn(d.function_prefix);
  std::string f16c;
  if (name == "kiln_f16_to_f32") f16c = fn + " float kiln_f16_to_f32(uint16_t h) { return _cvtsh_ss(h); }\n";
  if (name == "kiln_f32_to_f16")
    f16c = fn + " uint16_t kiln_f32_to_f16(float v) {\n"
                "  return (uint16_t)_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);\n}\n";
  if (f16c.empty()) return std::string(software);
  return "#if defined(__F16C__)\n#include <immintrin.h>\n" + f16c + "#else\n" + std::string(software) + "#endif\n";
}

std::string c_half_vector(const Dialect&, const HalfVector& h) {
  const std::string v(h.vector_type), name(h.name), n = std::to_string(h.lanes);
  const bool f16 = h.dtype == KILN_DTYPE_F16;
  std::string head;
  switch (h.op) {
    case HalfVectorOp::Load: head = "static inline " + v + " " + name + "(const uint16_t* p) {\n  " + v + " out;\n"; break;
    case HalfVectorOp::Round:
    case HalfVectorOp::RoundNormal: head = "static inline " + v + " " + name + "(" + v + " v) {\n  " + v + " out;\n"; break;
    default: head = "static inline void " + name + "(uint16_t* p, " + v + " v) {\n";
  }
  const std::string tail = h.op == HalfVectorOp::Store || h.op == HalfVectorOp::StreamStore ? "}\n" : "  return out;\n}\n";
  const bool stream = h.op == HalfVectorOp::StreamStore;
  if (f16) {
    // Per lane: the shared software conversions.
    std::string software = "  float r[" + n + "];\n";
    switch (h.op) {
      case HalfVectorOp::Load: software += "  for (int i = 0; i < " + n + "; ++i) r[i] = kiln_f16_to_f32(p[i]);\n  memcpy(&out, r, sizeof out);\n"; break;
      case HalfVectorOp::Round:
      case HalfVectorOp::RoundNormal:
        software += "  memcpy(r, &v, sizeof r);\n  for (int i = 0; i < " + n + "; ++i) r[i] = kiln_round_f16(r[i]);\n  memcpy(&out, r, sizeof out);\n";
        break;
      default: software += "  memcpy(r, &v, sizeof r);\n  for (int i = 0; i < " + n + "; ++i) p[i] = kiln_f32_to_f16(r[i]);\n";
    }
    // The widest chunk under AVX-512F, the widest of F16C's alone otherwise.
    std::string out = kIntrinsics + head;
    bool any = false, f16c = false;
    for (const F16Chunk& c : kF16Chunks) {
      if (h.lanes % c.lanes != 0 || (f16c && c.lanes < 16)) continue;
      out += std::string(any ? "#elif" : "#if") + (c.lanes == 16 ? " defined(__AVX512F__)\n" : " defined(__F16C__)\n") +
             f16_chunks(h, c, stream);
      any = true;
      f16c = c.lanes < 16;
    }
    out += any ? "#else\n" + software + "#endif\n" : software;
    return out + tail;
  }
  // bf16: the upper half of an f32; rounding as half.hpp's f32_to_bf16_bits.
  const std::string types = "  typedef uint16_t h_t __attribute__((vector_size(" + std::to_string(2 * h.lanes) +
                            ")));\n  typedef uint32_t w_t __attribute__((vector_size(" + std::to_string(4 * h.lanes) + ")));\n";
  const std::string rounded =
      "  w_t w; memcpy(&w, &v, sizeof w);\n"
      "  const w_t nan = (w_t)((w & 0x7fffffffu) > 0x7f800000u);\n"
      "  const w_t r = (((w >> 16) | 0x40u) & nan) | (((w + 0x7fffu + ((w >> 16) & 1u)) >> 16) & ~nan);\n";
  switch (h.op) {
    case HalfVectorOp::Load: {
      const std::string portable = types + "  h_t b; memcpy(&b, p, sizeof b);\n  const w_t w = __builtin_convertvector(b, w_t) << 16;\n"
                                           "  memcpy(&out, &w, sizeof out);\n";
      if (h.lanes != 16) return head + portable + tail;
      // GCC splits the vector-extension widening into halves (5 instructions);
      // AVX-512F's vpmovzxwd does it from memory in one.
      return kIntrinsics + head + "#if defined(__AVX512F__)\n"
             "  const __m512i w = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)), 16);\n"
             "  memcpy(&out, &w, sizeof out);\n#else\n" + portable + "#endif\n" + tail;
    }
    case HalfVectorOp::Round:
    case HalfVectorOp::RoundNormal: {
      const std::string widened = rounded + "  const w_t x = r << 16;\n  memcpy(&out, &x, sizeof out);\n";
      const std::string integer = widened + tail;
      const Bf16Chunk* chunk = bf16_chunk(h.lanes);
      if (chunk == nullptr) return head + types + integer;
      // No subnormal lane: vcvtneps2bf16 gives half.hpp's bits for every
      // lane, NaNs included (checked over every f32 NaN on Zen 4), so no
      // vpfpclassps and branch (bf16 exp-chain over 2^18 elements on Zen 4,
      // two threads: 54 -> 48 us).
      if (h.op == HalfVectorOp::RoundNormal)
        return kIntrinsics + head + types + "#if " + chunk->guard + "\n  " + chunk->floats + " f; memcpy(&f, &v, sizeof f);\n" +
               bf16_widened(*chunk, "  ") + "#else\n" + widened + "#endif\n" + tail;
      return kIntrinsics + head + types + bf16_fast(*chunk) + "  {\n" + bf16_widened(*chunk, "    ") + "    return out;\n  }\n#endif\n" +
             integer;
    }
    default: {
      const Bf16Chunk* chunk = bf16_chunk(h.lanes);
      std::string out = (stream || chunk != nullptr ? kIntrinsics : std::string()) + head + types;
      // AVX-512F narrows 16 lanes in one vpmovdw (GCC's own narrowing is a permute).
      const std::string narrowed =
          h.lanes == 16 ? "#if defined(__AVX512F__)\n  __m512i wide; memcpy(&wide, &r, sizeof wide);\n"
                          "  const __m256i narrow = _mm512_cvtepi32_epi16(wide);\n  memcpy(&b, &narrow, sizeof b);\n#else\n"
                          "  b = __builtin_convertvector(r, h_t);\n#endif\n"
                        : "  b = __builtin_convertvector(r, h_t);\n";
      if (chunk != nullptr)
        out += "  h_t b;\n" + bf16_fast(*chunk) + "  {\n    const " + chunk->bh + " nb = " + chunk->convert +
               "(f);\n    memcpy(&b, &nb, sizeof b);\n  } else\n#endif\n  {\n" + rounded + narrowed + "  }\n";
      else
        out += rounded + "  const h_t b = __builtin_convertvector(r, h_t);\n";
      if (stream && h.lanes == 16)
        out += "#if defined(__AVX__)\n  if (((uintptr_t)p & 31) == 0) { __m256i x; memcpy(&x, &b, sizeof x); _mm256_stream_si256((__m256i*)p, x); return; }\n#endif\n";
      return out + "  memcpy(p, &b, sizeof b);\n" + tail;
    }
  }
}

// ================================================================ OpenCL ==

std::string cl_vector_name(const Dialect& d, unsigned dt, unsigned lanes) {
  return std::string(d.value_types[dt]) + std::to_string(lanes);
}
std::string no_typedef(const Dialect&, unsigned, unsigned) { return ""; }
std::string cl_lane(std::string_view v, unsigned lane) { return std::string(v) + ".s" + "0123456789abcdef"[lane]; }

std::string cl_vector_access(const Dialect&, const VectorAccess& a) {
  const std::string n = std::to_string(a.lanes), at = "0, " + std::string(a.memory) + " + " + std::string(a.index);
  if (a.store) return "vstore" + n + "(" + std::string(a.value) + ", " + at + ");";
  return "const " + std::string(a.vector_type) + " " + std::string(a.value) + " = vload" + n + "(" + at + ");";
}

std::string cl_vector_literal(std::string_view type, const std::vector<std::string>& lanes) {
  return "((" + std::string(type) + ")(" + joined(lanes) + "))";
}

std::string cl_prelude(const Dialect&, const KernelShape& shape) {
  std::string out;
  if (shape.uses_f64) out += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  out += R"(static inline uint kiln_f32_bits(float x) { return as_uint(x); }
static inline float kiln_bits_f32(uint u) { return as_float(u); }
)";
  if (shape.uses_f64)
    out += R"(static inline ulong kiln_f64_bits(double x) { return as_ulong(x); }
static inline double kiln_bits_f64(ulong u) { return as_double(u); }
)";
  return out;
}

// The group's size is fixed by the kernel (its LOCAL index lengths, what
// every launch passes): saying so lets a compiler budget registers for it,
// as CUDA's __launch_bounds__ does. Without it NVIDIA's OpenCL compiler
// plans for groups of up to 1024 work-items (at most 64 registers each): on
// the H200 local_tile(bm=128,bn=128,bk=8,tm=8,tn=8)'s 64 accumulators per
// work-item ran 1024^3 in 325 us on opencl:0 against 169 us on cuda:0.
std::string cl_kernel_begin(const Dialect& d, const KernelShape& shape) {
  const auto& l = shape.local_sizes;
  return "\n__kernel __attribute__((reqd_work_group_size(" + std::to_string(l[0]) + ", " + std::to_string(l[1]) + ", " +
         std::to_string(l[2]) + "))) void " + shape.entry + "(" + pointer_params(d, shape, "__global ") + ") {\n";
}
std::string close_brace(const Dialect&, const KernelShape&) { return "}\n"; }
std::string cl_group_index(unsigned axis) { return "((long)get_group_id(" + std::to_string(axis) + "))"; }
std::string cl_local_index(unsigned axis) { return "((long)get_local_id(" + std::to_string(axis) + "))"; }

// ================================================================== CUDA ==
//
// Vectors are aligned structs of arrays (CUDA's float4 family stops at 4
// lanes and has no arithmetic): one wide load or store, lanes by hand.

unsigned cuda_vector_align(unsigned dt, unsigned lanes) {
  unsigned bytes = lanes * value_bytes(dt), align = 1;
  while (align < 16 && bytes % (align * 2) == 0) align *= 2;
  return align;
}

std::string cuda_vector_typedef(const Dialect& d, unsigned dt, unsigned lanes) {
  return "struct alignas(" + std::to_string(cuda_vector_align(dt, lanes)) + ") " + kiln_vector_name(d, dt, lanes) + " { " +
         std::string(d.value_types[dt]) + " v[" + std::to_string(lanes) + "]; };\n";
}
std::string cuda_lane(std::string_view v, unsigned lane) { return std::string(v) + ".v[" + std::to_string(lane) + "]"; }
std::string cuda_vector_literal(std::string_view, const std::vector<std::string>& lanes) { return "{{" + joined(lanes) + "}}"; }

std::string cuda_vector_access(const Dialect&, const VectorAccess& a) {
  const std::string type(a.vector_type), at = "(" + std::string(a.memory) + " + " + std::string(a.index) + ")";
  if (a.store) return "*(" + type + "*)" + at + " = " + std::string(a.value) + ";";
  if (a.any_index) {  // kiln_load_any (cuda_helper): whole words, in chunks of at most 16 bytes
    const unsigned element = value_bytes(a.dtype), bytes = a.lanes * element;
    if (element > 8 || (bytes != 4 && bytes != 8 && bytes % 16 != 0)) return "";  // lane by lane
    return "const " + type + " " + std::string(a.value) + " = kiln_load_any<" + type + ", " + std::to_string(element) + ">" +
           at + ";";
  }
  return "const " + type + " " + std::string(a.value) + " = *(const " + type + "*)" + at + ";";
}

// A vector LOAD of a buffer at any element index (KILN_ACCESS_UNALIGNED;
// KILN_FEATURE_UNALIGNED_VECTOR_LOADS): a GPU's vector loads need aligned
// addresses, so each chunk of B <= 16 bytes is read as the aligned B-byte
// words around it (the second only where the elements reach into it: never
// a word the elements do not touch, so never past the buffer's allocation)
// and shifted into place, by whole words (log2(B/4) rounds of selects on
// the word offset), then by the bytes left (funnel shifts; none for 4- and
// 8-byte elements). A read-only buffer (const) is read through the
// non-coherent cache (__ldg), as its aligned loads are. rmsnorm's weights at
// n = 50257, whose rows start anywhere: two 8-byte loads and five ALU ops
// for four halves, where scalar loads took four 2-byte loads.
constexpr std::string_view kCudaLoadAny = R"(static __device__ __forceinline__ void kiln_any_words(unsigned int* w, unsigned int x) { w[0] = x; }
static __device__ __forceinline__ void kiln_any_words(unsigned int* w, uint2 x) { w[0] = x.x; w[1] = x.y; }
static __device__ __forceinline__ void kiln_any_words(unsigned int* w, uint4 x) { w[0] = x.x; w[1] = x.y; w[2] = x.z; w[3] = x.w; }
template <unsigned int B> struct kiln_any_word;
template <> struct kiln_any_word<4> { typedef unsigned int type; };
template <> struct kiln_any_word<8> { typedef uint2 type; };
template <> struct kiln_any_word<16> { typedef uint4 type; };
template <unsigned int B, unsigned int E, bool ReadOnly>
static __device__ __forceinline__ void kiln_load_any_chunk(unsigned int* r, const unsigned char* p) {
  typedef typename kiln_any_word<B>::type W;
  constexpr unsigned int kWords = B / 4;
  const unsigned int off = (unsigned int)((unsigned long long)p & (B - 1));
  const W* at = (const W*)(p - off);
  unsigned int w[2 * kWords];
  kiln_any_words(w, ReadOnly ? __ldg(at) : *at);
  if (off != 0) kiln_any_words(w + kWords, ReadOnly ? __ldg(at + 1) : at[1]);
  else
#pragma unroll
    for (unsigned int i = kWords; i < 2 * kWords; ++i) w[i] = 0u;
#pragma unroll
  for (unsigned int step = kWords / 2; step > 0; step /= 2) {
    const bool by = ((off / 4) & step) != 0;
#pragma unroll
    for (unsigned int i = 0; i + step < 2 * kWords; ++i) w[i] = by ? w[i + step] : w[i];
  }
  const unsigned int bits = (off & 3u) * 8u;
#pragma unroll
  for (unsigned int i = 0; i < kWords; ++i) r[i] = E >= 4 ? w[i] : __funnelshift_r(w[i], w[i + 1], bits);
}
template <typename V, unsigned int E, bool ReadOnly>
static __device__ __forceinline__ V kiln_load_any_bytes(const unsigned char* p) {
  constexpr unsigned int kChunk = sizeof(V) < 16 ? sizeof(V) : 16;
  unsigned int r[sizeof(V) / 4];
#pragma unroll
  for (unsigned int c = 0; c < sizeof(V) / kChunk; ++c) kiln_load_any_chunk<kChunk, E, ReadOnly>(r + c * (kChunk / 4), p + c * kChunk);
  V v;
  memcpy(&v, r, sizeof v);
  return v;
}
template <typename V, unsigned int E, typename T>
static __device__ __forceinline__ V kiln_load_any(const T* p) { return kiln_load_any_bytes<V, E, true>((const unsigned char*)p); }
template <typename V, unsigned int E, typename T>
static __device__ __forceinline__ V kiln_load_any(T* p) { return kiln_load_any_bytes<V, E, false>((const unsigned char*)p); }
)";

std::string cuda_prelude(const Dialect&, const KernelShape&) {
  return R"(static __device__ __forceinline__ unsigned int kiln_f32_bits(float x) { return __float_as_uint(x); }
static __device__ __forceinline__ float kiln_bits_f32(unsigned int u) { return __uint_as_float(u); }
static __device__ __forceinline__ unsigned long long kiln_f64_bits(double x) { return (unsigned long long)__double_as_longlong(x); }
static __device__ __forceinline__ double kiln_bits_f64(unsigned long long u) { return __longlong_as_double((long long)u); }
static __device__ __forceinline__ unsigned long long kiln_wgmma_desc(unsigned int address, unsigned int leading) {
  return (unsigned long long)((address & 0x3FFFFu) >> 4) | ((unsigned long long)leading << 16) | (64ull << 32) | (1ull << 62);
}
)";
}

// f32 exp2 as the hardware's ex2.approx.ftz.f32 (MUFU.EX2): exp2f is the
// same instruction (2 ulp in the CUDA C Programming Guide's tables) with a
// fix-up for results below 2^-126, three more instructions an exp on sm_90
// (FSETP and two predicated FMULs), for subnormal results, which kiln's
// accuracy rules let a device flush to zero (docs/ir.md). exp lowers to
// exp2 on a device with a native exp2 (finalize's exp_base): softmax's
// kernel at n = 50257 in f16 (the row in LOCAL memory, blocks of 4, 1024
// threads) went from 1672 SASS instructions to 1484.
std::string cuda_helper(const Dialect& d, std::string_view name) {
  if (name == "kiln_exp2_f32")
    return "static __device__ __forceinline__ float kiln_exp2_f32(float x) {\n"
           "  float y;\n"
           "  asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x));\n"
           "  return y;\n"
           "}\n";
  if (name == "kiln_load_any") return std::string(kCudaLoadAny);
  return detail::math_helper(d, name);
}

// A block is the kernel's LOCAL threads, so its size is known here: bounding
// it keeps ptxas within the registers such a block has (65536 / threads
// each: 64 at 1024), spilling where it must, instead of a kernel that needs
// more and cannot launch (a row cached in registers at 1024 threads took 72).
// A GLOBAL buffer is read-only for the launch and overlaps no written one
// (kernel_ir.h), so its pointer is __restrict__: the compiler may move its
// loads above earlier stores (without it, an unrolled loop that loads x and
// stores y waited for each load before the next) and read it through the
// read-only cache.
//
// A kernel whose dynamic shared memory admits only G groups per SM (228 KiB
// per SM on sm_90, the most of any arch, 1 KiB of it reserved per group) is
// also bounded to G groups per SM where threads x G <= 256: that bound
// leaves every thread the 255 registers it may have anyway, so it cannot
// cause spills; it tells ptxas that registers cannot buy occupancy here.
// Without it ptxas kept mma_staged(bm=128,bn=128,bk=64,wm=2,wn=2,stages=3)
// (105 KiB: 2 groups per SM) at 166 registers by loading every B fragment
// into the same 4 registers right before its 8 MMAs (shared-memory latency
// exposed 16 times per k step); with (128, 2) it takes 216 and loads them
// ahead, at the same occupancy.
std::string cuda_kernel_begin(const Dialect& d, const KernelShape& shape) {
  const std::int64_t threads = shape.local_sizes[0] * shape.local_sizes[1] * shape.local_sizes[2];
  std::string groups;
  if (shape.dynamic_local_bytes > 0 && threads > 1) {
    constexpr std::uint64_t kSharedPerSm = 228 * 1024, kReservedPerGroup = 1024;
    const std::uint64_t most = std::max<std::uint64_t>(1, kSharedPerSm / (shape.dynamic_local_bytes + kReservedPerGroup));
    if (static_cast<std::uint64_t>(threads) * most <= 256) groups = ", " + std::to_string(most);
  }
  const std::string bounds = threads > 1 ? "__launch_bounds__(" + std::to_string(threads) + groups + ") " : "";
  return "\nextern \"C\" __global__ void " + bounds + shape.entry + "(" + pointer_params(d, shape, "", " __restrict__") + ") {\n";
}
std::string cuda_group_index(unsigned axis) { return "((long long)blockIdx." + std::string(1, "xyz"[axis]) + ")"; }
std::string cuda_local_index(unsigned axis) { return "((long long)threadIdx." + std::string(1, "xyz"[axis]) + ")"; }

// MMA as inline PTX mma.sync (sm_80+). Fragments are held as floats: f16
// and bf16 pairs are packed into .f16x2/.bf16x2 registers with cvt.rn (exact:
// the values are f16/bf16 already; element 2j in the low half), tf32 inputs
// are rounded by cvt.rna.tf32.f32, the rounding kernel_ir.h specifies.
std::string cuda_mma(const Dialect& d, const MmaHelper& h) {
  const std::string input(mma_input_name(h.shape, h.input));
  const std::string c_type(h.c_type);
  std::string out = std::string(d.function_prefix) + " " + c_type + " " + std::string(h.name) + "(const " +
                    std::string(h.a_type) + " a, const " + std::string(h.b_type) + " b, const " + c_type +
                    " c) {\n  unsigned int ra[4], rb[2];\n";
  if (h.shape == KILN_MMA_M16N8K16 && h.raw) {  // bits already: pack the pairs, element 2j low
    out += "  for (int i = 0; i < 4; ++i) ra[i] = (unsigned int)a.v[2 * i] | ((unsigned int)a.v[2 * i + 1] << 16);\n";
    out += "  for (int i = 0; i < 2; ++i) rb[i] = (unsigned int)b.v[2 * i] | ((unsigned int)b.v[2 * i + 1] << 16);\n";
  } else if (h.shape == KILN_MMA_M16N8K16) {
    const std::string cvt = "cvt.rn." + input + "x2.f32 %0, %1, %2;";
    out += "  for (int i = 0; i < 4; ++i) asm(\"" + cvt + "\" : \"=r\"(ra[i]) : \"f\"(a.v[2 * i + 1]), \"f\"(a.v[2 * i]));\n";
    out += "  for (int i = 0; i < 2; ++i) asm(\"" + cvt + "\" : \"=r\"(rb[i]) : \"f\"(b.v[2 * i + 1]), \"f\"(b.v[2 * i]));\n";
  } else {
    out += "  for (int i = 0; i < 4; ++i) asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(ra[i]) : \"f\"(a.v[i]));\n";
    out += "  for (int i = 0; i < 2; ++i) asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(rb[i]) : \"f\"(b.v[i]));\n";
  }
  out += "  " + c_type + " r;\n";
  out += "  asm volatile(\"mma.sync.aligned." + std::string(mma_shape_name(h.shape)) + ".row.col.f32." + input + "." +
         input + ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\"\n";
  out += "      : \"=f\"(r.v[0]), \"=f\"(r.v[1]), \"=f\"(r.v[2]), \"=f\"(r.v[3])\n";
  out += "      : \"r\"(ra[0]), \"r\"(ra[1]), \"r\"(ra[2]), \"r\"(ra[3]), \"r\"(rb[0]), \"r\"(rb[1]),\n";
  out += "        \"f\"(c.v[0]), \"f\"(c.v[1]), \"f\"(c.v[2]), \"f\"(c.v[3]));\n  return r;\n}\n";
  return out;
}

// f16/bf16 conversions as single PTX cvt instructions: cvt.f32.f16 and
// cvt.rn.f16.f32 (every arch), cvt.rn.bf16.f32 (sm_80+; older archs keep the
// software form, chosen by __CUDA_ARCH__: NVRTC compiles for the device's
// arch, --gpu-architecture=sm_XX or compute_XX). No .ftz: f16 subnormals
// convert exactly. They give half.hpp's bits for every non-NaN value (checked
// over all 2^32 f32 and 2^16 f16 patterns on an H200); a NaN gives the
// canonical NaN (0x7fff, 0x7fffffff) where half.hpp keeps sign and payload.
// bf16 -> f32 is a shift already.
std::string cuda_half_conversion(const Dialect& d, std::string_view name, std::string_view software) {
  const std::string fn(d.function_prefix);
  if (name == "kiln_f16_to_f32")
    return fn + " float kiln_f16_to_f32(unsigned short h) {\n  float r;\n  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(r) : \"h\"(h));\n  return r;\n}\n";
  if (name == "kiln_f32_to_f16")
    return fn + " unsigned short kiln_f32_to_f16(float v) {\n  unsigned short r;\n  asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(r) : \"f\"(v));\n  return r;\n}\n";
  if (name == "kiln_f32_to_bf16")
    return "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n" + fn +
           " unsigned short kiln_f32_to_bf16(float v) {\n  unsigned short r;\n  asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(r) : \"f\"(v));\n  return r;\n}\n#else\n" +
           std::string(software) + "#endif\n";
  return std::string(software);
}

// SUBGROUP_REDUCE's shuffle: __shfl_xor_sync within the warp (width <= 32),
// over the members of this thread's aligned segment of `width` lanes (all of
// them execute it: the op is never under divergent control flow; the last
// warp of a group of fewer than 32 threads is partial). Narrow integers are
// shuffled as 32-bit ones; f16/bf16 values are floats.
std::string cuda_shuffle_xor(const Dialect& d, const SubgroupShuffle& s) {
  if (s.width > 32) return {};
  const std::string type(d.value_types[s.dtype]);
  std::string value(s.value);
  if (dtype_is_int(s.dtype) && dtype_bytes(s.dtype) < 4)
    value = std::string(dtype_is_signed_int(s.dtype) ? "(int)" : "(unsigned int)") + value;
  const std::string members =
      s.width == 32 ? std::string("0xffffffffu")
                    : "((0xffffffffu >> " + std::to_string(32 - s.width) + ") << ((unsigned int)" + std::string(s.linear) +
                          " & " + std::to_string(32 - s.width) + "u))";
  return "((" + type + ")__shfl_xor_sync(" + members + ", " + value + ", " + std::to_string(s.mask) + ", " +
         std::to_string(s.width) + "))";
}

// An asm operand holding the 32-bit shared-window address of a pointer into
// shared memory.
std::string shared_address(std::string_view pointer) {
  return "\"r\"((unsigned int)__cvta_generic_to_shared(" + std::string(pointer) + "))";
}

// COPY_ASYNC as cp.async.cg (sm_80+: 16 bytes, bypassing L1). The shared
// address is converted before the asm (__cvta_generic_to_shared, 32 bits):
// the compiler then does the address arithmetic in 32 bits and folds the
// constant offsets of a step's copies into the instruction (converted inside
// the asm, every copy and ldmatrix cost a 64-bit add and a move: the k loop
// of mma_staged(bm=128,bn=128,bk=64,wm=2,wn=2,stages=3) went from 429 SASS
// instructions for its 128 HMMAs to 274, and 204 registers to 166). The
// "memory" clobbers keep the compiler from moving shared accesses across
// the copy, its commit and its wait.
std::string cuda_copy_async(std::string_view local, std::string_view global, std::string_view source_bytes) {
  const std::string size = source_bytes.empty() ? "" : ", %2";
  std::string out = "asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16" + size + ";\" :: " + shared_address(local) +
                    ", \"l\"(" + std::string(global) + ")";
  if (!source_bytes.empty()) out += ", \"r\"((unsigned int)" + std::string(source_bytes) + ")";
  return out + " : \"memory\");";
}
std::string cuda_copy_commit() { return "asm volatile(\"cp.async.commit_group;\" ::: \"memory\");"; }
std::string cuda_copy_wait(unsigned pending_groups) {
  return "asm volatile(\"cp.async.wait_group " + std::to_string(pending_groups) + ";\" ::: \"memory\");";
}

// LOAD_MATRIX as ldmatrix.sync.aligned.m8n8 (sm_75+), the shared address
// converted before the asm as for cp.async.
std::string cuda_load_matrix(std::string_view registers, unsigned count, bool transposed, std::string_view address) {
  std::string outputs, names;
  for (unsigned j = 0; j < count; ++j) {
    names += (j ? ", %" : "%") + std::to_string(j);
    outputs += (j ? ", \"=r\"(" : "\"=r\"(") + std::string(registers) + "[" + std::to_string(j) + "])";
  }
  return "asm volatile(\"ldmatrix.sync.aligned.m8n8.x" + std::to_string(count) + (transposed ? ".trans" : "") +
         ".shared.b16 {" + names + "}, [%" + std::to_string(count) + "];\" : " + outputs + " : " + shared_address(address) +
         " : \"memory\");";
}

// WGMMA as wgmma.mma_async (sm_90a) on two shared-memory descriptors
// (kiln_wgmma_desc, the prelude's: start address / 16, the leading byte
// offset / 16, the stride byte offset 1024 / 16 between 8-row (A) or 8-k
// (B) groups, 128-byte swizzle in bits 62..63): A K-major (leading offset
// unused by the swizzled layouts: 1, as CUTLASS writes it), B N-major
// (imm-trans-b 1) with its 64-column atoms 2048 bytes apart (kernel_ir.h's
// layout). The accumulator's registers are "+f" operands; scale-d is a
// predicate set from 1 (D = A B + D always).
// The tf32 form (dtype F32) reads both tiles K-major (tf32 has no transposed
// operand; B kept as its transpose, kernel_ir.h): B's descriptor is A's, k8
// per op, 4 bytes an element, and no imm-trans operands. With A from
// registers (code 1) A's operand is the four .b32 registers of the
// accumulator array's elements a .. a + 3 (a constant after unrolling: the
// array stays in registers), read only.
std::string cuda_wgmma(const WgmmaStatement& w) {
  const unsigned registers = w.n / 2;
  const bool tf32 = w.dtype == KILN_DTYPE_F32;
  const std::string input = tf32 ? "tf32" : w.dtype == KILN_DTYPE_BF16 ? "bf16" : "f16";
  const std::string bytes = tf32 ? "4u" : "2u";
  std::string list, outputs;
  for (unsigned i = 0; i < registers; ++i) {
    list += (i ? ", %" : "%") + std::to_string(i);
    outputs += (i ? ", \"+f\"(" : "\"+f\"(") + std::string(w.accumulator) + "[" + std::to_string(i) + "])";
  }
  const std::string shared = "(unsigned int)__cvta_generic_to_shared(" + std::string(w.local) + ")";
  std::string out = "{ const unsigned int kiln_s = " + shared + ";\n";
  if (!w.a_registers)
    out += "  const unsigned long long kiln_da = kiln_wgmma_desc(kiln_s + " + bytes + " * (unsigned int)(" + std::string(w.a) + "), 1u);\n";
  out += "  const unsigned long long kiln_db = kiln_wgmma_desc(kiln_s + " + bytes + " * (unsigned int)(" + std::string(w.b) + "), " +
         (tf32 ? "1u" : "128u") + ");\n";
  // A's operand: its descriptor (%registers), or its four registers.
  const unsigned a_operands = w.a_registers ? 4 : 1;
  std::string a_operand = "%" + std::to_string(registers), inputs = "\"l\"(kiln_da)";
  if (w.a_registers) {
    a_operand.clear(), inputs.clear();
    for (unsigned j = 0; j < 4; ++j) {
      a_operand += (j ? ", %" : "{%") + std::to_string(registers + j);
      inputs += (j ? ", " : "") + std::string("\"r\"(__float_as_uint(") + std::string(w.accumulator) + "[(unsigned int)(" +
                std::string(w.a) + ") + " + std::to_string(j) + "u]))";
    }
    a_operand += "}";
  }
  out += "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + std::to_string(registers + a_operands + 1) +
         ", 0;\\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(w.n) + (tf32 ? "k8" : "k16") + ".f32." + input + "." +
         input + " {" + list + "}, " + a_operand + ", %" + std::to_string(registers + a_operands) +
         (tf32 ? ", p, 1, 1;" : ", p, 1, 1, 0, 1;") + "\\n}\\n\"\n";
  out += "      : " + outputs + "\n      : " + inputs + ", \"l\"(kiln_db), \"r\"(1)); }";
  return out;
}
std::string cuda_wgmma_fence() {
  return "asm volatile(\"fence.proxy.async.shared::cta;\\n\\twgmma.fence.sync.aligned;\" ::: \"memory\");";
}
std::string cuda_wgmma_commit() { return "asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");"; }
std::string cuda_wgmma_wait(unsigned pending_groups) {
  return "asm volatile(\"wgmma.wait_group.sync.aligned " + std::to_string(pending_groups) + ";\" ::: \"memory\");";
}
std::string cuda_wgmma_hold(std::string_view accumulator, unsigned count) {
  std::string out;
  for (unsigned i = 0; i < count; ++i)
    out += (i ? " " : "") + std::string("asm volatile(\"\" : \"+f\"(") + std::string(accumulator) + "[" + std::to_string(i) +
           "]) :: \"memory\");";
  return out;
}

constexpr std::uint32_t lanes_mask(std::initializer_list<unsigned> lanes) {
  std::uint32_t mask = 0;
  for (unsigned n : lanes) mask |= 1u << n;
  return mask;
}

}  // namespace

// DOT_BF16 in C: VDPBF16PS where GCC targets AVX512_BF16 (-march=native on
// such a CPU; AVX512VL for 8 and 4 lanes), else the interpreter's steps in
// portable C: the high pair first, each a single-rounding fmaf, subnormal
// inputs and results flushed to signed zeros.
static std::string c_dot_bf16(const Dialect&, const DotBf16Helper& h) {
  // The scalar steps, once per source (every lane count's helper uses them).
  std::string out = R"(#ifndef KILN_DOT_BF16_SCALAR
#define KILN_DOT_BF16_SCALAR
static inline float kiln_bf16_daz(float x) { return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x; }
static inline float kiln_bf16_dot_step(uint32_t a, uint32_t b, float t) {
  return kiln_bf16_daz(fmaf(kiln_bf16_daz(kiln_bits_f32(a << 16)), kiln_bf16_daz(kiln_bits_f32(b << 16)), t));
}
static inline float kiln_dot_bf16_1(float acc, uint32_t a, uint32_t b) {
  float t = kiln_bf16_daz(acc);
  t = kiln_bf16_dot_step(a >> 16, b >> 16, t);
  return kiln_bf16_dot_step(a & 0xffffu, b & 0xffffu, t);
}
#endif
)";
  const std::string n = std::to_string(h.lanes), acc(h.acc_type), words(h.word_type), name(h.name);
  if (h.lanes == 1) return out + "static inline float " + name + "(float acc, uint32_t a, uint32_t b) { return kiln_dot_bf16_1(acc, a, b); }\n";
  std::string fast;
  if (h.lanes == 16) fast = "defined(__AVX512BF16__)\n#include <immintrin.h>\n" "static inline " + acc + " " + name + "(" + acc + " acc, " + words + " a, " + words +
                              " b) { return (" + acc + ")_mm512_dpbf16_ps((__m512)acc, (__m512bh)a, (__m512bh)b); }\n";
  if (h.lanes == 8) fast = "defined(__AVX512BF16__) && defined(__AVX512VL__)\n#include <immintrin.h>\n" "static inline " + acc + " " + name + "(" + acc + " acc, " + words + " a, " +
                              words + " b) { return (" + acc + ")_mm256_dpbf16_ps((__m256)acc, (__m256bh)a, (__m256bh)b); }\n";
  if (h.lanes == 4) fast = "defined(__AVX512BF16__) && defined(__AVX512VL__)\n#include <immintrin.h>\n" "static inline " + acc + " " + name + "(" + acc + " acc, " + words + " a, " +
                              words + " b) { return (" + acc + ")_mm_dpbf16_ps((__m128)acc, (__m128bh)a, (__m128bh)b); }\n";
  const std::string portable = "static inline " + acc + " " + name + "(" + acc + " acc, " + words + " a, " + words +
                               " b) {\n  float r[" + n + "];\n  for (int l = 0; l < " + n +
                               "; ++l) r[l] = kiln_dot_bf16_1(acc[l], a[l], b[l]);\n  " + acc + " v;\n  memcpy(&v, r, sizeof v);\n  return v;\n}\n";
  if (fast.empty()) return out + portable;
  return out + "#if " + fast + "#else\n" + portable + "#endif\n";
}

// PREFETCH: read, moderate locality (x86 prefetcht1: into the L2 and
// outward). A prefetch never faults, so an address past the buffer is fine.
std::string c_prefetch(std::string_view address) { return "__builtin_prefetch(" + std::string(address) + ", 0, 2);"; }

const Dialect& c_dialect() {
  static const Dialect d{
      .name = "c",
      .value_types = {"", "float", "float", "float", "double", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "int8_t",
                      "int16_t", "int32_t", "int64_t", "uint8_t"},
      .storage_types = {"", "uint16_t", "uint16_t", "float", "double", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
                        "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t"},
      .vector_lanes = lanes_mask({2, 4, 8, 16}),  // vector_size needs a power of two
      .whole_vector_ops = true,
      .function_prefix = "static inline",
      .f32_suffix = "f",
      .i64_suffix = "LL",
      .u64_suffix = "ULL",
      .unary_f32 = kLibmF32,
      .unary_f64 = kLibmF64,
      .pow_f32 = "powf", .pow_f64 = "pow", .fmod_f32 = "fmodf", .fmod_f64 = "fmod",
      // Cache-line aligned: packed panels (pack_tile) are read as whole vectors.
      .local_storage_prefix = "_Alignas(64) ",
      .register_storage_prefix = "",
      .barrier = "",
      .simd_function_helpers = true,
      .simd_function_whole = c_simd_function_whole,
      .streaming_stores = true,
      .any_index_vectors = true,
      .cast = c_cast,
      .literal = c_literal,
      .helper = detail::math_helper,
      .vector_type = kiln_vector_name,
      .vector_typedef = c_vector_typedef,
      .lane = lane_subscript,
      .vector_access = c_vector_access,
      .vector_literal = c_vector_literal,
      .prelude = c_prelude,
      .kernel_begin = c_kernel_begin,
      .kernel_end = c_kernel_end,
      .group_index = c_group_index,
      .local_index = nullptr,
      .half_conversion = c_half_conversion,
      .half_vector = c_half_vector,
      .dot_bf16 = c_dot_bf16,
      .prefetch = c_prefetch,
  };
  return d;
}

const Dialect& opencl_dialect() {
  // Overloaded builtins, the same names for float and double; OpenCL C has
  // tanh, erf, rsqrt, log1p and expm1 (sigmoid is a prelude helper).
  static constexpr std::array<std::string_view, KILN_UNARY_COUNT> kF32 = {
      "", "", "", "exp", "exp2", "log", "log2", "", "sqrt", "sin", "cos", "floor", "trunc", "fabs",
      "tanh", "erf", "kiln_sigmoid_f32", "rsqrt", "log1p", "expm1"};
  static constexpr std::array<std::string_view, KILN_UNARY_COUNT> kF64 = {
      "", "", "", "exp", "exp2", "log", "log2", "", "sqrt", "sin", "cos", "floor", "trunc", "fabs",
      "tanh", "erf", "kiln_sigmoid_f64", "rsqrt", "log1p", "expm1"};
  static const Dialect d{
      .name = "opencl-c",
      .value_types = {"", "float", "float", "float", "double", "uchar", "ushort", "uint", "ulong", "char", "short", "int",
                      "long", "uchar"},
      .storage_types = {"", "ushort", "ushort", "float", "double", "uchar", "ushort", "uint", "ulong", "char", "short", "int",
                        "long", "uchar"},
      .vector_lanes = lanes_mask({2, 3, 4, 8, 16}),
      .whole_vector_ops = true,
      .function_prefix = "static inline",
      .f32_suffix = "f",
      .i64_suffix = "L",
      .u64_suffix = "UL",
      .unary_f32 = kF32,
      .unary_f64 = kF64,
      .pow_f32 = "pow", .pow_f64 = "pow", .fmod_f32 = "fmod", .fmod_f64 = "fmod",
      .local_storage_prefix = "__local ",
      .register_storage_prefix = "",
      .barrier = "barrier(CLK_LOCAL_MEM_FENCE);",
      .index32_type = "int",
      .any_index_vectors = true,  // vloadn/vstoren take element-aligned addresses
      .cast = c_cast,
      .literal = c_literal,
      .helper = detail::math_helper,
      .vector_type = cl_vector_name,
      .vector_typedef = no_typedef,
      .lane = cl_lane,
      .vector_access = cl_vector_access,
      .vector_literal = cl_vector_literal,
      .prelude = cl_prelude,
      .kernel_begin = cl_kernel_begin,
      .kernel_end = close_brace,
      .group_index = cl_group_index,
      .local_index = cl_local_index,
  };
  return d;
}

const Dialect& cuda_dialect() {
  static const Dialect d{
      .name = "cuda",
      .value_types = {"", "float", "float", "float", "double", "unsigned char", "unsigned short", "unsigned int",
                      "unsigned long long", "signed char", "short", "int", "long long", "unsigned char"},
      .storage_types = {"", "unsigned short", "unsigned short", "float", "double", "unsigned char", "unsigned short",
                        "unsigned int", "unsigned long long", "signed char", "short", "int", "long long", "unsigned char"},
      .vector_lanes = lanes_mask({2, 3, 4, 8, 16}),
      .whole_vector_ops = false,
      .function_prefix = "static __device__ __forceinline__",
      .f32_suffix = "f",
      .i64_suffix = "LL",
      .u64_suffix = "ULL",
      .unary_f32 = kCudaF32,
      .unary_f64 = kCudaF64,
      .pow_f32 = "powf", .pow_f64 = "pow", .fmod_f32 = "fmodf", .fmod_f64 = "fmod",
      // Aligned to 16 bytes like the dynamic buffer: whole-vector accesses
      // (16-bit rows in 16-byte ones) need their start aligned.
      .local_storage_prefix = "__shared__ __align__(16) ",
      .register_storage_prefix = "__align__(16) ",
      .dynamic_local_above = 48 * 1024,
      .barrier = "__syncthreads();",
      .index32_type = "int",
      .raw_halves = true,
      .any_index_loads = true,
      .cast = c_cast,
      .literal = c_literal,
      .helper = cuda_helper,
      .vector_type = kiln_vector_name,
      .vector_typedef = cuda_vector_typedef,
      .lane = cuda_lane,
      .vector_access = cuda_vector_access,
      .vector_literal = cuda_vector_literal,
      .prelude = cuda_prelude,
      .kernel_begin = cuda_kernel_begin,
      .kernel_end = close_brace,
      .group_index = cuda_group_index,
      .local_index = cuda_local_index,
      .mma = cuda_mma,
      .half_conversion = cuda_half_conversion,
      .shuffle_xor = cuda_shuffle_xor,
      .copy_async = cuda_copy_async,
      .copy_commit = cuda_copy_commit,
      .copy_wait = cuda_copy_wait,
      .load_matrix = cuda_load_matrix,
      .wgmma = cuda_wgmma,
      .wgmma_fence = cuda_wgmma_fence,
      .wgmma_commit = cuda_wgmma_commit,
      .wgmma_wait = cuda_wgmma_wait,
      .wgmma_hold = cuda_wgmma_hold,
  };
  return d;
}

}  // namespace kiln::sdk
