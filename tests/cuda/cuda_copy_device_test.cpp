// The asynchronous copies (cp.async) and the warp's matrix loads (ldmatrix)
// on a CUDA device, bit for bit against the reference interpreter: 16-byte
// copies into shared memory in two groups, one of them zero-filled where a
// condition is false, waited for and read across the barrier by another
// thread; every count and form of LOAD_MATRIX. Without a driver, or on a
// device that does not claim the ops (before sm_80), the tests skip visibly.
#include <gtest/gtest.h>

#include "cuda_plugin_fixture.hpp"
#include "support/kernel_runner.hpp"

#include <kiln/ir/text.hpp>
#include <kiln/sdk/capabilities.hpp>

#include <bit>
#include <memory>
#include <random>

using kiln::test::AbiError;
using kiln::test::AbiPlugin;
using kiln::test::HostArg;

namespace {

std::vector<kiln_op> wire(const std::string& text) {
  auto kernel = kiln::ir::parse(text);
  EXPECT_TRUE(kernel.ok()) << (kernel.ok() ? "" : kernel.error().message);
  return kernel.ok() ? kernel->to_wire() : std::vector<kiln_op>{};
}

// 64 threads: chunk t of x copied to LOCAL [4t] (group 0), and to
// [256 + 4t] where t is even, zeros where it is odd (group 1); after the wait
// and the barrier thread t writes the chunks thread 63 - t copied.
constexpr const char* kCopies = R"(%0 = param 0 global f32[256]
%1 = param 1 global_mut f32[512]
%2 = storage local f32[512]
%3 = const i64 64
%4 = index local 0 %3
%5 = const i64 4
%6 = mul i64 %4, %5
%7 = load f32x4 %0[%6]
copy_async f32x4 %2[%6], %7
copy_commit
%10 = const i64 256
%11 = add i64 %6, %10
%12 = const i64 2
%13 = mod i64 %4, %12
%14 = const i64 0
%15 = eq %13, %14
%16 = select i64 %15, %6, %14
%17 = load f32x4 %0[%16]
%18 = const f32 0
%19 = broadcast f32x4 %18
%20 = select f32x4 %15, %17, %19
copy_async f32x4 %2[%11], %20
copy_commit
copy_wait 0
barrier
%25 = const i64 63
%26 = sub i64 %25, %4
%27 = mul i64 %26, %5
%28 = load f32x4 %2[%27]
store f32x4 %1[%6], %28
%30 = add i64 %27, %10
%31 = load f32x4 %2[%30]
store f32x4 %1[%11], %31
)";

// 32 threads write a u16 tile; every LOAD_MATRIX form reads it back.
constexpr const char* kMatrices = R"(%0 = param 0 global u16[256]
%1 = param 1 global_mut u16[1024]
%2 = storage local u16[256]
%3 = const i64 32
%4 = index local 0 %3
%5 = const i64 8
%6 = mul i64 %4, %5
%7 = load u16x8 %0[%6]
store u16x8 %2[%6], %7
barrier
%10 = load_matrix x4 u16 %2[%6]
%11 = load_matrix x4 trans u16 %2[%6]
%12 = load_matrix x2 trans u16 %2[%6]
%13 = load_matrix x1 u16 %2[%6]
%14 = const i64 32
%15 = mul i64 %4, %14
store u16x8 %1[%15], %10
%17 = add i64 %15, %5
store u16x8 %1[%17], %11
%19 = add i64 %17, %5
store u16x4 %1[%19], %12
%21 = add i64 %19, %5
store u16x2 %1[%21], %13
)";

class CudaCopyDevice : public kiln::test::CudaPluginTest {
 protected:
  // The device's outputs equal the interpreter's bit for bit.
  void expect_interpreters_bits(const std::vector<kiln_op>& ops, std::vector<HostArg> args) {
    const std::vector<HostArg> want = kiln::conformance::interpreted(ops, args);
    try {
      const std::string source = kiln::conformance::run_kernel(*plugin, device, ops, args);
      EXPECT_EQ(args.back().bytes, want.back().bytes) << source;
    } catch (const AbiError& e) {
      ADD_FAILURE() << e.what();
    }
  }
};

}  // namespace

TEST_F(CudaCopyDevice, AsyncCopiesAndTheirZeroFillGiveTheInterpretersBits) {
  const kiln_device_info info = plugin->info(0);
  if (!kiln::sdk::has_op_kind(info, KILN_DTYPE_F32, KILN_OP_COPY_ASYNC))
    GTEST_SKIP() << info.name << " does not claim copy_async (sm_80 or later does)";
  std::mt19937_64 rng(7);
  HostArg x = HostArg::buffer(KILN_DTYPE_F32, 256);
  for (std::size_t e = 0; e < 256; ++e) x.set(e, std::bit_cast<std::uint32_t>(static_cast<float>(rng() % 2001) / 8 - 125));
  expect_interpreters_bits(wire(kCopies), {x, HostArg::poisoned(KILN_DTYPE_F32, 512)});
}

TEST_F(CudaCopyDevice, MatrixLoadsGiveTheInterpretersBits) {
  const kiln_device_info info = plugin->info(0);
  if (!kiln::sdk::has_op_kind(info, KILN_DTYPE_U16, KILN_OP_LOAD_MATRIX))
    GTEST_SKIP() << info.name << " does not claim load_matrix (sm_80 or later does)";
  HostArg x = HostArg::buffer(KILN_DTYPE_U16, 256);
  for (std::size_t e = 0; e < 256; ++e) x.set(e, (e * 2654435761u) >> 11 & 0xFFFF);
  expect_interpreters_bits(wire(kMatrices), {x, HostArg::poisoned(KILN_DTYPE_U16, 1024)});
}
