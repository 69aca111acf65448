// Fuzzing: thousands of garbage op arrays and random mutations of valid
// kernels (fixed seed, a few seconds at most). Each must give a program and
// a run, or a PluginError: never a crash, a hang, another exception or an
// out-of-bounds access (run under -fsanitize=address,undefined to see that).
#include <gtest/gtest.h>

#include <chrono>

#include "interp_util.hpp"
#include "support/wire_kernels.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Clock = std::chrono::steady_clock;

// Valid kernels to mutate: they cover loads/stores of several dtypes,
// vectors, loops, ifs, LOCAL storage with barriers and REGISTER storage.
std::vector<std::vector<kiln_op>> seed_kernels() {
  std::vector<std::vector<kiln_op>> seeds;
  seeds.push_back(wire_add_f32(16));
  seeds.push_back(wire_tree_sum(3, 8));  // LOCAL storage, barriers, loops, ifs
  {  // integer row sums with a VARIABLE count, REGISTER accumulator, casts and selects
    WireBuilder w;
    const Id px = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_I16, 0, 64);
    const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I64, 1, 8);
    const Id count = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 2);
    const Id acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_I64, 1);
    const Id zero = w.const_i64(0);
    const Id i = w.group_index(0, w.const_i64(8));
    w.store(KILN_DTYPE_I64, acc, zero, zero);
    const Id k = w.loop(count);
    const Id v = w.cast(KILN_DTYPE_I64, w.load(KILN_DTYPE_I16, px, w.mad(KILN_DTYPE_I64, i, w.const_i64(8), k)));
    const Id pos = w.binary(KILN_BINARY_CMPGT, KILN_DTYPE_BOOL, v, zero);
    w.store(KILN_DTYPE_I64, acc, zero,
            w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.load(KILN_DTYPE_I64, acc, zero), w.select(KILN_DTYPE_I64, pos, v, zero)));
    w.end_loop(k);
    w.store(KILN_DTYPE_I64, po, i, w.binary(KILN_BINARY_DIV, KILN_DTYPE_I64, w.load(KILN_DTYPE_I64, acc, zero), w.const_i64(3)));
    seeds.push_back(w.ops);
  }
  {  // vectors of f16: broadcast, insert, extract, lane-wise math
    WireBuilder w;
    const Id px = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F16, 0, 32);
    const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F16, 1, 32);
    const Id g = w.group_index(0, w.const_i64(8));
    const Id at = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(4));
    const Id v = w.load(KILN_DTYPE_F16, px, at, 4);
    const Id e = w.unary(KILN_UNARY_EXP, KILN_DTYPE_F16, w.extract(KILN_DTYPE_F16, v, 2));
    const Id u = w.insert(KILN_DTYPE_F16, w.broadcast(KILN_DTYPE_F16, e, 4), w.extract(KILN_DTYPE_F16, v, 0), 1, 4);
    w.store(KILN_DTYPE_F16, po, at, w.binary(KILN_BINARY_MUL, KILN_DTYPE_F16, v, u, 4), 4);
    seeds.push_back(w.ops);
  }
  return seeds;
}

std::uint64_t random_imm(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: return rng() % 8;
    case 1: return rng() % 100;
    case 2: return ~std::uint64_t{0} - rng() % 4;
    default: return rng();
  }
}

std::uint32_t random_operand(std::mt19937_64& rng, std::size_t n) {
  if (rng() % 8 == 0) return KILN_NO_OPERAND;
  if (rng() % 16 == 0) return static_cast<std::uint32_t>(rng());
  return static_cast<std::uint32_t>(rng() % (n + 2));
}

std::vector<kiln_op> garbage(std::mt19937_64& rng) {
  const std::size_t n = rng() % 40;
  std::vector<kiln_op> ops(n);
  for (kiln_op& op : ops) {
    op.kind = static_cast<std::uint8_t>(rng() % 22);
    op.dtype = static_cast<std::uint8_t>(rng() % 16);
    op.lanes = static_cast<std::uint8_t>(rng() % 4 == 0 ? rng() % 18 : 1);
    op.code = static_cast<std::uint8_t>(rng() % 22);
    op.attr = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() : rng() % 4);
    for (std::uint32_t& s : op.src) s = random_operand(rng, n);
    op.imm = random_imm(rng);
  }
  return ops;
}

void mutate(std::vector<kiln_op>& ops, std::mt19937_64& rng) {
  if (ops.empty()) return;
  const std::size_t n = ops.size();
  kiln_op& op = ops[rng() % n];
  switch (rng() % 11) {
    case 0: op.kind = static_cast<std::uint8_t>(rng() % 21); break;
    case 1: op.dtype = static_cast<std::uint8_t>(rng() % 15); break;
    case 2: op.lanes = static_cast<std::uint8_t>(rng() % 18); break;
    case 3: op.code = static_cast<std::uint8_t>(rng() % 21); break;
    case 4: op.attr = static_cast<std::uint32_t>(rng() % 5); break;
    case 5: op.src[rng() % 3] = random_operand(rng, n); break;
    case 6: op.imm = random_imm(rng); break;
    case 7: op.imm += rng() % 3 - 1; break;
    case 8: ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(rng() % n)); break;
    case 9: ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(rng() % n), ops[rng() % n]); break;
    default: std::swap(ops[rng() % n], ops[rng() % n]); break;
  }
}

struct Outcome {
  int ran = 0;
  int invalid = 0;
  int faulted = 0;
};

// Decodes and runs one kernel with made-up arguments; counts the outcome.
void try_kernel(const std::vector<kiln_op>& ops, std::mt19937_64& rng, Outcome& outcome) {
  try {
    sdk::InterpretedProgram program(ops);
    std::vector<std::vector<unsigned char>> memory;
    std::vector<kiln_arg> args;
    for (std::uint32_t slot = 0; slot < program.param_count(); ++slot) {
      const kiln_op* param = nullptr;
      for (const kiln_op& op : ops)
        if (op.kind == KILN_OP_PARAM && op.attr == slot) param = &op;
      if (param->code == KILN_PARAM_VARIABLE) {
        const unsigned bits = 8 * sdk::dtype_bytes(param->dtype);
        std::uint64_t value = rng() % 12;
        if (param->dtype == KILN_DTYPE_BOOL) value &= 1;
        if (bits < 64) value &= (std::uint64_t{1} << bits) - 1;
        args.push_back(sdk::scalar_arg(static_cast<kiln_dtype>(param->dtype), value));
        continue;
      }
      const std::uint64_t elements = param->imm != 0 && param->imm < 4096 ? param->imm : rng() % 64;
      memory.emplace_back(elements * sdk::dtype_bytes(param->dtype));
      for (unsigned char& byte : memory.back()) byte = static_cast<unsigned char>(rng());
      args.push_back(sdk::host_buffer_arg(memory.back().data(), memory.back().size()));
    }
    sdk::RunOptions options;
    options.max_ops = 200000;
    program.run(args, options);
    ++outcome.ran;
  } catch (const sdk::PluginError& e) {
    (e.status() == KILN_STATUS_LAUNCH_FAILED ? outcome.faulted : outcome.invalid) += 1;
    EXPECT_TRUE(e.status() == KILN_STATUS_INVALID_ARGUMENT || e.status() == KILN_STATUS_LAUNCH_FAILED) << e.what();
    EXPECT_GT(std::string(e.what()).size(), 10u);
  }
}

bool out_of_time(Clock::time_point start) { return Clock::now() - start > std::chrono::seconds(3); }

}  // namespace

TEST(InterpreterFuzz, GarbageOpArraysNeverCrash) {
  std::mt19937_64 rng(20261201);
  Outcome outcome;
  const auto start = Clock::now();
  int kernels = 0;
  for (; kernels < 100000 && !out_of_time(start); ++kernels) try_kernel(garbage(rng), rng, outcome);
  std::printf("[ fuzz     ] %d garbage kernels: %d ran, %d invalid, %d faulted\n", kernels, outcome.ran, outcome.invalid,
              outcome.faulted);
  EXPECT_GT(outcome.invalid, 0);
}

TEST(InterpreterFuzz, MutatedValidKernelsNeverCrash) {
  std::mt19937_64 rng(42);
  const auto seeds = seed_kernels();
  for (const auto& seed : seeds) {  // the seeds themselves are valid and run
    Outcome outcome;
    try_kernel(seed, rng, outcome);
    ASSERT_EQ(outcome.invalid, 0);
  }
  Outcome outcome;
  const auto start = Clock::now();
  int kernels = 0;
  for (; kernels < 100000 && !out_of_time(start); ++kernels) {
    std::vector<kiln_op> ops = seeds[static_cast<std::size_t>(kernels) % seeds.size()];
    const int mutations = 1 + static_cast<int>(rng() % 3);
    for (int m = 0; m < mutations; ++m) mutate(ops, rng);
    try_kernel(ops, rng, outcome);
  }
  std::printf("[ fuzz     ] %d mutated kernels: %d ran, %d invalid, %d faulted\n", kernels, outcome.ran, outcome.invalid,
              outcome.faulted);
  EXPECT_GT(outcome.ran, kernels / 20);  // mutations reach the engine, not only the validator
  EXPECT_GT(outcome.invalid, kernels / 20);
  if (kernels >= 2000) {  // about 4% of mutants fault at run time
    EXPECT_GT(outcome.faulted, 0);
  }
}
