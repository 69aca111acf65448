// The standard kernel library: names, errors, argument specs that match the
// kernels' PARAMs, flop and byte counts, the C++ references on hand-computed
// values, and the buffers, random inputs and comparison consumers share.
#include <gtest/gtest.h>

#include <algorithm>

#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/kernels/library.hpp"

#include <cmath>
#include <limits>

using namespace kiln;
using namespace kiln::kernels;
using ir::DType;

namespace {

HostBuffer buffer_of(DType dtype, std::initializer_list<double> values) {
  HostBuffer b(dtype, values.size());
  std::size_t i = 0;
  for (double v : values) b.set(i++, v);
  return b;
}

// Runs k's reference on the given inputs and returns its outputs.
std::vector<HostBuffer> reference(const StandardKernel& k, std::vector<HostBuffer> inputs) {
  std::vector<HostBuffer> outputs = k.make_outputs();
  k.reference(inputs, outputs);
  return outputs;
}

std::vector<double> values(const HostBuffer& b) {
  std::vector<double> v;
  for (std::size_t i = 0; i < b.size(); ++i) v.push_back(b.get(i));
  return v;
}

}  // namespace

TEST(StandardKernels, NamesAreFixed) {
  const auto names = standard_kernel_names();
  EXPECT_EQ(std::vector<std::string_view>(names.begin(), names.end()),
            (std::vector<std::string_view>{"add", "add-dyn", "exp-chain", "sum-rows", "max-rows", "softmax-rows",
                                           "layernorm-rows", "rmsnorm-rows", "matmul", "matmul-bt", "transpose"}));
}

TEST(StandardKernels, BadRequestsGetClearErrors) {
  const auto unknown = make_standard_kernel("conv2d", {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::NotFound);
  EXPECT_NE(unknown.error().message.find("no standard kernel 'conv2d' (known: add, add-dyn,"), std::string::npos);

  const auto zero = make_standard_kernel("matmul", {.m = 4, .n = 4, .k = 0});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().code, ErrorCode::InvalidArgument);
  EXPECT_NE(zero.error().message.find("matmul: size k = 0"), std::string::npos);

  const auto huge = make_standard_kernel("sum-rows", {.m = 1 << 30, .n = 1 << 30});
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("exceed 2^40 elements"), std::string::npos);

  // Elementwise kernels ignore m and k.
  EXPECT_TRUE(make_standard_kernel("add", {.m = 0, .n = 5, .k = -1}).ok());

  const auto dtype = make_standard_kernel("softmax-rows", {.m = 2, .n = 2}, DType::I32);
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.error().code, ErrorCode::Unsupported);
  EXPECT_EQ(dtype.error().message, "softmax-rows does not support dtype i32 (allowed: f32, f16, bf16, f64)");
}

TEST(StandardKernels, ArgumentsMatchTheKernelsParams) {
  for (std::string_view name : standard_kernel_names()) {
    const std::vector<DType> dtypes = make_standard_kernel(name, {}).value().dtypes;
    for (DType dtype : dtypes) {
      const auto k = make_standard_kernel(name, {.m = 3, .n = 5, .k = 7}, dtype).value();
      SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)));
      EXPECT_EQ(k.name, name);
      EXPECT_EQ(k.dtype, dtype);
      EXPECT_TRUE(ir::verify(k.kernel).ok());
      std::size_t params = 0;
      bool outputs_seen = false;
      for (const ir::Op& op : k.kernel.ops) {
        if (op.kind != ir::OpKind::Param) continue;
        ++params;
        ASSERT_LT(op.attr, k.args.size());
        const ArgSpec& arg = k.args[op.attr];
        EXPECT_EQ(op.dtype, arg.dtype);
        switch (arg.role) {
          case ArgRole::Input:
            EXPECT_EQ(op.param_kind(), ir::ParamKind::Global);
            EXPECT_FALSE(outputs_seen) << "inputs come before outputs";
            break;
          case ArgRole::Output:
            EXPECT_EQ(op.param_kind(), ir::ParamKind::GlobalMut);
            outputs_seen = true;
            break;
          case ArgRole::Scalar:
            EXPECT_EQ(op.param_kind(), ir::ParamKind::Variable);
            break;
        }
        if (op.param_kind() != ir::ParamKind::Variable && op.imm != 0) {
          EXPECT_EQ(op.imm, arg.elements);
        }
      }
      EXPECT_EQ(params, k.args.size());
      // The canonical form: GROUP indices only.
      for (const ir::Op& op : k.kernel.ops) {
        if (op.kind == ir::OpKind::Index) {
          EXPECT_EQ(op.scope(), ir::Scope::Group);
        }
      }
    }
  }
}

TEST(StandardKernels, AddDynTakesItsLengthAsAScalar) {
  const auto k = make_standard_kernel("add-dyn", {.n = 1000}).value();
  ASSERT_EQ(k.args.size(), 4u);
  EXPECT_EQ(k.args[3].role, ArgRole::Scalar);
  EXPECT_EQ(k.args[3].dtype, DType::I64);
  EXPECT_EQ(k.args[3].scalar_bits, 1000u);
  EXPECT_EQ(k.args[0].elements, 1000u);
  // The buffers' static lengths are unknown; the grid comes from the scalar.
  EXPECT_EQ(k.kernel[0].imm, 0u);
  EXPECT_EQ(ir::print(k.kernel).find("index group 0 %3"), ir::print(k.kernel).find("index group"));
}

TEST(StandardKernels, FlopsAndBytes) {
  const auto matmul = make_standard_kernel("matmul", {.m = 8, .n = 16, .k = 32}).value();
  EXPECT_EQ(matmul.flops, 2.0 * 8 * 16 * 32);
  EXPECT_EQ(matmul.bytes, 4.0 * (8 * 32 + 32 * 16 + 8 * 16));
  const auto add = make_standard_kernel("add", {.n = 100}, DType::F16).value();
  EXPECT_EQ(add.flops, 100);
  EXPECT_EQ(add.bytes, 600);
  const auto transpose = make_standard_kernel("transpose", {.m = 3, .n = 4}, DType::F64).value();
  EXPECT_EQ(transpose.flops, 0);
  EXPECT_EQ(transpose.bytes, 2.0 * 12 * 8);
}

TEST(StandardKernels, ElementwiseReferences) {
  const auto add = make_standard_kernel("add", {.n = 3}).value();
  EXPECT_EQ(values(reference(add, {buffer_of(DType::F32, {1, 2, 3}), buffer_of(DType::F32, {0.5, -2, 4})})[0]),
            (std::vector<double>{1.5, 0, 7}));
  const auto exp_chain = make_standard_kernel("exp-chain", {.n = 2}, DType::F64).value();
  const auto y = values(reference(exp_chain, {buffer_of(DType::F64, {0, 1})})[0]);
  EXPECT_EQ(y[0], 3.0);
  EXPECT_DOUBLE_EQ(y[1], std::exp(1.0) * 2 + 1);
}

TEST(StandardKernels, RowReferences) {
  const KernelSize size{.m = 2, .n = 3};
  const HostBuffer x = buffer_of(DType::F64, {1, -2, 3, 0.5, 0.25, -4});
  EXPECT_EQ(values(reference(make_standard_kernel("sum-rows", size, DType::F64).value(), {x})[0]),
            (std::vector<double>{2, -3.25}));
  EXPECT_EQ(values(reference(make_standard_kernel("max-rows", size, DType::F64).value(), {x})[0]),
            (std::vector<double>{3, 0.5}));
  const auto softmax = values(reference(make_standard_kernel("softmax-rows", size, DType::F64).value(), {x})[0]);
  const double denominator = std::exp(1 - 3.0) + std::exp(-2 - 3.0) + 1;
  EXPECT_DOUBLE_EQ(softmax[0], std::exp(1 - 3.0) / denominator);
  EXPECT_DOUBLE_EQ(softmax[2], 1 / denominator);
  EXPECT_NEAR(softmax[3] + softmax[4] + softmax[5], 1.0, 1e-15);
  const auto norm = values(reference(make_standard_kernel("layernorm-rows", size, DType::F64).value(), {x})[0]);
  const double mean = 2.0 / 3, var = ((1 - mean) * (1 - mean) + (-2 - mean) * (-2 - mean) + (3 - mean) * (3 - mean)) / 3;
  EXPECT_DOUBLE_EQ(norm[1], (-2 - mean) / std::sqrt(var + 1e-5));
  EXPECT_NEAR(norm[3] + norm[4] + norm[5], 0.0, 1e-12);
  // Integer maxima start from the lowest value, not from 0.
  const HostBuffer negative = buffer_of(DType::I32, {-7, -3, -9, -1, -8, -2});
  EXPECT_EQ(values(reference(make_standard_kernel("max-rows", size, DType::I32).value(), {negative})[0]),
            (std::vector<double>{-3, -1}));
}

TEST(StandardKernels, MatmulAndTransposeReferences) {
  // [2,3] x [3,2]
  const HostBuffer a = buffer_of(DType::F32, {1, 2, 3, 4, 5, 6});
  const HostBuffer b = buffer_of(DType::F32, {7, 8, 9, 10, 11, 12});
  const auto matmul = make_standard_kernel("matmul", {.m = 2, .n = 2, .k = 3}).value();
  EXPECT_EQ(values(reference(matmul, {a, b})[0]), (std::vector<double>{58, 64, 139, 154}));
  // matmul-bt reads B as [n,k]: B^T of the b above.
  const HostBuffer bt = buffer_of(DType::F32, {7, 9, 11, 8, 10, 12});
  const auto matmul_bt = make_standard_kernel("matmul-bt", {.m = 2, .n = 2, .k = 3}).value();
  EXPECT_EQ(values(reference(matmul_bt, {a, bt})[0]), (std::vector<double>{58, 64, 139, 154}));
  const auto transpose = make_standard_kernel("transpose", {.m = 2, .n = 3}).value();
  EXPECT_EQ(values(reference(transpose, {a})[0]), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(StandardKernels, ReferencesRoundToTheBufferDtype) {
  const auto add = make_standard_kernel("add", {.n = 1}, DType::F16).value();
  const auto out = reference(add, {buffer_of(DType::F16, {1}), buffer_of(DType::F16, {0.0001})});
  EXPECT_EQ(out[0].bits(0), 0x3c00u);  // 1.0001 rounds to 1 in f16
}

TEST(StandardKernels, LargeReferencesRunRowsOnThreadsWithTheSameValues) {
  // 1024 x 64 x 64 and softmax 1024 x 2048: past the 2^20 units of work a
  // thread that kernels::detail::each_row needs before it starts a second;
  // every element as one sequential loop in the same order computes it.
  const auto matmul = make_standard_kernel("matmul", {.m = 1024, .n = 64, .k = 64}).value();
  const auto in = matmul.make_inputs(5);
  const auto out = reference(matmul, in);
  for (std::size_t r = 0; r < 1024; r += 97)
    for (std::size_t c = 0; c < 64; c += 7) {
      double sum = 0;
      for (std::size_t p = 0; p < 64; ++p) sum += in[0].get(r * 64 + p) * in[1].get(p * 64 + c);
      ASSERT_EQ(out[0].get(r * 64 + c), static_cast<double>(static_cast<float>(sum))) << r << ", " << c;
    }
  const auto softmax = make_standard_kernel("softmax-rows", {.m = 1024, .n = 2048}).value();
  const auto x = softmax.make_inputs(6);
  const auto y = reference(softmax, x);
  for (std::size_t r : {std::size_t{0}, std::size_t{511}, std::size_t{512}, std::size_t{1023}}) {
    double row_max = -std::numeric_limits<double>::infinity(), sum = 0;
    for (std::size_t j = 0; j < 2048; ++j) row_max = std::max(row_max, x[0].get(r * 2048 + j));
    for (std::size_t j = 0; j < 2048; ++j) sum += std::exp(x[0].get(r * 2048 + j) - row_max);
    for (std::size_t j = 0; j < 2048; j += 101)
      ASSERT_EQ(y[0].get(r * 2048 + j), static_cast<double>(static_cast<float>(std::exp(x[0].get(r * 2048 + j) - row_max) / sum)))
          << r << ", " << j;
  }
}

TEST(StandardKernels, InputsAreRandomAndOutputsStartAsNaN) {
  const auto k = make_standard_kernel("matmul", {.m = 5, .n = 6, .k = 7}).value();
  const auto inputs = k.make_inputs(1);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].size(), 35u);
  EXPECT_EQ(inputs[1].size(), 42u);
  EXPECT_EQ(values(k.make_inputs(1)[0]), values(inputs[0]));     // deterministic
  EXPECT_NE(values(k.make_inputs(2)[0]), values(inputs[0]));     // seeded
  EXPECT_NE(values(inputs[0]), values(inputs[1]));               // per slot
  const auto outputs = k.make_outputs();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].size(), 30u);
  for (double v : values(outputs[0])) EXPECT_TRUE(std::isnan(v));
  const auto softmax = make_standard_kernel("softmax-rows", {.m = 2, .n = 50}).value();
  double widest = 0;
  for (double v : values(softmax.make_inputs(3)[0])) widest = std::max(widest, std::fabs(v));
  EXPECT_GT(widest, 2.0);  // softmax inputs span [-4, 4]
}

TEST(HostBuffers, FillRandomStaysInRangeAndIsNeverAllZero) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64, DType::U8}) {
    HostBuffer b(dtype, 4096);
    fill_random(b, 123, ir::is_float(dtype) ? -1.0 : 0.0, ir::is_float(dtype) ? 1.0 : 9.0);
    double low = 1e9, high = -1e9;
    std::size_t zeros = 0;
    for (double v : values(b)) {
      low = std::min(low, v);
      high = std::max(high, v);
      zeros += v == 0;
      if (!ir::is_float(dtype)) {
        EXPECT_EQ(v, std::floor(v));
      }
    }
    SCOPED_TRACE(std::string(ir::dtype_name(dtype)));
    EXPECT_GE(low, ir::is_float(dtype) ? -1.0 : 0.0);
    EXPECT_LE(high, ir::is_float(dtype) ? 1.0 : 9.0);
    EXPECT_LT(high - low, 10.01);
    EXPECT_GT(high - low, ir::is_float(dtype) ? 1.9 : 8.5);  // the whole range is used
    EXPECT_LT(zeros, ir::is_float(dtype) ? 8u : 700u);
  }
}

TEST(HostBuffers, FillRandomIsStableAcrossPlatforms) {
  // splitmix64 and the mapping to [low, high] are ours: pinned (recomputed
  // independently in Python: key = mix(42 ^ (4 << 56)), element 0 =
  // mix(key + golden), -1 + (bits >> 11) * 2^-53 * 2).
  HostBuffer b(DType::F64, 3);
  fill_random(b, 42);
  HostBuffer again(DType::F64, 3);
  fill_random(again, 42);
  EXPECT_EQ(values(b), values(again));
  EXPECT_EQ(b.get(0), 0.338043524706082);
}

TEST(HostBuffers, FillRandomOf16BitFloatsIsPinned) {
  // Written straight rather than through set() since 2026-12-05: the same
  // bits (the f32 value rounded to the dtype, as encode_float does), pinned
  // from the set() path.
  HostBuffer f16(DType::F16, 3);
  fill_random(f16, 42);
  EXPECT_EQ(f16.bits(0), 0x3963u);
  EXPECT_EQ(f16.bits(1), 0xb986u);
  EXPECT_EQ(f16.bits(2), 0x3befu);
  HostBuffer bf16(DType::BF16, 3);
  fill_random(bf16, 42);
  EXPECT_EQ(bf16.bits(0), 0x3f1du);
  EXPECT_EQ(bf16.bits(1), 0xbf67u);
  EXPECT_EQ(bf16.bits(2), 0xbf0eu);
}

TEST(HostBuffers, FillRandomGivesTheSameValuesWhateverTheThreadCount) {
  // 2^22 elements fill in chunks on every hardware thread; element i is the
  // i-th value of the stream, as a buffer of one element per index shows.
  HostBuffer large(DType::F32, std::size_t{1} << 22);
  fill_random(large, 7, -4, 4);
  HostBuffer small(DType::F32, 1000);
  fill_random(small, 7, -4, 4);
  for (std::size_t i = 0; i < small.size(); ++i) ASSERT_EQ(large.get(i), small.get(i)) << i;
  HostBuffer again(DType::F32, large.size());
  fill_random(again, 7, -4, 4);
  EXPECT_TRUE(std::equal(large.data().begin(), large.data().end(), again.data().begin()));
}

TEST(HostBuffers, CompareIsRelativeToTheLargestExpectedValue) {
  const HostBuffer expected = buffer_of(DType::F64, {10, -0.001, 4});
  EXPECT_EQ(compare(expected, expected), 0.0);
  EXPECT_DOUBLE_EQ(compare(buffer_of(DType::F64, {10, 0.009, 4}), expected), 0.001);
  EXPECT_DOUBLE_EQ(compare(buffer_of(DType::F64, {9, -0.001, 4}), expected), 0.1);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(compare(buffer_of(DType::F64, {nan, -0.001, 4}), expected), inf);
  EXPECT_EQ(compare(buffer_of(DType::F64, {10, -0.001}), expected), inf);
  EXPECT_EQ(compare(buffer_of(DType::F32, {10, -0.001, 4}), expected), inf);
  EXPECT_EQ(compare(buffer_of(DType::F64, {nan, inf}), buffer_of(DType::F64, {nan, inf})), 0.0);
  EXPECT_EQ(compare(buffer_of(DType::F64, {1, -inf}), buffer_of(DType::F64, {1, inf})), inf);
  EXPECT_EQ(compare(buffer_of(DType::I32, {0, 0}), buffer_of(DType::I32, {0, 0})), 0.0);
}

TEST(HostBuffers, ToleranceGrowsWithReductionLength) {
  EXPECT_EQ(tolerance(DType::I32, 1000), 0.0);
  EXPECT_DOUBLE_EQ(tolerance(DType::F32, 1), 12 * 0x1.0p-24);
  EXPECT_DOUBLE_EQ(tolerance(DType::F32, 100), 48 * 0x1.0p-24);
  EXPECT_DOUBLE_EQ(tolerance(DType::F16, 100), 4 * 0x1.0p-11 + 44 * 0x1.0p-24);  // accumulates in f32
  EXPECT_LT(tolerance(DType::F64, 10000), 1e-12);
  EXPECT_EQ(accumulator_dtype(DType::BF16), DType::F32);
  EXPECT_EQ(make_standard_kernel("matmul", {.m = 2, .n = 2, .k = 100}).value().tolerance, tolerance(DType::F32, 100));
  EXPECT_EQ(make_standard_kernel("transpose", {.m = 2, .n = 100}).value().tolerance, tolerance(DType::F32, 1));
}

TEST(KernelArgs, ComeFromTheParamsOfAnyKernel) {
  const auto kernel = ir::parse(R"(%0 = param 0 global f16[6]
%1 = param 2 var i32
%2 = param 1 global_mut f16[6]
%3 = param 3 var f32
)").value();
  const double scalars[] = {-3.7, 0.1};
  const auto args = args_of(kernel, scalars);
  ASSERT_TRUE(args.ok()) << args.error().to_string();
  ASSERT_EQ(args->size(), 4u);
  EXPECT_EQ((*args)[0].role, ArgRole::Input);
  EXPECT_EQ((*args)[0].elements, 6u);
  EXPECT_EQ((*args)[0].dtype, DType::F16);
  EXPECT_EQ((*args)[1].role, ArgRole::Output);
  EXPECT_EQ((*args)[2].role, ArgRole::Scalar);
  EXPECT_EQ((*args)[2].scalar_bits, 0xfffffffdu);  // -3.7 -> i32 -3, as CAST
  EXPECT_EQ((*args)[3].scalar_bits, 0x3dcccccdu);  // 0.1f
  EXPECT_EQ(make_input_buffers(*args, 1).size(), 1u);
  EXPECT_EQ(make_output_buffers(*args).size(), 1u);
}

TEST(KernelArgs, AgreeWithTheStandardKernelsOwn) {
  for (std::string_view name : standard_kernel_names()) {
    const auto k = make_standard_kernel(name, {.m = 3, .n = 5, .k = 7}).value();
    if (name == "add-dyn") continue;  // its buffers have no static length
    const auto args = args_of(k.kernel).value();
    ASSERT_EQ(args.size(), k.args.size()) << name;
    for (std::size_t i = 0; i < args.size(); ++i) {
      EXPECT_EQ(args[i].role, k.args[i].role) << name << " slot " << i;
      EXPECT_EQ(args[i].elements, k.args[i].elements) << name << " slot " << i;
    }
  }
}

TEST(KernelArgs, MissingCountsAndScalarsAreErrors) {
  const auto dyn = make_standard_kernel("add-dyn", {.n = 5}).value();
  const auto no_count = args_of(dyn.kernel);
  ASSERT_FALSE(no_count.ok());
  EXPECT_EQ(no_count.error().op, 0);
  EXPECT_NE(no_count.error().message.find("buffer param 0 has no element count"), std::string::npos);

  const auto kernel = ir::parse("%0 = param 0 var i64\n").value();
  const auto none = args_of(kernel);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("a value for var param 0 is needed (0 given)"), std::string::npos);
  const double two[] = {1, 2};
  const auto extra = args_of(kernel, two);
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.error().message, "2 scalar values given, the kernel has 1 var params");

  const auto gap = args_of(ir::parse("%0 = param 1 global f32[4]\n").value());
  ASSERT_FALSE(gap.ok());
  EXPECT_NE(gap.error().message.find("no param has slot 0"), std::string::npos);
}

// Host memory starts zeroed whatever its size (large blocks come from mmap,
// small ones from calloc), and copies and moves keep the bytes.
TEST(HostBuffers, StartZeroedAndCopyAndMoveTheirBytes) {
  for (const std::size_t elements : {std::size_t{0}, std::size_t{3}, std::size_t{3} << 20}) {
    kernels::HostBuffer buffer(ir::DType::F32, elements);
    ASSERT_EQ(buffer.bytes(), elements * 4);
    EXPECT_TRUE(std::all_of(buffer.data().begin(), buffer.data().end(), [](std::byte b) { return b == std::byte{0}; }));
    if (elements == 0) continue;
    buffer.set(elements - 1, 2.5);
    const kernels::HostBuffer copy = buffer;
    EXPECT_EQ(copy.get(elements - 1), 2.5);
    EXPECT_NE(copy.data().data(), buffer.data().data());
    kernels::HostBuffer assigned(ir::DType::F32, 1);
    assigned = copy;
    EXPECT_EQ(assigned.get(elements - 1), 2.5);
    const kernels::HostBuffer moved = std::move(buffer);
    EXPECT_EQ(moved.get(elements - 1), 2.5);
    EXPECT_EQ(moved.get(0), 0.0);
  }
}
