// cse: equal ops merge while in scope; loads merge only while their memory
// is unchanged (no store to it, no barrier, no write later in an enclosing
// loop).
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(Cse, MergesEqualArithmeticAndLoads) {
  EXPECT_EQ(after_pass("cse", R"(
%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[8]
%2 = const i64 8
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = load f32 %0[%3]
%6 = exp f32 %4
%7 = exp f32 %5
%8 = add f32 %6, %7
store f32 %1[%3], %8
)"),
            R"(%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[8]
%2 = const i64 8
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = exp f32 %4
%6 = add f32 %5, %5
store f32 %1[%3], %6
)");
}

TEST(Cse, KeepsLoadsAcrossAStoreToTheirMemory) {
  constexpr std::string_view kReload = R"(%0 = param 0 global_mut f32[8]
%1 = const i64 8
%2 = const i64 0
%3 = index group 0 %1
%4 = load f32 %0[%2]
%5 = exp f32 %4
store f32 %0[%3], %5
%7 = load f32 %0[%2]
%8 = add f32 %7, %5
store f32 %0[%3], %8
)";
  EXPECT_EQ(after_pass("cse", kReload), kReload);
}

TEST(Cse, KeepsLoadsWrittenLaterInTheLoop) {
  // The load in the loop sees the previous iteration's store: it is not
  // the load before the loop.
  constexpr std::string_view kAccumulate = R"(%0 = param 0 global_mut f32[1]
%1 = const i64 0
%2 = const i64 4
%3 = storage register f32[1]
%4 = const f32 1
store f32 %3[%1], %4
%6 = load f32 %3[%1]
%7 = loop %2
  %8 = load f32 %3[%1]
  %9 = add f32 %8, %6
  store f32 %3[%1], %9
endloop %7
%12 = load f32 %3[%1]
store f32 %0[%1], %12
)";
  EXPECT_EQ(after_pass("cse", kAccumulate), kAccumulate);
}

TEST(Cse, ForgetsValuesAtTheEndOfTheirBlock) {
  EXPECT_EQ(after_pass("cse", R"(
%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = const f32 0
%6 = cmpgt bool %4, %5
if %6
  %8 = sqrt f32 %4
  %9 = sqrt f32 %4
  %10 = add f32 %8, %9
  store f32 %1[%3], %10
endif
%12 = sqrt f32 %4
store f32 %1[%3], %12
)"),
            R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = const f32 0
%6 = cmpgt bool %4, %5
if %6
  %8 = sqrt f32 %4
  %9 = add f32 %8, %8
  store f32 %1[%3], %9
endif
%12 = sqrt f32 %4
store f32 %1[%3], %12
)");
}

TEST(Cse, KeepsLocalLoadsAcrossABarrier) {
  constexpr std::string_view kExchange = R"(%0 = param 0 global_mut f32[4]
%1 = const i64 4
%2 = const i64 3
%3 = index local 0 %1
%4 = storage local f32[4]
%5 = cast f32 %3
store f32 %4[%3], %5
barrier
%8 = sub i64 %2, %3
%9 = load f32 %4[%8]
barrier
store f32 %4[%8], %9
barrier
%13 = load f32 %4[%8]
%14 = add f32 %9, %13
store f32 %0[%3], %14
)";
  EXPECT_EQ(after_pass("cse", kExchange), kExchange);
}

TEST(Cse, TreatsMutableBuffersAsPossiblyOneBuffer) {
  // %0 and %1 may be bound to one buffer: the store to %1 may change %0[0].
  // The read-only %2 cannot change.
  constexpr std::string_view kMaybeAliased = R"(%0 = param 0 global_mut f32[4]
%1 = param 1 global_mut f32[4]
%2 = param 2 global f32[4]
%3 = const i64 0
%4 = load f32 %0[%3]
%5 = load f32 %2[%3]
store f32 %1[%3], %4
%7 = load f32 %0[%3]
%8 = load f32 %2[%3]
%9 = add f32 %7, %8
%10 = add f32 %9, %5
store f32 %0[%3], %10
)";
  EXPECT_EQ(after_pass("cse", kMaybeAliased), R"(%0 = param 0 global_mut f32[4]
%1 = param 1 global_mut f32[4]
%2 = param 2 global f32[4]
%3 = const i64 0
%4 = load f32 %0[%3]
%5 = load f32 %2[%3]
store f32 %1[%3], %4
%7 = load f32 %0[%3]
%8 = add f32 %7, %5
%9 = add f32 %8, %5
store f32 %0[%3], %9
)");
}
