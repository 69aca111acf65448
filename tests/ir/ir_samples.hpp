// Hand-written kernels in the text form, shared by the IR tests.
#pragma once

#include <string_view>

namespace kiln::ir::samples {

// A valid kernel with every op kind, both param buffer kinds and var, every
// storage and index scope, vectors, a loop and an if. Printed exactly like
// this (it is its own canonical text).
inline constexpr std::string_view kEveryOpKind = R"(%0 = param 0 global f32[64]
%1 = param 1 global_mut f32[64]
%2 = param 2 var i32
%3 = cast i64 %2
%4 = index group 0 %3
%5 = const i64 4
%6 = index local 0 %5
%7 = storage local f32[4]
%8 = storage register f32[4]
%9 = mul i64 %4, %5
%10 = add i64 %9, %6
%11 = load f32 %0[%10]
store f32 %7[%6], %11
barrier
%14 = const i64 0
%15 = load f32x4 %7[%14]
%16 = extract f32 %15[2]
%17 = broadcast f32x4 %16
%18 = insert f32x4 %17[1], %11
%19 = const f32 1.5
%20 = mad f32 %11, %19, %16
%21 = cmplt bool %20, %19
%22 = select f32 %21, %20, %19
%23 = loop %5
  %24 = cast f32 %23
  %25 = add f32 %22, %24
  store f32 %8[%23], %25
endloop %23
%28 = extract f32 %18[3]
%29 = load f32 %8[%14]
%30 = add f32 %28, %29
if %21
  %32 = exp f32 %30
  store f32 %1[%10], %32
endif
store f32x4 %8[%14], %18
)";

// The MMA op (appended in ABI 1.1), each shape and input type, one warp: a
// kernel of its own because MMA needs a LOCAL axis 0 of whole warps.
inline constexpr std::string_view kMma = R"(%0 = param 0 global f16[256]
%1 = param 1 global bf16[256]
%2 = param 2 global f32[128]
%3 = param 3 global_mut f32[128]
%4 = const i64 32
%5 = index local 0 %4
%6 = const i64 8
%7 = mul i64 %5, %6
%8 = const i64 4
%9 = mul i64 %5, %8
%10 = const i64 2
%11 = mul i64 %5, %10
%12 = load f16x8 %0[%7]
%13 = load f16x4 %0[%9]
%14 = load bf16x8 %1[%7]
%15 = load bf16x4 %1[%9]
%16 = load f32x4 %2[%9]
%17 = load f32x2 %2[%11]
%18 = load f32x4 %3[%9]
%19 = mma m16n8k16 f16 %12, %13, %18
%20 = mma m16n8k16 bf16 %14, %15, %19
%21 = mma m16n8k8 tf32 %16, %17, %20
store f32x4 %3[%9], %21
)";

// COPY_ASYNC, COPY_COMMIT and COPY_WAIT (appended in ABI 1.1): each of 64
// threads copies a 16-byte chunk of x into LOCAL storage, waits for it, and
// after the barrier reads the chunk thread 63 - t copied.
inline constexpr std::string_view kCopyAsync = R"(%0 = param 0 global f32[256]
%1 = param 1 global_mut f32[256]
%2 = storage local f32[256]
%3 = const i64 64
%4 = index local 0 %3
%5 = const i64 4
%6 = mul i64 %4, %5
%7 = load f32x4 %0[%6]
copy_async f32x4 %2[%6], %7
copy_commit
copy_wait 0
barrier
%12 = const i64 63
%13 = sub i64 %12, %4
%14 = mul i64 %13, %5
%15 = load f32x4 %2[%14]
store f32x4 %1[%6], %15
)";

// PREFETCH (appended in ABI 1.1): each of 4 groups doubles its row of 16
// floats, prefetching the same element of the next group's row (past the
// buffer for the last group: a prefetch never faults).
inline constexpr std::string_view kPrefetch = R"(%0 = param 0 global f32[64]
%1 = param 1 global_mut f32[64]
%2 = const i64 4
%3 = index group 0 %2
%4 = const i64 16
%5 = mul i64 %3, %4
%6 = loop %2
  %7 = mul i64 %6, %2
  %8 = add i64 %5, %7
  %9 = add i64 %8, %4
  prefetch f32 %0[%9]
  %11 = load f32x4 %0[%8]
  %12 = add f32x4 %11, %11
  store f32x4 %1[%8], %12
endloop %6
)";

// LOAD_MATRIX (appended in ABI 1.1): 32 threads write a LOCAL f16 tile and
// read it back with the warp's matrix loads, each count and form.
inline constexpr std::string_view kLoadMatrix = R"(%0 = param 0 global f16[256]
%1 = param 1 global_mut f16[256]
%2 = storage local f16[256]
%3 = const i64 32
%4 = index local 0 %3
%5 = const i64 8
%6 = mul i64 %4, %5
%7 = load f16x8 %0[%6]
store f16x8 %2[%6], %7
barrier
%10 = load_matrix x4 f16 %2[%6]
%11 = load_matrix x2 trans f16 %2[%6]
%12 = load_matrix x1 f16 %2[%6]
store f16x8 %1[%6], %10
)";

// WGMMA and its fence, commit and wait (appended in ABI 1.1): one warp
// group fills a LOCAL f16 tile, zeroes its accumulators and multiplies A (at
// 0) by B (at 4096), n = 8.
inline constexpr std::string_view kWgmma = R"(%0 = param 0 global f16[8192]
%1 = param 1 global_mut f32[8192]
%2 = storage local f16[8192]
%3 = storage register f32[4]
%4 = const i64 128
%5 = index local 0 %4
%6 = const i64 64
%7 = mul i64 %5, %6
%8 = load f16x8 %0[%7]
store f16x8 %2[%7], %8
%10 = const f32 0
%11 = broadcast f32x4 %10
%12 = const i64 0
store f32x4 %3[%12], %11
barrier
wgmma_fence
%16 = const i64 4096
%17 = broadcast i64x2 %12
%18 = insert i64x2 %17[1], %16
wgmma n8 f16 %2[%18], %3
wgmma_commit
wgmma_wait 0
%22 = load f32x4 %3[%12]
store f32x4 %1[%7], %22
)";

// SUBGROUP_REDUCE (appended in ABI 1.1), each reduction, over a 16 x 4
// group (subgroups follow the linear local id).
inline constexpr std::string_view kSubgroupReduce = R"(%0 = param 0 global_mut f32[64]
%1 = const i64 16
%2 = index local 0 %1
%3 = const i64 4
%4 = index local 1 %3
%5 = mul i64 %4, %1
%6 = add i64 %2, %5
%7 = load f32 %0[%6]
%8 = subgroup_reduce add 32 f32 %7
%9 = subgroup_reduce mul 2 f32 %8
%10 = subgroup_reduce max 64 f32 %9
%11 = subgroup_reduce min 8 f32 %10
store f32 %0[%6], %11
)";

// The bf16 pair dot-accumulate (docs/ir.md): pairs of bf16 in u32 words,
// VDPBF16PS on them.
inline constexpr std::string_view kDotBf16 = R"(%0 = param 0 global bf16[64]
%1 = param 1 global_mut f32[16]
%2 = const i64 0
%3 = load bf16x16 %0[%2]
%4 = const i64 16
%5 = load bf16x16 %0[%4]
%6 = bf16_pair u32x16 %3, %5
%7 = load f32x16 %1[%2]
%8 = dot_bf16 f32x16 %7, %6, %6
store f32x16 %1[%2], %8
)";

// c[i] = a[i] + b[i] for 8 f32 elements: the smallest useful kernel.
inline constexpr std::string_view kAdd8 = R"(%0 = param 0 global f32[8]
%1 = param 1 global f32[8]
%2 = param 2 global_mut f32[8]
%3 = const i64 8
%4 = index group 0 %3
%5 = load f32 %0[%4]
%6 = load f32 %1[%4]
%7 = add f32 %5, %6
store f32 %2[%4], %7
)";

// 8 groups of 8 threads; each group sums its 8 inputs through LOCAL storage
// in three halving steps with a barrier after each: the loop and the if
// around the barriers are uniform, the if inside depends on the local index.
// Group g computes ((x0+x4)+(x2+x6)) + ((x1+x5)+(x3+x7)) of x = in[8g..8g+8).
inline constexpr std::string_view kTreeReduce = R"(%0 = param 0 global f32[64]
%1 = param 1 global_mut f32[8]
%2 = const i64 8
%3 = index local 0 %2
%4 = index group 0 %2
%5 = storage local f32[8]
%6 = mul i64 %4, %2
%7 = add i64 %6, %3
%8 = load f32 %0[%7]
store f32 %5[%3], %8
barrier
%11 = const i64 3
%12 = const i64 1
%13 = loop %11
  %14 = sub i64 %11, %13
  %15 = sub i64 %14, %12
  %16 = shl i64 %12, %15
  %17 = cmplt bool %3, %16
  if %17
    %19 = load f32 %5[%3]
    %20 = add i64 %3, %16
    %21 = load f32 %5[%20]
    %22 = add f32 %19, %21
    store f32 %5[%3], %22
  endif
  barrier
endloop %13
%27 = const i64 0
%28 = eq bool %3, %27
if %28
  %30 = load f32 %5[%27]
  store f32 %1[%4], %30
endif
)";

}  // namespace kiln::ir::samples
