// Compile on the dummy: structural errors (INVALID_ARGUMENT) and what the
// configured device lacks (UNSUPPORTED), each naming the op in failed_op;
// program source and cache key.
#include <gtest/gtest.h>

#include "dummy_util.hpp"
#include "support/wire_kernels.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Id = WireBuilder::Id;

// Expects compile to fail with `status`, `fragment` in the message and failed_op == op.
void expect_compile_error(const AbiPlugin& plugin, const std::vector<kiln_op>& ops, kiln_status status,
                          const std::string& fragment, std::int64_t op) {
  kiln_device* device = plugin.open(0);
  std::int64_t failed_op = -2;
  expect_abi_error([&] { plugin.compile(device, ops, &failed_op); }, status, fragment);
  EXPECT_EQ(failed_op, op) << fragment;
}

// y = f(x) over 64 elements of `dt`, with `lanes`-wide accesses.
std::vector<kiln_op> unary_kernel(std::uint8_t dt, std::uint8_t op, std::uint8_t lanes = 1) {
  WireBuilder w;
  const Id x = w.param(KILN_PARAM_GLOBAL, dt, 0, 64);
  const Id y = w.param(KILN_PARAM_GLOBAL_MUT, dt, 1, 64);
  const Id at = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, w.group_index(0, w.const_i64(64 / lanes)), w.const_i64(lanes));
  w.store(dt, y, at, w.unary(op, dt, w.load(dt, x, at, lanes), lanes), lanes);
  return w.ops;
}

}  // namespace

TEST(DummyCompile, StructuralErrorsAreInvalidArgumentsNamingTheOp) {
  auto plugin = load_dummy();
  auto ops = wire_add_f32(8);
  ops[7].src[1] = 7;  // the add uses itself
  expect_compile_error(*plugin, ops, KILN_STATUS_INVALID_ARGUMENT, "op 7 (binary): operand 1 (op 7) does not precede", 7);
  ops = wire_add_f32(8);
  ops[8].src[0] = 0;  // store to a read-only param
  expect_compile_error(*plugin, ops, KILN_STATUS_INVALID_ARGUMENT, "stores to the read-only param at op 0", 8);
}

TEST(DummyCompile, RejectsWhatTheDeviceLacksWithFailedOp) {
  auto plugin = load_dummy(R"({"simulate": [{"dtypes": ["f32", "f16"], "unsupported_ops": {"f16": ["exp"]},
      "vector_widths": [2], "max_local_dims": [64, 64, 64], "max_local_threads": 128, "local_memory_bytes": 1024}]})");
  // f64 is not among the dtypes: the first op of that dtype is named.
  expect_compile_error(*plugin, unary_kernel(KILN_DTYPE_F64, KILN_UNARY_NEG), KILN_STATUS_UNSUPPORTED,
                       "op 0 (param): dtype f64 is not supported on device 'dummy-gpu'", 0);
  // exp on f16 is switched off; neg on f16 is fine.
  const auto exp16 = unary_kernel(KILN_DTYPE_F16, KILN_UNARY_EXP);
  expect_compile_error(*plugin, exp16, KILN_STATUS_UNSUPPORTED, "exp on f16 is not supported", 7);
  plugin->api().program_release(plugin->compile(plugin->open(0), unary_kernel(KILN_DTYPE_F16, KILN_UNARY_NEG)));
  // 4-lane vectors are not in vector_widths; 2-lane ones are.
  expect_compile_error(*plugin, unary_kernel(KILN_DTYPE_F32, KILN_UNARY_NEG, 4), KILN_STATUS_UNSUPPORTED,
                       "4-lane vectors are not supported", 6);
  plugin->api().program_release(plugin->compile(plugin->open(0), unary_kernel(KILN_DTYPE_F32, KILN_UNARY_NEG, 2)));
  // LOCAL sizes: 128 threads on axis 0 exceed max_local_dims[0] = 64; 64 x 4 exceed max_local_threads.
  WireBuilder wide;
  const Id l0 = wide.local_index(0, wide.const_i64(128));
  expect_compile_error(*plugin, wide.ops, KILN_STATUS_UNSUPPORTED, "LOCAL length 128 on axis 0 exceeds max_local_dims 64", l0);
  WireBuilder many;
  many.local_index(0, many.const_i64(64));
  const Id l1 = many.local_index(1, many.const_i64(4));
  expect_compile_error(*plugin, many.ops, KILN_STATUS_UNSUPPORTED, "256 threads per group exceed max_local_threads 128", l1);
  // LOCAL storage: 1024 bytes allowed; the second storage goes over.
  WireBuilder local;
  local.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, 200);
  const Id second = local.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, 100);
  expect_compile_error(*plugin, local.ops, KILN_STATUS_UNSUPPORTED,
                       "1200 bytes of LOCAL storage exceed local_memory_bytes 1024", second);
}

TEST(DummyCompile, ProgramSourceIsAReadableListing) {
  auto plugin = load_dummy();
  kiln_device* device = plugin->open(0);
  kiln_program* program = plugin->compile(device, wire_add_f32(8));
  kiln_program_source_args a{};
  a.struct_size = KILN_PROGRAM_SOURCE_ARGS_STRUCT_SIZE;
  a.program = program;
  check(plugin->api().program_source(&a));
  EXPECT_STREQ(a.language, "kiln-ir");
  const std::string text(a.text, a.text_len);
  EXPECT_NE(text.find("%0 = param global f32 slot 0 [8]"), std::string::npos) << text;
  EXPECT_NE(text.find("%4 = index group 0 len %3"), std::string::npos) << text;
  EXPECT_NE(text.find("%7 = add f32 %5, %6"), std::string::npos) << text;
  EXPECT_NE(text.find("store f32 %2[%4] = %7"), std::string::npos) << text;
  plugin->api().program_release(program);
}

TEST(DummyCompile, CacheKeyFollowsTheDeviceOptions) {
  auto key = [](const std::string& options, std::uint32_t index) {
    auto plugin = load_dummy(options);
    kiln_cache_key_args a{};
    a.struct_size = KILN_CACHE_KEY_ARGS_STRUCT_SIZE;
    a.device = plugin->open(index);
    check(plugin->api().cache_key(&a));
    return std::string(a.key);
  };
  const std::string two = R"({"simulate": [{"warp_size": 32}, {"warp_size": 64}]})";
  EXPECT_EQ(key(two, 0), key(two, 0));                    // stable across inits
  EXPECT_NE(key(two, 0), key(two, 1));                    // options differ
  EXPECT_EQ(key("{}", 0), key(R"({"simulate": [{}]})", 0));  // defaults are defaults
  EXPECT_NE(key("{}", 0), key(R"({"simulate": [{"launch_overhead_ns": 1}]})", 0));  // model parameters count
  EXPECT_EQ(key("{}", 0).rfind("dummy 0.1.0 ", 0), 0u);
}
