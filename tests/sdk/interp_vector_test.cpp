// Vectors: multi-lane loads and stores, lane-wise ops, broadcast / insert /
// extract, vector comparisons and SELECT with a vector condition.
#include <gtest/gtest.h>

#include "interp_reference.hpp"
#include "interp_util.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// One thread per `lanes`-element chunk: out[chunk] = f(x[chunk], y[chunk]).
std::vector<kiln_op> vector_map(std::size_t chunks, std::uint8_t lanes, std::uint8_t dt, std::uint8_t out_dt,
                                const std::function<Id(WireBuilder&, Id, Id)>& f) {
  WireBuilder w;
  const std::uint64_t n = chunks * lanes;
  const Id x = w.param(KILN_PARAM_GLOBAL, dt, 0, n);
  const Id y = w.param(KILN_PARAM_GLOBAL, dt, 1, n);
  const Id out = w.param(KILN_PARAM_GLOBAL_MUT, out_dt, 2, n);
  const Id g = w.group_index(0, w.const_i64(static_cast<std::int64_t>(chunks)));
  const Id at = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(lanes));
  const Id vx = w.load(dt, x, at, lanes);
  const Id vy = w.load(dt, y, at, lanes);
  w.store(out_dt, out, at, f(w, vx, vy), lanes);
  return w.ops;
}

Buffer random_buffer(unsigned dt, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Buffer b(dt, n);
  for (std::size_t i = 0; i < n; ++i) b.set_bits(i, ref::random_bits(dt, rng));
  return b;
}

}  // namespace

TEST(InterpreterVectors, LaneWiseBinaryOpsOnEveryWidth) {
  for (std::uint8_t lanes : {1, 2, 3, 4, 8, 16}) {
    for (std::uint8_t dt : {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_I8, KILN_DTYPE_U64}) {
      const std::size_t chunks = 37;
      Buffer x = random_buffer(dt, chunks * lanes, lanes), y = random_buffer(dt, chunks * lanes, lanes + 100);
      Buffer out(dt, chunks * lanes);
      run_ok(vector_map(chunks, lanes, dt, dt, [&](WireBuilder& w, Id a, Id b) {
               return w.binary(KILN_BINARY_ADD, dt, w.binary(KILN_BINARY_MUL, dt, a, b, lanes), a, lanes);
             }),
             args_of({&x, &y, &out}));
      for (std::size_t i = 0; i < chunks * lanes; ++i) {
        const auto want = ref::binary(dt, KILN_BINARY_ADD, ref::binary(dt, KILN_BINARY_MUL, x.bits(i), y.bits(i)), x.bits(i));
        ASSERT_EQ(out.bits(i), want) << "lanes " << int(lanes) << " dtype " << sdk::dtype_name(dt) << " element " << i;
      }
    }
  }
}

TEST(InterpreterVectors, ComparisonGivesBoolVectorAndSelectIsLaneWise) {
  const std::size_t chunks = 65;
  Buffer x = random_buffer(KILN_DTYPE_F32, chunks * 4, 1), y = random_buffer(KILN_DTYPE_F32, chunks * 4, 2);
  Buffer out(KILN_DTYPE_F32, chunks * 4);
  run_ok(vector_map(chunks, 4, KILN_DTYPE_F32, KILN_DTYPE_F32, [](WireBuilder& w, Id a, Id b) {
           const Id gt = w.binary(KILN_BINARY_CMPGT, KILN_DTYPE_BOOL, a, b, 4);
           return w.select(KILN_DTYPE_F32, gt, a, b, 4);
         }),
         args_of({&x, &y, &out}));
  for (std::size_t i = 0; i < chunks * 4; ++i) EXPECT_EQ(out.get<float>(i), std::max(x.get<float>(i), y.get<float>(i)));
}

TEST(InterpreterVectors, ScalarConditionSelectsWholeVectors) {
  const std::size_t chunks = 33;
  Buffer x = random_buffer(KILN_DTYPE_I32, chunks * 8, 3), y = random_buffer(KILN_DTYPE_I32, chunks * 8, 4);
  Buffer out(KILN_DTYPE_I32, chunks * 8);
  // The first lanes decide for the whole vector.
  run_ok(vector_map(chunks, 8, KILN_DTYPE_I32, KILN_DTYPE_I32, [](WireBuilder& w, Id a, Id b) {
           const Id lt = w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, w.extract(KILN_DTYPE_I32, a, 0),
                                  w.extract(KILN_DTYPE_I32, b, 0));
           return w.select(KILN_DTYPE_I32, lt, a, b, 8);
         }),
         args_of({&x, &y, &out}));
  for (std::size_t c = 0; c < chunks; ++c) {
    const bool first = x.get<std::int32_t>(c * 8) < y.get<std::int32_t>(c * 8);
    for (std::size_t j = 0; j < 8; ++j)
      EXPECT_EQ(out.get<std::int32_t>(c * 8 + j), first ? x.get<std::int32_t>(c * 8 + j) : y.get<std::int32_t>(c * 8 + j));
  }
}

TEST(InterpreterVectors, BroadcastInsertExtractBuildAndTakeApartVectors) {
  // out[4i .. 4i+4] = {x[i], y[i], x[i], x[i] + y[i]} built from scalars; then
  // out2[i] = lane 1 + lane 3 of it.
  const std::size_t n = 129;
  Buffer x = random_buffer(KILN_DTYPE_F64, n, 5), y = random_buffer(KILN_DTYPE_F64, n, 6);
  Buffer out(KILN_DTYPE_F64, n * 4), out2(KILN_DTYPE_F64, n);
  WireBuilder w;
  const Id px = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F64, 0, n);
  const Id py = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F64, 1, n);
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F64, 2, n * 4);
  const Id po2 = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F64, 3, n);
  const Id i = w.group_index(0, w.const_i64(n));
  const Id a = w.load(KILN_DTYPE_F64, px, i);
  const Id b = w.load(KILN_DTYPE_F64, py, i);
  Id v = w.broadcast(KILN_DTYPE_F64, a, 4);
  v = w.insert(KILN_DTYPE_F64, v, b, 1, 4);
  v = w.insert(KILN_DTYPE_F64, v, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F64, a, b), 3, 4);
  w.store(KILN_DTYPE_F64, po, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, i, w.const_i64(4)), v, 4);
  w.store(KILN_DTYPE_F64, po2, i,
          w.binary(KILN_BINARY_ADD, KILN_DTYPE_F64, w.extract(KILN_DTYPE_F64, v, 1), w.extract(KILN_DTYPE_F64, v, 3)));
  run_ok(w.ops, args_of({&x, &y, &out, &out2}));
  for (std::size_t k = 0; k < n; ++k) {
    const double a_k = x.get<double>(k), b_k = y.get<double>(k);
    EXPECT_EQ(out.get<double>(4 * k + 0), a_k);
    EXPECT_EQ(out.get<double>(4 * k + 1), b_k);
    EXPECT_EQ(out.get<double>(4 * k + 2), a_k);
    EXPECT_EQ(out.get<double>(4 * k + 3), a_k + b_k);
    EXPECT_EQ(out2.get<double>(k), b_k + (a_k + b_k));
  }
}

TEST(InterpreterVectors, CastAndUnaryAreLaneWise) {
  const std::size_t chunks = 40;
  Buffer x = random_buffer(KILN_DTYPE_F32, chunks * 4, 7);
  Buffer out(KILN_DTYPE_I16, chunks * 4);
  WireBuilder w;
  const Id px = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, chunks * 4);
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I16, 1, chunks * 4);
  const Id at = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, w.group_index(0, w.const_i64(chunks)), w.const_i64(4));
  const Id v = w.load(KILN_DTYPE_F32, px, at, 4);
  const Id scaled = w.binary(KILN_BINARY_MUL, KILN_DTYPE_F32, v, w.broadcast(KILN_DTYPE_F32, w.const_f32(100.0f), 4), 4);
  w.store(KILN_DTYPE_I16, po, at, w.cast(KILN_DTYPE_I16, w.unary(KILN_UNARY_NEG, KILN_DTYPE_F32, scaled, 4), 4), 4);
  run_ok(w.ops, args_of({&x, &out}));
  for (std::size_t i = 0; i < chunks * 4; ++i)
    EXPECT_EQ(out.get<std::int16_t>(i), static_cast<std::int16_t>(-(x.get<float>(i) * 100.0f)));
}

TEST(InterpreterVectors, BoolVectorsLoadAndStoreAsBytes) {
  const std::size_t chunks = 17;
  Buffer x = random_buffer(KILN_DTYPE_BOOL, chunks * 2, 8), y = random_buffer(KILN_DTYPE_BOOL, chunks * 2, 9);
  Buffer out(KILN_DTYPE_BOOL, chunks * 2);
  run_ok(vector_map(chunks, 2, KILN_DTYPE_BOOL, KILN_DTYPE_BOOL,
                    [](WireBuilder& w, Id a, Id b) { return w.binary(KILN_BINARY_BIT_XOR, KILN_DTYPE_BOOL, a, b, 2); }),
         args_of({&x, &y, &out}));
  for (std::size_t i = 0; i < chunks * 2; ++i) EXPECT_EQ(out.bits(i), x.bits(i) ^ y.bits(i));
}

// KILN_ACCESS_UNALIGNED (ABI 1.1): a vector LOAD or STORE at any element
// index, for devices that claim KILN_FEATURE_UNALIGNED_VECTORS: the lanes
// are the elements from that index on, as scalar accesses would read and
// write them. Without the attr the same index faults; an attr other than 0
// and 1, or 1 on a one-lane access, is refused by name.
TEST(InterpreterVectors, UnalignedAccessesReadAndWriteFromAnyElement) {
  for (std::uint8_t dt : {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
    SCOPED_TRACE(static_cast<int>(dt));
    const std::size_t groups = 5, n = 4 * groups + 3;
    WireBuilder w;  // out[3 g + 1 .. +4) = x[3 g + 2 .. +4), 4-lane accesses at every residue
    const Id x = w.param(KILN_PARAM_GLOBAL, dt, 0, n);
    const Id out = w.param(KILN_PARAM_GLOBAL_MUT, dt, 1, n);
    const Id g = w.group_index(0, w.const_i64(static_cast<std::int64_t>(groups)));
    const Id at = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(3));
    const Id from = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, at, w.const_i64(2));
    const Id to = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, at, w.const_i64(1));
    const Id load = w.load(dt, x, from, 4);
    w.ops[load].attr = KILN_ACCESS_UNALIGNED;
    const Id store = w.store(dt, out, to, load, 4);
    w.ops[store].attr = KILN_ACCESS_UNALIGNED;

    Buffer in = random_buffer(dt, n, 21), result(dt, n);
    for (std::size_t i = 0; i < n; ++i) result.set_bits(i, 0);
    run_ok(w.ops, args_of({&in, &result}));
    // Groups run in any order and overlap by one element; each writes x[j + 1] to out[j].
    for (std::size_t j = 1; j < 3 * (groups - 1) + 5; ++j) EXPECT_EQ(result.bits(j), in.bits(j + 1)) << j;
    EXPECT_EQ(result.bits(0), 0u);

    std::vector<kiln_op> aligned_only = w.ops;
    aligned_only[load].attr = 0;
    expect_fault(aligned_only, args_of({&in, &result}), "misaligned 4-lane access at index 2", load);
    std::vector<kiln_op> bad = w.ops;
    bad[load].attr = 2;
    expect_invalid(bad, "attr 2 is neither 0 nor KILN_ACCESS_UNALIGNED", load);
  }
  WireBuilder one;  // a one-lane access has nothing to align
  const Id x = one.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 4);
  const Id load = one.load(KILN_DTYPE_F32, x, one.const_i64(1));
  one.ops[load].attr = KILN_ACCESS_UNALIGNED;
  expect_invalid(one.ops, "attr 1 is neither 0 nor KILN_ACCESS_UNALIGNED (1, for lanes > 1)", load);
}
