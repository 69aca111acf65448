// WGMMA on the reference interpreter: every tested N, f16 and bf16, against
// kernel_ir.h's layout (the 128-byte swizzle, the fragment) and numerics (k
// ascending, each product and sum rounded) written out here as a plain loop;
// the group and wait semantics; the faults of the contract (no fence, a
// partial warp group, an accumulator read before its wait, misplaced tiles).
#include <gtest/gtest.h>

#include "interp_util.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/sdk/half.hpp"

#include <cstring>
#include <random>
#include <string>

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr unsigned kTile = 8192;  // LOCAL elements: A at 0 .. 4095, B at 4096 ..

// 128 threads; thread l copies x[64l .. 64l + 64) into LOCAL as they are
// (the test reads them through the swizzle) and its 128 accumulators from
// c[128l ..]; after a barrier and a fence runs `body`, then stores the
// accumulators into out[128l ..]. %20 = the i64x2 tile pair (a, b).
std::vector<kiln_op> kernel(const std::string& dtype, std::uint64_t a, std::uint64_t b, const std::string& body,
                            bool fence = true) {
  const std::string text = "%0 = param 0 global " + dtype + "[8192]\n" + R"(%1 = param 1 global f32[16384]
%2 = param 2 global_mut f32[16384]
%3 = storage local )" + dtype + R"([8192]
%4 = storage register f32[128]
%5 = const i64 128
%6 = index local 0 %5
%7 = const i64 64
%8 = mul i64 %6, %7
%9 = const i64 8
%10 = loop %9
%11 = mul i64 %10, %9
%12 = add i64 %8, %11
%13 = load )" + dtype + R"(x8 %0[%12]
store %3[%12], %13
endloop %10
%16 = const i64 32
%17 = loop %16
%18 = const i64 4
%19 = mul i64 %17, %18
%21 = mul i64 %6, %5
%22 = add i64 %21, %19
%23 = load f32x4 %1[%22]
store %4[%19], %23
endloop %17
barrier
)" + std::string(fence ? "wgmma_fence\n" : "") +
                           "%27 = const i64 " + std::to_string(a) + "\n%28 = const i64 " + std::to_string(b) +
                           "\n%29 = broadcast i64x2 %27\n%20 = insert i64x2 %29[1], %28\n" + body + R"(
%40 = loop %16
%41 = const i64 4
%42 = mul i64 %40, %41
%43 = mul i64 %6, %5
%44 = add i64 %43, %42
%45 = load f32x4 %4[%42]
store %2[%44], %45
endloop %40
)";
  auto parsed = ir::parse(text);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message) << "\n" << text;
  return parsed.ok() ? parsed->to_wire() : std::vector<kiln_op>{};
}

// The elements of a random matrix of f16 or bf16 values (as bits).
std::vector<std::uint16_t> random_halves(bool bf16, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<std::uint16_t> bits(kTile);
  for (auto& h : bits) h = bf16 ? sdk::f32_to_bf16_bits(dist(gen)) : sdk::f32_to_f16_bits(dist(gen));
  return bits;
}

float value_of(bool bf16, std::uint16_t bits) { return bf16 ? sdk::bf16_bits_to_f32(bits) : sdk::f16_bits_to_f32(bits); }

// kernel_ir.h written out: element e is kept at e ^ ((e >> 6) % 8 << 3).
std::uint64_t swizzled(std::uint64_t e) { return e ^ (((e >> 6) & 7u) << 3); }

// Every accumulator element of an m64n<n>k<k> WGMMA (the first n / 2 a
// thread; the rest as they came in from c) against the plain loop:
// k ascending, each product and sum rounded, A[row][k] and B[k][col] given
// as the contract reads them (f16/bf16 values, or tf32).
template <typename AOf, typename BOf>
void expect_contract(const std::vector<float>& out, const std::vector<float>& c, unsigned n, unsigned k_count, AOf a_of,
                     BOf b_of) {
  for (unsigned thread = 0; thread < 128; ++thread)
    for (unsigned i = 0; i < 128; ++i) {
      float want = c[128 * thread + i];
      if (i < n / 2) {
        // D[16w + g + 8((i/2)%2)][8(i/4) + 2t + i%2], w = thread / 32, g = lane / 4, t = lane % 4.
        const unsigned lane = thread % 32, row = 16 * (thread / 32) + lane / 4 + 8 * ((i / 2) % 2);
        const unsigned col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        for (unsigned k = 0; k < k_count; ++k) {
          volatile float product = a_of(row, k) * b_of(k, col);  // rounded on its own, as the contract's
          want = want + product;
        }
      }
      ASSERT_EQ(out[128 * thread + i], want) << "thread " << thread << " element " << i;
    }
}

}  // namespace

TEST(InterpreterWgmma, EveryNAndDtypeFollowsTheContract) {
  for (const bool bf16 : {false, true})
    for (unsigned n = 8; n <= 256; n += 8)
      for (const std::uint64_t a : {0ull, 16ull, 48ull}) {
        const std::string dtype = bf16 ? "bf16" : "f16";
        SCOPED_TRACE(dtype + " n" + std::to_string(n) + " a=" + std::to_string(a));
        std::vector<std::uint16_t> x = random_halves(bf16, n + static_cast<unsigned>(a));
        std::vector<float> c = random_floats(16384, 7 * n), out(16384, 0.0f);
        const std::string body = "wgmma n" + std::to_string(n) + " " + dtype + " %3[%20], %4\nwgmma_commit\nwgmma_wait 0";
        run_ok(kernel(dtype, a, 4096, body), {sdk::host_buffer_arg(std::span(x)), arg_of(c), arg_of(out)});
        ASSERT_NO_FATAL_FAILURE(expect_contract(
            out, c, n, 16, [&](unsigned row, unsigned k) { return value_of(bf16, x[swizzled(a + 64 * row + k)]); },
            [&](unsigned k, unsigned col) { return value_of(bf16, x[swizzled(4096 + 1024 * (col / 64) + 64 * k + col % 64)]); }));
      }
}

TEST(InterpreterWgmma, OpsOnOneAccumulatorApplyInIssueOrderAtTheirWait) {
  // Two WGMMAs (k 0..15 of A's row, then 16..31) into one accumulator in two
  // groups: wait 1 does the first only, wait 0 both; the sum runs k ascending.
  std::vector<std::uint16_t> x = random_halves(false, 3);
  std::vector<float> c = random_floats(16384, 4), both(16384), first(16384);
  const std::string second = "%30 = const i64 16\n%31 = const i64 1024\n%32 = add i64 %27, %30\n%33 = add i64 %28, %31\n"
                             "%34 = broadcast i64x2 %32\n%35 = insert i64x2 %34[1], %33\n";
  run_ok(kernel("f16", 0, 4096, second + "wgmma n64 f16 %3[%20], %4\nwgmma_commit\nwgmma n64 f16 %3[%35], %4\nwgmma_commit\nwgmma_wait 0"),
         {sdk::host_buffer_arg(std::span(x)), arg_of(c), arg_of(both)});
  run_ok(kernel("f16", 0, 4096, second + "wgmma n64 f16 %3[%20], %4\nwgmma_commit\nwgmma_wait 0"),
         {sdk::host_buffer_arg(std::span(x)), arg_of(c), arg_of(first)});
  // The second op reads B's next k slice (b + 1024 with N = 64: k 16..31 of a 32-row B).
  for (unsigned thread = 0; thread < 128; thread += 37)
    for (unsigned i = 0; i < 32; ++i) {
      const unsigned lane = thread % 32, row = 16 * (thread / 32) + lane / 4 + 8 * ((i / 2) % 2);
      const unsigned col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
      float want = first[128 * thread + i];
      for (unsigned k = 0; k < 16; ++k) {
        volatile float product = sdk::f16_bits_to_f32(x[swizzled(16 + 64 * row + k)]) *
                                 sdk::f16_bits_to_f32(x[swizzled(5120 + 64 * k + col)]);
        want = want + product;
      }
      EXPECT_EQ(both[128 * thread + i], want) << thread << " " << i;
    }
  // wgmma_wait 1 after two groups leaves the second pending: reading the
  // accumulator then is a fault.
  expect_fault(kernel("f16", 0, 4096, second + "wgmma n64 f16 %3[%20], %4\nwgmma_commit\nwgmma n64 f16 %3[%35], %4\n"
                                               "wgmma_commit\nwgmma_wait 1"),
               {sdk::host_buffer_arg(std::span(x)), arg_of(c), arg_of(both)}, "while a wgmma into it is pending");
}

TEST(InterpreterWgmma, FaultsOfTheContract) {
  std::vector<std::uint16_t> x = random_halves(false, 1);
  std::vector<float> c = random_floats(16384, 2), out(16384);
  const std::vector<kiln_arg> args = {sdk::host_buffer_arg(std::span(x)), arg_of(c), arg_of(out)};
  const std::string ok = "wgmma n64 f16 %3[%20], %4\nwgmma_commit\nwgmma_wait 0";
  expect_fault(kernel("f16", 0, 4096, ok, false), args, "no wgmma_fence");
  expect_fault(kernel("f16", 8, 4096, ok), args, "is not a row start");
  expect_fault(kernel("f16", 0, 4160, ok), args, "is not the start of an 8 x 64 atom");
  expect_fault(kernel("f16", 0, 8192, ok), args, "out of range");
  // Never waited for: the accumulator is read while the op is pending.
  expect_fault(kernel("f16", 0, 4096, "wgmma n64 f16 %3[%20], %4\nwgmma_commit"), args, "while a wgmma into it is pending");
  // Uncommitted ops are not waited for.
  expect_fault(kernel("f16", 0, 4096, "wgmma n64 f16 %3[%20], %4\nwgmma_wait 0"), args, "while a wgmma into it is pending");
  // Half a warp group.
  expect_fault(kernel("f16", 0, 4096, "%36 = cmplt %6, %7\nif %36\nwgmma n64 f16 %3[%20], %4\nendif\nwgmma_commit\nwgmma_wait 0"),
               args, "divergent wgmma");
}

namespace {

// kernel_ir.h's tf32 form written out: 4-byte elements, 32 to a swizzle row.
std::uint64_t swizzled_tf32(std::uint64_t e) { return e ^ (((e >> 5) & 7u) << 2); }

// An f32 with its low 13 mantissa bits cleared (the tf32 the tensor cores read).
float truncated_to_tf32(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits &= ~0x1fffu;
  std::memcpy(&x, &bits, 4);
  return x;
}

}  // namespace

TEST(InterpreterWgmma, Tf32EveryNFollowsTheContract) {
  // Random f32 inputs, most with bits below tf32's 10 mantissa bits: the
  // loop below reads each as the contract does (low 13 bits dropped), A and
  // B both K-major, k 0..7.
  for (unsigned n = 8; n <= 256; n += 8)
    for (const std::uint64_t a : {0ull, 8ull, 24ull})
      for (std::uint64_t b : {2048ull, 2064ull}) {
        if (b + 32 * (n - 1) + 8 > kTile) b -= 2048;  // n > 192: B over A (both only read)
        SCOPED_TRACE("n" + std::to_string(n) + " a=" + std::to_string(a) + " b=" + std::to_string(b));
        std::vector<float> x = random_floats(kTile, 3 * n + static_cast<unsigned>(a + b));
        std::vector<float> c = random_floats(16384, 7 * n), out(16384, 0.0f);
        const std::string body = "wgmma n" + std::to_string(n) + " f32 %3[%20], %4\nwgmma_commit\nwgmma_wait 0";
        run_ok(kernel("f32", a, b, body), {arg_of(x), arg_of(c), arg_of(out)});
        expect_contract(
            out, c, n, 8, [&](unsigned row, unsigned k) { return truncated_to_tf32(x[swizzled_tf32(a + 32 * row + k)]); },
            [&](unsigned k, unsigned col) { return truncated_to_tf32(x[swizzled_tf32(b + 32 * col + k)]); });
      }
}

TEST(InterpreterWgmma, Tf32DropsTheLowMantissaBits) {
  // A = 1 + 2^-11 everywhere (rounded to nearest it would be 1 + 2^-10),
  // B = 1: each of the 8 products is exactly 1, so D = C + 8.
  std::vector<float> x(kTile, 1.0f + 0x1p-11f), c(16384, 0.5f), out(16384);
  run_ok(kernel("f32", 0, 4096, "wgmma n8 f32 %3[%20], %4\nwgmma_commit\nwgmma_wait 0"), {arg_of(x), arg_of(c), arg_of(out)});
  for (unsigned thread = 0; thread < 128; ++thread)
    for (unsigned i = 0; i < 4; ++i) ASSERT_EQ(out[128 * thread + i], 8.5f) << thread << " " << i;
}

TEST(InterpreterWgmma, Tf32FaultsOfTheContract) {
  std::vector<float> x = random_floats(kTile, 1), c = random_floats(16384, 2), out(16384);
  const std::vector<kiln_arg> args = {arg_of(x), arg_of(c), arg_of(out)};
  const std::string ok = "wgmma n64 f32 %3[%20], %4\nwgmma_commit\nwgmma_wait 0";
  expect_fault(kernel("f32", 4, 4096, ok), args, "is not a row start (+0, 8, 16 or 24) of an 8 x 32 atom");
  expect_fault(kernel("f32", 0, 4100, ok), args, "is not a row start (+0, 8, 16 or 24) of an 8 x 32 atom");
  expect_fault(kernel("f32", 0, 8192 - 256, ok), args, "out of range");
}

namespace {

// kernel_ir.h's A from registers written out: A[row][k] is element
// (row % 16) / 8 + 2 (k / 4) of warp-group thread 32 (row / 16) + 4 (row % 8)
// + k % 4's fragment.
float fragment_element(const std::vector<float>& c, std::uint64_t a, unsigned row, unsigned k) {
  const unsigned thread = 32 * (row / 16) + 4 * (row % 8) + k % 4, element = (row % 16) / 8 + 2 * (k / 4);
  return truncated_to_tf32(c[128 * thread + a + element]);
}

}  // namespace

TEST(InterpreterWgmma, Tf32AFromRegistersFollowsTheContract) {
  // The accumulators' storage (128 elements a thread, from c) holds the
  // fragments at a .. a + 3, past the N / 2 accumulators; B in LOCAL.
  for (unsigned n : {8u, 64u, 128u, 200u, 248u})
    for (std::uint64_t b : {2048ull, 2072ull}) {
      if (b + 32 * (n - 1) + 8 > kTile) b -= 2048;  // n > 192 (A is not in LOCAL)
      const std::uint64_t a = n / 2 + (n == 64 ? 9 : 0);
      SCOPED_TRACE("n" + std::to_string(n) + " a=" + std::to_string(a) + " b=" + std::to_string(b));
      std::vector<float> x = random_floats(kTile, 5 * n + static_cast<unsigned>(b));
      std::vector<float> c = random_floats(16384, 11 * n), out(16384, 0.0f);
      const std::string body = "wgmma n" + std::to_string(n) + " a_regs f32 %3[%20], %4\nwgmma_commit\nwgmma_wait 0";
      run_ok(kernel("f32", a, b, body), {arg_of(x), arg_of(c), arg_of(out)});
      expect_contract(
          out, c, n, 8, [&](unsigned row, unsigned k) { return fragment_element(c, a, row, k); },
          [&](unsigned k, unsigned col) { return truncated_to_tf32(x[swizzled_tf32(b + 32 * col + k)]); });
    }
}

TEST(InterpreterWgmma, Tf32AFromRegistersFaults) {
  std::vector<float> x = random_floats(kTile, 1), c = random_floats(16384, 2), out(16384);
  const std::vector<kiln_arg> args = {arg_of(x), arg_of(c), arg_of(out)};
  const std::string ok = "wgmma n64 a_regs f32 %3[%20], %4\nwgmma_commit\nwgmma_wait 0";
  // Over the accumulator, or past the storage.
  expect_fault(kernel("f32", 28, 4096, ok), args, "are not past the accumulator's 32 elements");
  expect_fault(kernel("f32", 125, 4096, ok), args, "inside its storage of 128");
  expect_fault(kernel("f32", 32, 4100, ok), args, "is not a row start (+0, 8, 16 or 24) of an 8 x 32 atom");
  // Never waited for: the fragments' storage is the accumulator's, read while pending.
  expect_fault(kernel("f32", 32, 4096, "wgmma n64 a_regs f32 %3[%20], %4\nwgmma_commit"), args, "while a wgmma into it is pending");
  // While the op is pending its fragment's elements may not be written; the
  // storage's others may (the next step's fragments).
  const std::string write_at = "%36 = const f32 1.5\n%38 = const i64 ";
  const std::string issue = "wgmma n64 a_regs f32 %3[%20], %4\nwgmma_commit\n";
  expect_fault(kernel("f32", 32, 4096, issue + write_at + "34\nstore %4[%38], %36\nwgmma_wait 0"), args,
               "writes element 34 of REGISTER storage");
  run_ok(kernel("f32", 32, 4096, issue + write_at + "36\nstore %4[%38], %36\nwgmma_wait 0"), args);
}
