// The GLSL dialect: GLSL 4.50 compute shaders for Vulkan. What GLSL does
// differently from the C family: constructor casts and no implicit narrowing
// (explicit_conversions), a native bool, 32-bit array subscripts, no hex
// floats, `shared` arrays at file scope, buffers as storage-buffer blocks and
// scalars as push constants, vec2..vec4 vectors.
#include "c_emitter_detail.hpp"

#include "kiln/sdk/half.hpp"
#include "kiln/sdk/grid.hpp"
#include "kiln/sdk/wire.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kiln::sdk {

namespace {

std::string glsl_cast(std::string_view type, std::string_view x) {
  const bool enclosed = !x.empty() && x.front() == '(' && detail::enclosed_end(x, 0) == x.size() - 1;
  return std::string(type) + (enclosed ? std::string(x) : "(" + std::string(x) + ")");
}

// Finite values as decimals that read back exactly (%.9g for f32, %.17g for
// f64), the others by their bits.
std::string decimal(double v, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*g", digits, v);
  std::string s = text;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string float_literal(float v) {
  if (!std::isfinite(v)) return "uintBitsToFloat(" + std::to_string(std::bit_cast<std::uint32_t>(v)) + "u)";
  return decimal(v, 9);
}

std::string glsl_literal(const Dialect& d, unsigned dt, std::uint64_t bits) {
  switch (dt) {
    case KILN_DTYPE_F32: return float_literal(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
    case KILN_DTYPE_F16: return float_literal(f16_bits_to_f32(static_cast<std::uint16_t>(bits)));
    case KILN_DTYPE_BF16: return float_literal(bf16_bits_to_f32(static_cast<std::uint16_t>(bits)));
    case KILN_DTYPE_F64: {
      const double v = std::bit_cast<double>(bits);
      if (std::isfinite(v)) return decimal(v, 17) + "lf";
      return "packDouble2x32(uvec2(" + std::to_string(static_cast<std::uint32_t>(bits)) + "u, " +
             std::to_string(static_cast<std::uint32_t>(bits >> 32)) + "u))";
    }
    case KILN_DTYPE_BOOL: return bits != 0 ? "true" : "false";
    case KILN_DTYPE_U32: return std::to_string(static_cast<std::uint32_t>(bits)) + "u";
    case KILN_DTYPE_U64: return std::to_string(bits) + "ul";
    case KILN_DTYPE_I32: case KILN_DTYPE_I64: {  // -MIN does not fit: by its bits
      const std::int64_t v = int_from_bits(bits, dt);
      const bool i64 = dt == KILN_DTYPE_I64;
      if (v == (i64 ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int32_t>::min()))
        return i64 ? "int64_t(0x8000000000000000ul)" : "int(0x80000000u)";
      return std::to_string(v) + (i64 ? "l" : "");
    }
    default:  // 8- and 16-bit integers have no literals of their own
      return std::string(d.value_types[dt]) + "(" + std::to_string(int_from_bits(bits, dt)) + ")";
  }
}

// C's pow and fmod, where GLSL's pow is undefined (x < 0, or x = 0 and
// y <= 0) and its mod takes the sign of y and rounds. fmod is exact: |x| is
// reduced by |y| scaled to its binade, each subtraction exact (Sterbenz).
constexpr std::string_view kPow = R"(
float kiln_pow_f32(float x, float y) {
  if (y == 0.0) return 1.0;
  if (x == 0.0) return y < 0.0 ? uintBitsToFloat(0x7f800000u) : 0.0;
  float r = pow(abs(x), y);
  if (x < 0.0) {
    if (trunc(y) != y) return uintBitsToFloat(0x7fc00000u);
    if (mod(y, 2.0) == 1.0) r = -r;
  }
  return r;
}
)";
constexpr std::string_view kFmod = R"(
$T kiln_fmod_$N($T x, $T y) {
  const $T ay = abs(y);
  if (isnan(x) || isnan(y) || isinf(x) || ay == 0.0) return $NAN;
  $T r = abs(x);
  int ey;
  frexp(ay, ey);
  while (r >= ay) {
    int er;
    frexp(r, er);
    $T t = ldexp(ay, er - ey);
    if (t > r) t *= 0.5;
    r -= t;
  }
  return x < 0.0 ? -r : r;
}
)";

std::string glsl_helper(const Dialect& d, std::string_view name) {
  if (name == "kiln_pow_f32") return std::string(kPow);
  if (name.starts_with("kiln_sigmoid_") || name.starts_with("kiln_rsqrt_")) return detail::math_helper(d, name);
  const bool f64 = name == "kiln_fmod_f64";
  if (name != "kiln_fmod_f32" && !f64) return "";
  std::string text = detail::replace_all(std::string(kFmod), "$NAN",
                                         f64 ? "packDouble2x32(uvec2(0u, 0x7ff80000u))" : "uintBitsToFloat(0x7fc00000u)");
  text = detail::replace_all(std::move(text), "$T", f64 ? "double" : "float");
  return detail::replace_all(std::move(text), "$N", f64 ? "f64" : "f32");
}

std::string glsl_vector_type(const Dialect&, unsigned dt, unsigned lanes) {
  static constexpr std::array<std::string_view, KILN_DTYPE_COUNT> kPrefix = {
      "", "vec", "vec", "vec", "dvec", "u8vec", "u16vec", "uvec", "u64vec", "i8vec", "i16vec", "ivec", "i64vec", "bvec"};
  return std::string(kPrefix[dt]) + std::to_string(lanes);
}

// Push-constant members hold 32- and 64-bit types only (16- and 8-bit ones
// would need storagePushConstant16/8): narrower values travel in a uint.
std::string_view push_type(const Dialect& d, unsigned dt) {
  return dtype_bytes(dt) >= 4 ? d.storage_types[dt] : d.value_types[KILN_DTYPE_U32];
}

std::string glsl_prelude(const Dialect& d, const KernelShape& shape) {
  std::string out = R"(#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
)";
  if (shape.uses_subgroups)
    out += "#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_shuffle : require\n";
  out += "layout(local_size_x = " + std::to_string(shape.local_sizes[0]) + ", local_size_y = " +
         std::to_string(shape.local_sizes[1]) + ", local_size_z = " + std::to_string(shape.local_sizes[2]) + ") in;\n";
  const std::vector<GlslArgument> where = glsl_arguments(shape);
  std::string scalars;
  for (std::size_t slot = 0; slot < shape.params.size(); ++slot) {
    const ParamSlot& p = shape.params[slot];
    const std::string name = "v" + std::to_string(p.op);
    if (p.kind == KILN_PARAM_VARIABLE) {
      scalars += "  layout(offset = " + std::to_string(where[slot].push_offset) + ") " + std::string(push_type(d, p.dtype)) +
                 " " + name + ";\n";
      continue;
    }
    const std::string binding = std::to_string(where[slot].binding);
    out += "layout(std430, set = 0, binding = " + binding + ") " + (p.kind == KILN_PARAM_GLOBAL ? "readonly " : "") +
           "buffer KilnBuffer" + binding + " { " + std::string(d.storage_types[p.dtype]) + " " + name + "[]; };\n";
  }
  if (!scalars.empty()) out += "layout(push_constant) uniform KilnScalars {\n" + scalars + "} kiln_scalars;\n";
  return out + R"(uint kiln_f32_bits(float x) { return floatBitsToUint(x); }
float kiln_bits_f32(uint u) { return uintBitsToFloat(u); }
)";
}

// SUBGROUP_REDUCE's shuffle: subgroupShuffleXor (GL_KHR_shader_subgroup_shuffle)
// on the types it takes without the extended-types extensions: float (f32,
// and f16/bf16 values), double, int, uint. The width is the host's to check
// (at most warp_size, the device's fixed subgroup size).
std::string glsl_shuffle_xor(const Dialect&, const SubgroupShuffle& s) {
  switch (s.dtype) {
    case KILN_DTYPE_F32: case KILN_DTYPE_F16: case KILN_DTYPE_BF16: case KILN_DTYPE_F64: case KILN_DTYPE_I32:
    case KILN_DTYPE_U32:
      return "subgroupShuffleXor(" + std::string(s.value) + ", " + std::to_string(s.mask) + "u)";
    default:
      return {};
  }
}

// main() first reads the scalars in their storage types, as v<op>_in.
std::string glsl_kernel_begin(const Dialect& d, const KernelShape& shape) {
  std::string out = "\nvoid main() {\n";
  for (const ParamSlot& p : shape.params) {
    if (p.kind != KILN_PARAM_VARIABLE) continue;
    const std::string name = "v" + std::to_string(p.op), type(d.storage_types[p.dtype]), word = "kiln_scalars." + name;
    out += "  const " + type + " " + name + "_in = " + (push_type(d, p.dtype) == type ? word : glsl_cast(type, word)) + ";\n";
  }
  return out;
}

constexpr std::uint32_t kLanes2to4 = (1u << 2) | (1u << 3) | (1u << 4);

}  // namespace

std::vector<GlslArgument> glsl_arguments(const KernelShape& shape) {
  std::vector<GlslArgument> out(shape.params.size());
  std::uint32_t buffers = 0, push_bytes = 0;
  for (std::size_t slot = 0; slot < shape.params.size(); ++slot) {
    const ParamSlot& p = shape.params[slot];
    if (p.kind != KILN_PARAM_VARIABLE) {
      out[slot].binding = buffers++;
      continue;
    }
    const std::uint32_t bytes = dtype_bytes(p.dtype) == 8 ? 8 : 4;
    out[slot].push_offset = (push_bytes + bytes - 1) / bytes * bytes;
    out[slot].push_bytes = bytes;
    push_bytes = out[slot].push_offset + bytes;
  }
  return out;
}

const Dialect& glsl_dialect() {
  // GLSL has no double-precision exp, log or pow. Of the ABI 1.1 ops it
  // spells sigmoid (f32) and rsqrt as prelude helpers (detail::math_helper).
  // It has no erf, log1p or expm1, and its tanh carries no accuracy of its
  // own (Vulkan states it as the exp formula; Mesa computes
  // (e^2x - 1) / (e^2x + 1), which loses all relative precision near 0):
  // those are not claimed, and the core lowers them to exp/ln forms that
  // keep it (docs/passes.md, lower_math).
  static constexpr std::array<std::string_view, KILN_UNARY_COUNT> kF32 = {
      "", "", "", "exp", "exp2", "log", "log2", "", "sqrt", "sin", "cos", "floor", "trunc", "abs",
      "", "", "kiln_sigmoid_f32", "kiln_rsqrt_f32", "", ""};
  static constexpr std::array<std::string_view, KILN_UNARY_COUNT> kF64 = {
      "", "", "", "", "", "", "", "", "sqrt", "", "", "floor", "trunc", "abs",
      "", "", "", "kiln_rsqrt_f64", "", ""};
  static const Dialect d{
      .name = "glsl",
      .value_types = {"", "float", "float", "float", "double", "uint8_t", "uint16_t", "uint", "uint64_t", "int8_t",
                      "int16_t", "int", "int64_t", "bool"},
      .storage_types = {"", "uint16_t", "uint16_t", "float", "double", "uint8_t", "uint16_t", "uint", "uint64_t",
                        "int8_t", "int16_t", "int", "int64_t", "uint8_t"},
      .vector_lanes = kLanes2to4,
      .whole_vector_ops = true,
      .function_prefix = "",
      .f32_suffix = "",
      .i64_suffix = "l",
      .u64_suffix = "ul",
      .unary_f32 = kF32,
      .unary_f64 = kF64,
      .pow_f32 = "kiln_pow_f32", .pow_f64 = "", .fmod_f32 = "kiln_fmod_f32", .fmod_f64 = "kiln_fmod_f64",
      .local_storage_prefix = "shared ",
      .register_storage_prefix = "",
      .local_storage_global = true,
      .barrier = "memoryBarrierShared(); barrier();",
      .native_bool = true,
      .explicit_conversions = true,
      .subscript_type = "uint",  // GLSL indexes with 32-bit integers only
      .cast = glsl_cast,
      .literal = glsl_literal,
      .helper = glsl_helper,
      .vector_type = glsl_vector_type,
      .vector_typedef = [](const Dialect&, unsigned, unsigned) { return std::string(); },
      .lane = [](std::string_view v, unsigned lane) { return std::string(v) + "." + "xyzw"[lane]; },
      .vector_access = [](const Dialect&, const VectorAccess&) { return std::string(); },  // lane by lane
      .vector_literal = [](std::string_view type, const std::vector<std::string>& lanes) {
        return std::string(type) + "(" + detail::joined(lanes) + ")";
      },
      .prelude = glsl_prelude,
      .kernel_begin = glsl_kernel_begin,
      .kernel_end = [](const Dialect&, const KernelShape&) { return std::string("}\n"); },
      .group_index = [](unsigned axis) { return std::string("int64_t(gl_WorkGroupID.") + "xyz"[axis] + ")"; },
      .local_index = [](unsigned axis) { return std::string("int64_t(gl_LocalInvocationID.") + "xyz"[axis] + ")"; },
      .shuffle_xor = glsl_shuffle_xor,
  };
  return d;
}

}  // namespace kiln::sdk
