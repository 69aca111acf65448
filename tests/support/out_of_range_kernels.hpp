// tests/support/out_of_range_kernels.hpp - kernels of issue 17 that the
// bounds analysis must refuse or prove at launch, shared by its pass tests
// (tests/passes/bounds_test.cpp) and its tests on every plugin
// (tests/conformance/bounds_devices_test.cpp).
#pragma once

#include <string_view>

namespace kiln::test {

// A store far past the end of f32[1000], under an IF (op 10 touches
// [10000001, 10000999]): out of range under every policy.
inline constexpr std::string_view kStoreUnderIfPastTheEnd = R"(
%0 = param 0 global f32[1000]
%1 = param 1 global_mut f32[1000]
%2 = const i64 1000
%3 = index group 0 %2
%4 = const i64 0
%5 = cmpgt bool %3, %4
if %5
  %7 = const i64 10000000
  %8 = add i64 %3, %7
  %9 = load f32 %0[%3]
  store f32 %1[%8], %9
endif
)";

// %1[i + v] of f32[1000], v a VARIABLE param (op 2): in range or not
// depending on v, so proved at each launch.
inline constexpr std::string_view kStoreAtVariableOffset = R"(
%0 = param 0 global f32[1000]
%1 = param 1 global_mut f32[1000]
%2 = param 2 var i64
%3 = const i64 1000
%4 = index group 0 %3
%5 = add i64 %4, %2
%6 = load f32 %0[%4]
store f32 %1[%5], %6
)";

}  // namespace kiln::test
