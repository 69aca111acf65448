// The C-family emitter on its own: plausible source in every dialect, and
// clean refusals. Correctness of the C dialect's code is tested end to end
// through the C plugin (c_ops_test.cpp); OpenCL and CUDA by their plugins.
#include <gtest/gtest.h>

#include "kiln/sdk/c_emitter.hpp"
#include "kiln/sdk/plugin_support.hpp"
#include "support/wire_builder.hpp"

#include <string>

namespace {

using kiln::sdk::Dialect;
using kiln::sdk::emit_c_family;
using kiln::sdk::PluginError;
using kiln::test::WireBuilder;

// y[4g..4g+3] = exp(f16 x) * 2 as f32x4, with a LOOP, an IF and a REGISTER
// accumulator: a little of everything.
std::vector<kiln_op> small_kernel(std::uint8_t lanes = 4) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F16, 0, 64);
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, 64);
  auto n = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 2);
  auto acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_I32, 1);
  auto g = w.group_index(0, n);
  auto four = w.const_i64(lanes);
  auto i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, four);
  auto v = w.load(KILN_DTYPE_F16, x, i, lanes);
  auto e = w.unary(KILN_UNARY_EXP, KILN_DTYPE_F16, v, lanes);
  auto f = w.cast(KILN_DTYPE_F32, e, lanes);
  auto two = w.broadcast(KILN_DTYPE_F32, w.const_f32(2.0f), lanes);
  auto r = w.binary(KILN_BINARY_MUL, KILN_DTYPE_F32, f, two, lanes);
  auto zero = w.const_i64(0);
  w.store(KILN_DTYPE_I32, acc, zero, w.const_bits(KILN_DTYPE_I32, 0));
  auto l = w.loop(four);
  auto c = w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_I64, l, g);
  auto iff = w.if_(c);
  auto a = w.load(KILN_DTYPE_I32, acc, zero);
  w.store(KILN_DTYPE_I32, acc, zero, w.binary(KILN_BINARY_DIV, KILN_DTYPE_I32, a, w.const_bits(KILN_DTYPE_I32, 3)));
  w.end_if(iff);
  w.end_loop(l);
  w.store(KILN_DTYPE_F32, y, i, r, lanes);
  return w.ops;
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(EmitterDialects, CUsesVectorSizeLoopsAndOpenMP) {
  kiln::sdk::EmitOptions options;
  options.parallel = true;
  options.threads = 2;
  const auto out = emit_c_family(small_kernel(), kiln::sdk::c_dialect(), options);
  const std::string& s = out.source;
  EXPECT_TRUE(contains(s, "__attribute__((vector_size(16)))")) << s;
  EXPECT_FALSE(contains(s, "ext_vector_type")) << s;
  EXPECT_TRUE(contains(s, "#pragma omp parallel for schedule(static) num_threads(2)")) << s;
  EXPECT_TRUE(contains(s, "void kiln_kernel(void* const* kiln_args, const int64_t* kiln_groups)")) << s;
  EXPECT_TRUE(contains(s, "for (int64_t kiln_g0 = 0; kiln_g0 < kiln_n0; ++kiln_g0)")) << s;
  EXPECT_TRUE(contains(s, "kiln_f16_to_f32(")) << s;
  EXPECT_TRUE(contains(s, "kiln_round_f16(kiln_exp_f32(")) << s;
  EXPECT_TRUE(contains(s, "kiln_div_i32(")) << s;
  EXPECT_TRUE(contains(s, "int32_t v3[1];")) << s;
  ASSERT_EQ(out.shape.params.size(), 3u);
  EXPECT_EQ(out.shape.params[2].kind, static_cast<std::uint32_t>(KILN_PARAM_VARIABLE));
  EXPECT_TRUE(out.shape.group_axes[0]);
  EXPECT_FALSE(out.shape.group_axes[1]);
}

// C converts f16/bf16 vectors whole (Dialect::half_vector): F16C/AVX-512F
// under the compiler's macros, the software conversions per lane otherwise;
// float math on the whole vector, rounded as one. Other dialects convert
// lane by lane. (Values: tests/c/c_half_vectors_test.cpp.)
TEST(EmitterDialects, CConvertsHalfVectorsWhole) {
  kiln::sdk::EmitOptions options;
  options.vector_math = true;
  const std::string s = emit_c_family(small_kernel(16), kiln::sdk::c_dialect(), options).source;
  EXPECT_TRUE(contains(s, "kiln_load_f16x16(&v0[")) << s;
  EXPECT_TRUE(contains(s, "_f = kiln_simd_exp_f32_16(v")) << s;  // the float value, then
  EXPECT_TRUE(contains(s, "= kiln_round_normal_f16x16(v")) << s;  // rounded as one vector (exp: never subnormal)
  EXPECT_TRUE(contains(s, "v = kiln_exp_f32_m512(v);")) << s;     // on whole registers under AVX-512
  EXPECT_TRUE(contains(s, "#if defined(__AVX512F__)\n")) << s;
  EXPECT_TRUE(contains(s, "_mm512_cvtph_ps(")) << s;
  EXPECT_TRUE(contains(s, "#elif defined(__F16C__)\n")) << s;
  EXPECT_TRUE(contains(s, "_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)")) << s;
  EXPECT_TRUE(contains(s, "r[i] = kiln_f16_to_f32(p[i]);")) << s;  // the fallback
  // The helpers follow the scalar conversions they fall back on.
  EXPECT_LT(s.find("kiln_f16_to_f32(uint16_t h)"), s.find("kiln_load_f16x16(const uint16_t* p)")) << s;
  for (const auto* d : {&kiln::sdk::opencl_dialect(), &kiln::sdk::cuda_dialect()}) {
    const std::string other = emit_c_family(small_kernel(4), *d).source;
    EXPECT_FALSE(contains(other, "kiln_load_f16x")) << other;
    EXPECT_TRUE(contains(other, "kiln_round_f16(")) << other;
  }
}

TEST(EmitterDialects, COmitsOpenMPWhenNotParallel) {
  const auto s = emit_c_family(small_kernel(), kiln::sdk::c_dialect()).source;
  EXPECT_FALSE(contains(s, "#pragma omp")) << s;
}

TEST(EmitterDialects, OpenCLUsesBuiltinsAndVload) {
  const auto s = emit_c_family(small_kernel(), kiln::sdk::opencl_dialect()).source;
  EXPECT_TRUE(contains(s, "__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void kiln_kernel(__global const ushort* v0, __global float* v1, long v2_in)")) << s;
  EXPECT_TRUE(contains(s, "get_group_id(0)")) << s;
  EXPECT_TRUE(contains(s, "vstore4(")) << s;
  EXPECT_TRUE(contains(s, "as_uint(")) << s;
  EXPECT_TRUE(contains(s, "((float4)(")) << s;  // broadcast
  EXPECT_TRUE(contains(s, ".s3")) << s;
  EXPECT_FALSE(contains(s, "#include")) << s;
}

TEST(EmitterDialects, CudaUsesBlockIdxAndAlignedStructs) {
  const auto s = emit_c_family(small_kernel(), kiln::sdk::cuda_dialect()).source;
  EXPECT_TRUE(contains(s, "extern \"C\" __global__ void kiln_kernel(const unsigned short* __restrict__ v0, float* v1, long long v2_in)")) << s;
  EXPECT_TRUE(contains(s, "blockIdx.x")) << s;
  EXPECT_TRUE(contains(s, "struct alignas(16) kiln_f32x4 { float v[4]; };")) << s;
  EXPECT_TRUE(contains(s, "__float_as_uint")) << s;
  EXPECT_TRUE(contains(s, ".v[3]")) << s;
}

// CUDA and OpenCL declare the i64 values the kernel bounds within 32 bits as
// int (Dialect::index32_type): constants, the group and loop indices and the
// arithmetic on them, here with a grid of 1000 groups. A value past 2^31 (a
// product, or a MAD whose product is) stays 64-bit and its 32-bit operands
// are converted first; a length from a VARIABLE param bounds nothing. The C
// dialect declares every i64 as long long.
TEST(EmitterDialects, IndicesBoundedWithin32BitsAreIntOnGpus) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 4000);
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, 4000);
  auto n = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 2);
  auto g = w.group_index(0, w.const_i64(1000));                                       // v4: [0, 999]
  auto i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(4));              // v6: [0, 3996]
  auto big = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(3000000));      // v8: past 2^31
  auto wide_mad = w.mad(KILN_DTYPE_I64, g, w.const_i64(3000000), w.const_i64(-2000000000));  // v11: fits, its product not
  auto l = w.loop(w.const_i64(4));                                                    // v13
  auto at = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, i, l);                          // v14
  w.store(KILN_DTYPE_F32, y, at, w.load(KILN_DTYPE_F32, x, at));
  w.end_loop(l);
  auto free = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, n, g);                        // v18: unbounded
  auto back = w.binary(KILN_BINARY_DIV, KILN_DTYPE_I64, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, big, wide_mad),
                       w.const_i64(6000000));
  w.store(KILN_DTYPE_F32, y, w.binary(KILN_BINARY_MIN, KILN_DTYPE_I64, back, free), w.const_f32(1.0f));
  // The line defining `name` in `source`.
  auto definition = [](const std::string& source, const std::string& name) {
    for (const std::string& start : {"const int " + name + " = ", "const long long " + name + " = ", "const long " + name + " = ",
                                     "for (int " + name + " = ", "for (long long " + name + " = ", "for (long " + name + " = "}) {
      const std::size_t at = source.find(start);
      if (at != std::string::npos) return source.substr(at, source.find('\n', at) - at);
    }
    return std::string("(no definition of " + name + ")");
  };
  for (const Dialect* d : {&kiln::sdk::cuda_dialect(), &kiln::sdk::opencl_dialect()}) {
    SCOPED_TRACE(std::string(d->name));
    const std::string s = emit_c_family(w.ops, *d).source;
    const std::string i64 = std::string(d->value_types[KILN_DTYPE_I64]);
    for (const char* name : {"v3", "v4", "v5", "v6", "v7", "v12", "v13", "v14"}) {
      const std::string line = definition(s, name);
      EXPECT_TRUE(line.starts_with("const int ") || line.starts_with("for (int ")) << line;
      // Computed in 32 bits (the group index converts the hardware's id).
      if (std::string(name) != "v4") {
        EXPECT_FALSE(contains(line, "long")) << line;
      }
    }
    // A constant outside int's range would stay 64-bit; these fit.
    EXPECT_TRUE(contains(definition(s, "v8"), "const " + i64 + " v8 = ")) << s;
    EXPECT_TRUE(contains(definition(s, "v8"), "(" + i64 + ")v4")) << definition(s, "v8");
    EXPECT_TRUE(contains(definition(s, "v8"), "(" + i64 + ")v7")) << definition(s, "v8");
    EXPECT_TRUE(contains(definition(s, "v11"), "const " + i64 + " v11 = ")) << s;
    EXPECT_TRUE(contains(definition(s, "v11"), "(" + i64 + ")v4")) << definition(s, "v11");
    EXPECT_TRUE(contains(definition(s, "v18"), "const " + i64 + " v18 = ")) << s;
    EXPECT_TRUE(contains(definition(s, "v21"), "const int v21 = ")) << definition(s, "v21");
    EXPECT_TRUE(contains(definition(s, "v21"), "(v20, (" + i64 + ")v19)")) << "a 64-bit division of v20: " << definition(s, "v21");
  }
  const std::string c = emit_c_family(w.ops, kiln::sdk::c_dialect()).source;
  EXPECT_FALSE(contains(c, "const int v")) << c;
  EXPECT_TRUE(contains(c, "const int64_t v4 = ")) << c;
}

// CUDA reads and writes a vector of halves of a buffer as one access of its
// bits (one 16-byte load or store for 8 lanes), converting lane by lane in
// registers; a store of halves rounded from f32 converts the f32 values once
// (rounding twice gives the same bits). So does a REGISTER array of halves
// (row_cache keeps 16-bit rows there as loaded), declared 16-byte aligned.
// Other dialects keep their lane-by-lane accesses.
TEST(EmitterDialects, CudaMovesHalfVectorsOfBuffersWhole) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F16, 0, 64);
  auto z = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, 64);
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F16, 2, 64);
  auto u = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_BF16, 3, 64);
  auto cache = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F16, 8);
  auto g = w.group_index(0, w.const_i64(8));
  auto i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(8));
  auto v = w.load(KILN_DTYPE_F16, x, i, 8);
  auto e = w.unary(KILN_UNARY_EXP, KILN_DTYPE_F16, v, 8);
  w.store(KILN_DTYPE_F16, cache, w.const_i64(0), e, 8);
  w.store(KILN_DTYPE_F16, y, i, w.load(KILN_DTYPE_F16, cache, w.const_i64(0), 8), 8);
  auto f = w.load(KILN_DTYPE_F32, z, i, 8);
  w.store(KILN_DTYPE_BF16, u, i, w.cast(KILN_DTYPE_BF16, f, 8), 8);
  const std::string s = emit_c_family(w.ops, kiln::sdk::cuda_dialect()).source;
  EXPECT_TRUE(contains(s, "struct alignas(16) kiln_u16x8 { unsigned short v[8]; };")) << s;
  EXPECT_TRUE(contains(s, "_bits = *(const kiln_u16x8*)(v0 + ")) << s;  // x: one load
  EXPECT_TRUE(contains(s, "kiln_f16_to_f32(v")) << s;
  EXPECT_TRUE(contains(s, "*(kiln_u16x8*)(v2 + ")) << s;  // y: one store
  EXPECT_TRUE(contains(s, "*(kiln_u16x8*)(v3 + ")) << s;  // u: one store
  EXPECT_TRUE(contains(s, "__align__(16) unsigned short v4[8];")) << s;  // the REGISTER array
  EXPECT_TRUE(contains(s, "*(kiln_u16x8*)(v4 + ")) << s;                   // one store into it
  EXPECT_TRUE(contains(s, " = *(const kiln_u16x8*)(v4 + ")) << s;          // one load from it
  // u's lanes convert the f32 loads themselves, not their bf16 roundings.
  const std::size_t store_u = s.find("*(kiln_u16x8*)(v3 + ");
  const std::size_t bits_u = s.rfind("_bits = {{kiln_f32_to_bf16(", store_u);
  ASSERT_NE(bits_u, std::string::npos) << s;
  const std::string f_name = "v" + std::to_string(f) + ".v[0]";
  EXPECT_EQ(s.compare(bits_u + 27, f_name.size(), f_name), 0) << s.substr(bits_u, 200);
  const std::string c = emit_c_family(w.ops, kiln::sdk::c_dialect()).source;
  EXPECT_FALSE(contains(c, "_bits = ")) << c;
}

TEST(EmitterDialects, LocalIndicesAndBarriers) {
  WireBuilder w;
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 0, 64);
  auto shared = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, 64);
  auto t = w.local_index(0, w.const_i64(64));
  w.store(KILN_DTYPE_F32, shared, t, w.const_f32(1.5f));
  w.barrier();
  w.store(KILN_DTYPE_F32, y, t, w.load(KILN_DTYPE_F32, shared, t));
  const auto cl = emit_c_family(w.ops, kiln::sdk::opencl_dialect()).source;
  EXPECT_TRUE(contains(cl, "__local float v1[64];")) << cl;
  EXPECT_TRUE(contains(cl, "barrier(CLK_LOCAL_MEM_FENCE);")) << cl;
  EXPECT_TRUE(contains(cl, "get_local_id(0)")) << cl;
  const auto cu = emit_c_family(w.ops, kiln::sdk::cuda_dialect()).source;
  EXPECT_TRUE(contains(cu, "__shared__ __align__(16) float v1[64];")) << cu;
  EXPECT_TRUE(contains(cu, "__syncthreads();")) << cu;
  EXPECT_TRUE(contains(cu, "threadIdx.x")) << cu;
  // C has one thread per group: a LOCAL axis longer than 1 is refused, naming the op.
  try {
    emit_c_family(w.ops, kiln::sdk::c_dialect());
    FAIL() << "expected UNSUPPORTED";
  } catch (const PluginError& e) {
    EXPECT_EQ(e.status(), KILN_STATUS_UNSUPPORTED);
    EXPECT_EQ(e.failed_op(), 3);
    EXPECT_TRUE(contains(e.what(), "op 3 (index i64)")) << e.what();
  }
}

TEST(EmitterDialects, UnsupportedLaneCountNamesTheOp) {
  try {
    emit_c_family(small_kernel(3), kiln::sdk::c_dialect());
    FAIL() << "expected UNSUPPORTED";
  } catch (const PluginError& e) {
    EXPECT_EQ(e.status(), KILN_STATUS_UNSUPPORTED);
    EXPECT_EQ(e.failed_op(), 7);  // the first 3-lane op: the load
    EXPECT_TRUE(contains(e.what(), "3-lane")) << e.what();
  }
  EXPECT_NO_THROW(emit_c_family(small_kernel(3), kiln::sdk::opencl_dialect()));
}

// A vector access at any element index (KILN_ACCESS_UNALIGNED): the C
// dialect moves it with memcpy and unaligned intrinsics, OpenCL with vloadn
// (element-aligned addresses); CUDA, whose vector accesses need aligned
// addresses, reads a buffer's through the aligned vectors around it
// (kiln_load_any, a helper only the kernels that call it define) and
// refuses such a store naming the op.
TEST(EmitterDialects, UnalignedVectorsOnlyWhereTheDialectTakesThem) {
  std::vector<kiln_op> ops = small_kernel(4);
  ops[7].attr = KILN_ACCESS_UNALIGNED;  // the f16x4 load
  EXPECT_NO_THROW(emit_c_family(ops, kiln::sdk::c_dialect()));
  EXPECT_NO_THROW(emit_c_family(ops, kiln::sdk::opencl_dialect()));
  const std::string cuda = emit_c_family(ops, kiln::sdk::cuda_dialect()).source;
  EXPECT_TRUE(contains(cuda, "= kiln_load_any<kiln_u16x4, 2>(v0 + ")) << cuda;
  EXPECT_TRUE(contains(cuda, "kiln_load_any_chunk(unsigned int* r")) << "the helper is defined where it is called";
  const std::string aligned = emit_c_family(small_kernel(4), kiln::sdk::cuda_dialect()).source;
  EXPECT_FALSE(contains(aligned, "kiln_load_any")) << "and only there: " << aligned;
  const auto store = static_cast<std::uint32_t>(ops.size() - 1);
  ASSERT_EQ(ops[store].kind, KILN_OP_STORE);
  ops[store].attr = KILN_ACCESS_UNALIGNED;  // the f32x4 store
  EXPECT_NO_THROW(emit_c_family(ops, kiln::sdk::c_dialect()));
  try {
    emit_c_family(ops, kiln::sdk::cuda_dialect());
    FAIL() << "expected UNSUPPORTED";
  } catch (const PluginError& e) {
    EXPECT_EQ(e.status(), KILN_STATUS_UNSUPPORTED);
    EXPECT_EQ(e.failed_op(), store);
    EXPECT_TRUE(contains(e.what(), "vector stores at any element index")) << e.what();
  }
}

// LOAD_MATRIX's attr is its matrix count: one matrix (attr 1) is not an
// access at any element index, and CUDA emits it.
TEST(EmitterDialects, OneMatrixLoadIsNotAnUnalignedAccess) {
  WireBuilder w;
  const auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_U16, 0, 64);
  const auto tile = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_U16, 64);
  const auto lid = w.local_index(0, w.const_i64(32));
  const auto at = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, lid, w.const_i64(2));
  w.store(KILN_DTYPE_U16, tile, at, w.const_bits(KILN_DTYPE_U16, 1));
  w.barrier();
  const auto fragment = w.op(KILN_OP_LOAD_MATRIX, KILN_DTYPE_U16, 0, tile, w.const_i64(0), KILN_NO_OPERAND, 1, 0, 2);
  w.store(KILN_DTYPE_U16, out, at, fragment, 2);
  EXPECT_TRUE(contains(emit_c_family(w.ops, kiln::sdk::cuda_dialect()).source, "ldmatrix"));
}

TEST(EmitterDialects, MalformedKernelsAreInvalidArguments) {
  WireBuilder w;
  auto y = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 4);  // read-only
  auto i = w.const_i64(0);
  w.store(KILN_DTYPE_F32, y, i, w.const_f32(1.0f));
  try {
    emit_c_family(w.ops, kiln::sdk::c_dialect());
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_EQ(e.status(), KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(e.failed_op(), 3);
  }
  WireBuilder forward;
  forward.unary(KILN_UNARY_NEG, KILN_DTYPE_F32, 5);  // operand after the op
  EXPECT_THROW(emit_c_family(forward.ops, kiln::sdk::c_dialect()), PluginError);
  WireBuilder unknown;
  unknown.op(77, KILN_DTYPE_F32);
  try {
    emit_c_family(unknown.ops, kiln::sdk::c_dialect());
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_EQ(e.status(), KILN_STATUS_UNSUPPORTED);
    EXPECT_EQ(e.failed_op(), 0);
  }
  // Garbage from a buggy host: unknown dtypes, codes and lanes are refused, never read out of range.
  for (std::uint8_t dtype : {0, 14, 200}) {
    WireBuilder bad;
    bad.const_bits(dtype, 1);
    EXPECT_THROW(emit_c_family(bad.ops, kiln::sdk::c_dialect()), PluginError) << int(dtype);
  }
  WireBuilder bad_code;
  bad_code.unary(99, KILN_DTYPE_F32, bad_code.const_f32(1));
  EXPECT_THROW(emit_c_family(bad_code.ops, kiln::sdk::c_dialect()), PluginError);
  WireBuilder bad_lanes;
  bad_lanes.broadcast(KILN_DTYPE_F32, bad_lanes.const_f32(1), 17);
  EXPECT_THROW(emit_c_family(bad_lanes.ops, kiln::sdk::c_dialect()), PluginError);
  WireBuilder unclosed;
  unclosed.loop(unclosed.const_i64(3));
  EXPECT_THROW(emit_c_family(unclosed.ops, kiln::sdk::c_dialect()), PluginError);
}

TEST(EmitterDialects, CapabilitiesFollowTheSpelling) {
  const Dialect& c = kiln::sdk::c_dialect();
  const auto f32 = kiln::sdk::c_family_dtype_ops(c, KILN_DTYPE_F32);
  EXPECT_TRUE(f32 & KILN_CAP_UNARY(KILN_UNARY_EXP));
  EXPECT_TRUE(f32 & KILN_CAP_BINARY(KILN_BINARY_POW));
  EXPECT_FALSE(f32 & KILN_CAP_BINARY(KILN_BINARY_SHL));
  const auto i32 = kiln::sdk::c_family_dtype_ops(c, KILN_DTYPE_I32);
  EXPECT_TRUE(i32 & KILN_CAP_BINARY(KILN_BINARY_SHL));
  EXPECT_FALSE(i32 & KILN_CAP_UNARY(KILN_UNARY_EXP));
  const auto b = kiln::sdk::c_family_dtype_ops(c, KILN_DTYPE_BOOL);
  EXPECT_TRUE(b & KILN_CAP_BINARY(KILN_BINARY_AND));
  EXPECT_FALSE(b & KILN_CAP_BINARY(KILN_BINARY_ADD));
  EXPECT_EQ(kiln::sdk::c_family_dtype_ops(c, KILN_DTYPE_INVALID), 0u);
  EXPECT_EQ(kiln::sdk::c_family_vector_widths(c), (1u << 1) | (1u << 2) | (1u << 4) | (1u << 8) | (1u << 16));
}

}  // namespace

namespace {

// Random op arrays (mostly invalid) must give source or a PluginError in
// every dialect: never a crash, never another exception.
TEST(EmitterDialects, RandomOpArraysNeverCrash) {
  std::uint64_t state = 12345;
  auto next = [&](std::uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % bound;
  };
  int emitted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<kiln_op> ops(1 + next(24));
    for (std::size_t id = 0; id < ops.size(); ++id) {
      kiln_op& op = ops[id];
      op.kind = static_cast<std::uint8_t>(next(KILN_OP_KIND_COUNT + 2));
      op.dtype = static_cast<std::uint8_t>(next(4) == 0 ? next(256) : 1 + next(13));
      op.lanes = static_cast<std::uint8_t>(next(3) == 0 ? next(20) : 1);
      op.code = static_cast<std::uint8_t>(next(22));
      op.attr = static_cast<std::uint32_t>(next(5));
      for (auto& s : op.src) s = next(5) == 0 ? KILN_NO_OPERAND : static_cast<std::uint32_t>(next(id + 2));
      op.imm = next(3) == 0 ? next(1u << 31) : next(8);
    }
    for (const kiln::sdk::Dialect* d : {&kiln::sdk::c_dialect(), &kiln::sdk::opencl_dialect(), &kiln::sdk::cuda_dialect(),
                                          &kiln::sdk::glsl_dialect()}) {
      try {
        emit_c_family(ops, *d);
        ++emitted;
      } catch (const PluginError& e) {
        EXPECT_NE(e.status(), KILN_STATUS_INTERNAL) << e.what();
      }
    }
  }
  EXPECT_GT(emitted, 0);  // some random kernels are valid
}

}  // namespace

namespace {

// f32x16 y = exp(x) into a written buffer of `n` elements.
std::vector<kiln_op> vector_exp(std::uint64_t n) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, n);
  auto g = w.group_index(0, w.const_i64(static_cast<std::int64_t>(n / 16)));
  auto i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(16));
  w.store(KILN_DTYPE_F32, y, i, w.unary(KILN_UNARY_EXP, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, x, i, 16), 16), 16);
  return w.ops;
}

TEST(EmitterDialects, CStreamsLargeVectorStoresAndFencesEachThread) {
  kiln::sdk::EmitOptions options;
  options.parallel = true;
  options.threads = 2;
  options.vector_math = true;
  const std::uint64_t large = kiln::sdk::kStreamingStoreBytes / 4;
  const auto out = emit_c_family(vector_exp(large), kiln::sdk::c_dialect(), options);
  const std::string& s = out.source;
  EXPECT_TRUE(out.shape.streaming_stores);
  EXPECT_TRUE(contains(s, "kiln_stream64(&v1[")) << s;
  EXPECT_TRUE(contains(s, "_mm512_stream_si512")) << s;
  // The fence ends each thread's share: inside the parallel region, after the loop.
  EXPECT_TRUE(contains(s, "#pragma omp parallel num_threads(2)\n  {\n  #pragma omp for schedule(static)\n")) << s;
  EXPECT_TRUE(contains(s, "  }\n  kiln_sfence();\n  }\n}\n")) << s;
  // The vector exp: one helper looping over the lanes of the inline exp.
  EXPECT_TRUE(contains(s, "kiln_simd_exp_f32_16(v")) << s;
  EXPECT_TRUE(contains(s, "#pragma omp simd")) << s;

  // Smaller buffers keep ordinary stores; without vector math, neither.
  const auto small = emit_c_family(vector_exp(large / 2), kiln::sdk::c_dialect(), options);
  EXPECT_FALSE(small.shape.streaming_stores);
  EXPECT_FALSE(contains(small.source, "kiln_stream64(&")) << small.source;
  EXPECT_TRUE(contains(small.source, "#pragma omp parallel for schedule(static) num_threads(2)")) << small.source;
  options.vector_math = false;
  const auto plain = emit_c_family(vector_exp(large), kiln::sdk::c_dialect(), options);
  EXPECT_FALSE(contains(plain.source, "kiln_stream64(&")) << plain.source;
  EXPECT_FALSE(contains(plain.source, "kiln_simd_")) << plain.source;
  // Other dialects never stream.
  EXPECT_FALSE(contains(emit_c_family(vector_exp(large), kiln::sdk::opencl_dialect()).source, "kiln_stream64"));
}

}  // namespace

namespace {

constexpr unsigned kMathOps[] = {KILN_UNARY_TANH,  KILN_UNARY_ERF,   KILN_UNARY_SIGMOID,
                                 KILN_UNARY_RSQRT, KILN_UNARY_LOG1P, KILN_UNARY_EXPM1};
constexpr unsigned kFloats[] = {KILN_DTYPE_F32, KILN_DTYPE_F64, KILN_DTYPE_F16, KILN_DTYPE_BF16};

// out = sum of the six math ops of x, f32, as scalars (lanes 1) or vectors.
std::vector<kiln_op> math_kernel(std::uint8_t dt, std::uint8_t lanes) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, dt, 0, 64);
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, dt, 1, 64);
  auto g = w.group_index(0, w.const_i64(64 / lanes));
  auto i = lanes == 1 ? g : w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(lanes));
  auto v = w.load(dt, x, i, lanes);
  auto sum = w.unary(static_cast<std::uint8_t>(kMathOps[0]), dt, v, lanes);
  for (std::size_t k = 1; k < std::size(kMathOps); ++k)
    sum = w.binary(KILN_BINARY_ADD, dt, sum, w.unary(static_cast<std::uint8_t>(kMathOps[k]), dt, v, lanes), lanes);
  w.store(dt, y, i, sum, lanes);
  return w.ops;
}

}  // namespace

// C, OpenCL C and CUDA spell all six ABI 1.1 math ops on every float dtype
// (f16/bf16 through float) and claim them in unary_dtypes[] only.
TEST(EmitterDialects, MathOpsInEveryCFamilyDialect) {
  for (const Dialect* d : {&kiln::sdk::c_dialect(), &kiln::sdk::opencl_dialect(), &kiln::sdk::cuda_dialect()}) {
    SCOPED_TRACE(std::string(d->name));
    for (unsigned dt : kFloats)
      for (unsigned u : kMathOps) EXPECT_TRUE(kiln::sdk::c_family_has_unary(*d, u, dt)) << kiln::sdk::unary_name(u);
    for (unsigned u : kMathOps) EXPECT_FALSE(kiln::sdk::c_family_has_unary(*d, u, KILN_DTYPE_I32));
    for (std::uint8_t lanes : {1, 4}) {
      const std::string s = emit_c_family(math_kernel(KILN_DTYPE_F32, lanes), *d).source;
      EXPECT_TRUE(contains(s, "kiln_sigmoid_f32(")) << s;
      // The helper is defined once, and before its first use.
      const std::size_t defined = s.find("kiln_sigmoid_f32(float x)");
      ASSERT_NE(defined, std::string::npos) << s;
      EXPECT_EQ(s.find("kiln_sigmoid_f32("), defined) << s;
      EXPECT_EQ(s.rfind("kiln_sigmoid_f32(float x)"), defined) << s;
      EXPECT_TRUE(contains(s, "log1p")) << s;
    }
    const std::string f16 = emit_c_family(math_kernel(KILN_DTYPE_F16, 1), *d).source;
    EXPECT_TRUE(contains(f16, "kiln_round_f16(")) << f16;  // computed in float, rounded per op
  }
  EXPECT_TRUE(contains(emit_c_family(math_kernel(KILN_DTYPE_F32, 1), kiln::sdk::c_dialect()).source, "kiln_rsqrt_f32("));
  EXPECT_TRUE(contains(emit_c_family(math_kernel(KILN_DTYPE_F32, 1), kiln::sdk::opencl_dialect()).source, "rsqrt("));
  EXPECT_TRUE(contains(emit_c_family(math_kernel(KILN_DTYPE_F64, 1), kiln::sdk::cuda_dialect()).source, "rsqrt("));
}
