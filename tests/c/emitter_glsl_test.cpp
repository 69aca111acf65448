// The C-family emitter's GLSL dialect on its own: what GLSL needs that the C
// family does not (constructor casts, explicit narrowing, a native bool,
// 32-bit subscripts, decimal literals, `shared` at file scope, storage-buffer
// blocks and push constants). The code's correctness is tested end to end on
// lavapipe by tests/vulkan.
#include <gtest/gtest.h>

#include "kiln/sdk/c_emitter.hpp"
#include "kiln/sdk/capabilities.hpp"
#include "kiln/sdk/plugin_support.hpp"
#include "support/wire_builder.hpp"

#include <string>

namespace {

using kiln::sdk::emit_c_family;
using kiln::sdk::glsl_dialect;
using kiln::sdk::PluginError;
using kiln::test::WireBuilder;

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(EmitterGlsl, BuffersScalarsAndLocalStorageLiveAtFileScope) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F16, 0);
  auto n = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I8, 1);
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_BOOL, 2);
  auto m = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 3);
  auto shared = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, 32);
  auto t = w.local_index(0, w.const_i64(32));
  auto g = w.group_index(1, m);
  w.store(KILN_DTYPE_F32, shared, t, w.cast(KILN_DTYPE_F32, w.load(KILN_DTYPE_F16, x, g)));
  w.barrier();
  auto big = w.binary(KILN_BINARY_CMPGT, KILN_DTYPE_BOOL, w.cast(KILN_DTYPE_I8, t), n);
  w.store(KILN_DTYPE_BOOL, y, t, big);
  const std::string s = emit_c_family(w.ops, glsl_dialect()).source;
  EXPECT_TRUE(s.starts_with("#version 450\n")) << s;
  EXPECT_TRUE(contains(s, "layout(local_size_x = 32, local_size_y = 1, local_size_z = 1) in;")) << s;
  EXPECT_TRUE(contains(s, "layout(std430, set = 0, binding = 0) readonly buffer KilnBuffer0 { uint16_t v0[]; };")) << s;
  EXPECT_TRUE(contains(s, "layout(std430, set = 0, binding = 1) buffer KilnBuffer1 { uint8_t v2[]; };")) << s;
  // Push constants: i8 in a 4-byte word at 0, i64 8-aligned at 8.
  EXPECT_TRUE(contains(s, "layout(offset = 0) uint v1;")) << s;
  EXPECT_TRUE(contains(s, "layout(offset = 8) int64_t v3;")) << s;
  EXPECT_TRUE(contains(s, "const int8_t v1_in = int8_t(kiln_scalars.v1);")) << s;
  // shared at file scope, before main; the barrier in it.
  const auto shared_at = s.find("shared float v4[32];"), main_at = s.find("void main()");
  ASSERT_NE(shared_at, std::string::npos) << s;
  EXPECT_LT(shared_at, main_at) << s;
  EXPECT_TRUE(contains(s, "memoryBarrierShared(); barrier();")) << s;
  EXPECT_TRUE(contains(s, "int64_t(gl_LocalInvocationID.x)")) << s;
  EXPECT_TRUE(contains(s, "int64_t(gl_WorkGroupID.y)")) << s;
  // 32-bit subscripts, halves through the shared helpers, bool as uint8_t in memory.
  EXPECT_TRUE(contains(s, "kiln_f16_to_f32(v0[uint(v")) << s;
  EXPECT_TRUE(contains(s, "v2[uint(v6)] = uint8_t(v")) << s;
  EXPECT_FALSE(contains(s, "static")) << s;

  const auto where = kiln::sdk::glsl_arguments(emit_c_family(w.ops, glsl_dialect()).shape);
  ASSERT_EQ(where.size(), 4u);
  EXPECT_EQ(where[0].binding, 0u);
  EXPECT_EQ(where[2].binding, 1u);
  EXPECT_EQ(where[1].push_offset, 0u);
  EXPECT_EQ(where[1].push_bytes, 4u);
  EXPECT_EQ(where[3].push_offset, 8u);
  EXPECT_EQ(where[3].push_bytes, 8u);
}

TEST(EmitterGlsl, ConversionsAreExplicitAndBoolIsNative) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I16, 0);
  auto b = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_BOOL, 1);
  auto i = w.group_index(0, w.const_i64(8));
  auto v = w.load(KILN_DTYPE_I16, x, i);
  auto sum = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I16, v, w.const_bits(KILN_DTYPE_I16, 0xfffe));
  w.store(KILN_DTYPE_I16, x, i, sum);
  auto flag = w.load(KILN_DTYPE_BOOL, b, i);
  auto less = w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, flag, w.cast(KILN_DTYPE_BOOL, v));
  w.store(KILN_DTYPE_BOOL, b, i, w.unary(KILN_UNARY_BIT_NOT, KILN_DTYPE_BOOL, less));
  const std::string s = emit_c_family(w.ops, glsl_dialect()).source;
  EXPECT_TRUE(contains(s, "const int16_t v5 = int16_t(-2);")) << s;
  EXPECT_TRUE(contains(s, "= int16_t(uint(v4) + uint(v5));")) << s;  // wraps in 32 bits, narrowed explicitly
  EXPECT_TRUE(contains(s, "const bool v8 = bool(v1[uint(v3)]);")) << s;
  EXPECT_TRUE(contains(s, "(!v8 && v9)")) << s;  // false < true
  EXPECT_TRUE(contains(s, "(!v10)")) << s;
}

TEST(EmitterGlsl, LiteralsAreExactWithoutHexFloats) {
  WireBuilder w;
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F64, 0);
  auto i = w.const_i64(0);
  w.store(KILN_DTYPE_F64, y, i, w.cast(KILN_DTYPE_F64, w.const_f32(0.1f)));
  w.store(KILN_DTYPE_F64, y, i, w.const_bits(KILN_DTYPE_F64, 0x3fb999999999999aull));  // 0.1
  w.store(KILN_DTYPE_F64, y, i, w.const_bits(KILN_DTYPE_F64, 0x7ff0000000000000ull));  // inf
  w.const_bits(KILN_DTYPE_I32, 0x80000000u);
  w.const_bits(KILN_DTYPE_I64, 0x8000000000000000ull);
  w.const_bits(KILN_DTYPE_U64, 0xffffffffffffffffull);
  w.const_bits(KILN_DTYPE_F32, 0xff800000u);  // -inf
  const std::string s = emit_c_family(w.ops, glsl_dialect()).source;
  EXPECT_FALSE(contains(s, "0x1.")) << s;
  EXPECT_TRUE(contains(s, "= 0.100000001;")) << s;
  EXPECT_TRUE(contains(s, "= 0.10000000000000001lf;")) << s;
  EXPECT_TRUE(contains(s, "packDouble2x32(uvec2(0u, 2146435072u))")) << s;
  EXPECT_TRUE(contains(s, "int(0x80000000u)")) << s;
  EXPECT_TRUE(contains(s, "int64_t(0x8000000000000000ul)")) << s;
  EXPECT_TRUE(contains(s, "18446744073709551615ul")) << s;
  EXPECT_TRUE(contains(s, "uintBitsToFloat(4286578688u)")) << s;
}

TEST(EmitterGlsl, CapabilitiesFollowWhatGlslCanSpell) {
  const kiln::sdk::Dialect& d = glsl_dialect();
  const auto f64 = kiln::sdk::c_family_dtype_ops(d, KILN_DTYPE_F64);
  EXPECT_FALSE(f64 & KILN_CAP_UNARY(KILN_UNARY_EXP));  // no double exp in GLSL
  EXPECT_FALSE(f64 & KILN_CAP_BINARY(KILN_BINARY_POW));
  EXPECT_TRUE(f64 & KILN_CAP_UNARY(KILN_UNARY_SQRT));
  EXPECT_TRUE(f64 & KILN_CAP_BINARY(KILN_BINARY_MOD));
  EXPECT_TRUE(kiln::sdk::c_family_dtype_ops(d, KILN_DTYPE_F16) & KILN_CAP_BINARY(KILN_BINARY_POW));
  const auto b = kiln::sdk::c_family_dtype_ops(d, KILN_DTYPE_BOOL);
  EXPECT_TRUE(b & KILN_CAP_BINARY(KILN_BINARY_MAX));
  EXPECT_FALSE(b & KILN_CAP_BINARY(KILN_BINARY_ADD));
  EXPECT_EQ(kiln::sdk::c_family_vector_widths(d), (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4));
}

TEST(EmitterGlsl, VectorsAreVec2ToVec4) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 0);
  auto i = w.const_i64(0);
  auto v = w.load(KILN_DTYPE_F32, x, i, 4);
  auto sum = w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, v, v, 4);
  w.store(KILN_DTYPE_F32, x, i, w.insert(KILN_DTYPE_F32, sum, w.extract(KILN_DTYPE_F32, v, 3), 0, 4), 4);
  const std::string s = emit_c_family(w.ops, glsl_dialect()).source;
  EXPECT_TRUE(contains(s, "const vec4 v2 = vec4(v0[uint(v1)], v0[uint(v1) + 1], v0[uint(v1) + 2], v0[uint(v1) + 3]);")) << s;
  EXPECT_TRUE(contains(s, "const vec4 v3 = (v2 + v2);")) << s;
  EXPECT_TRUE(contains(s, "v2.w")) << s;
  WireBuilder wide;
  auto y = wide.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
  wide.load(KILN_DTYPE_F32, y, wide.const_i64(0), 8);
  try {
    emit_c_family(wide.ops, glsl_dialect());
    FAIL() << "expected UNSUPPORTED";
  } catch (const PluginError& e) {
    EXPECT_EQ(e.status(), KILN_STATUS_UNSUPPORTED);
    EXPECT_EQ(e.failed_op(), 2);
    EXPECT_TRUE(contains(e.what(), "8-lane")) << e.what();
  }
}

}  // namespace

// GLSL claims sigmoid (a helper over its float exp) and rsqrt of the ABI 1.1
// math ops; no erf, log1p or expm1, and its tanh has no accuracy of its own:
// those are left to the core's lowering (docs/passes.md, lower_math).
TEST(EmitterGlsl, MathOpsClaimedAreSigmoidAndRsqrt) {
  const kiln::sdk::Dialect& d = glsl_dialect();
  for (unsigned dt : {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
    EXPECT_TRUE(kiln::sdk::c_family_has_unary(d, KILN_UNARY_SIGMOID, dt));
    EXPECT_TRUE(kiln::sdk::c_family_has_unary(d, KILN_UNARY_RSQRT, dt));
    for (unsigned u : {KILN_UNARY_TANH, KILN_UNARY_ERF, KILN_UNARY_LOG1P, KILN_UNARY_EXPM1})
      EXPECT_FALSE(kiln::sdk::c_family_has_unary(d, u, dt)) << kiln::sdk::unary_name(u);
  }
  EXPECT_TRUE(kiln::sdk::c_family_has_unary(d, KILN_UNARY_RSQRT, KILN_DTYPE_F64));
  EXPECT_FALSE(kiln::sdk::c_family_has_unary(d, KILN_UNARY_SIGMOID, KILN_DTYPE_F64));  // no double exp
  kiln_device_info info{};
  kiln::sdk::set_c_family_caps(info, d, KILN_DTYPE_F32);
  EXPECT_TRUE(kiln::sdk::has_unary(info, KILN_DTYPE_F32, KILN_UNARY_SIGMOID));
  EXPECT_FALSE(kiln::sdk::has_unary(info, KILN_DTYPE_F32, KILN_UNARY_TANH));
}
