// The text form: exact round trips (standard kernels, hand-written kernels,
// every constant of the small float types, random raw ops), the conveniences
// of hand-written text, and print_op.
#include <gtest/gtest.h>

#include "ir_samples.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/kernels/library.hpp"

#include <bit>
#include <random>

using namespace kiln;
using namespace kiln::ir;

namespace {

// print -> parse gives the same kernel, and printing that gives the same text.
void expect_round_trip(const Kernel& kernel) {
  const std::string text = print(kernel);
  const auto parsed = parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message << "\n" << text;
  EXPECT_EQ(*parsed, kernel) << text;
  EXPECT_EQ(print(*parsed), text);
}

Kernel parsed(std::string_view text) {
  auto result = parse(text);
  EXPECT_TRUE(result.ok()) << result.error().message;
  return result.ok() ? *result : Kernel{};
}

}  // namespace

TEST(Text, StandardKernelsRoundTripAtEverySizeAndDtype) {
  const kernels::KernelSize sizes[] = {{1, 1, 1}, {7, 7, 7}, {3, 257, 5}, {2, 1000, 3}};
  int checked = 0;
  for (std::string_view name : kernels::standard_kernel_names())
    for (const auto& size : sizes) {
      const auto dtypes = kernels::make_standard_kernel(name, size).value().dtypes;
      for (DType dtype : dtypes) {
        SCOPED_TRACE(std::string(name) + " " + std::string(dtype_name(dtype)));
        expect_round_trip(kernels::make_standard_kernel(name, size, dtype).value().kernel);
        ++checked;
      }
    }
  EXPECT_GT(checked, 150);
}

TEST(Text, SamplesAreTheirOwnCanonicalText) {
  for (std::string_view sample : {samples::kAdd8, samples::kTreeReduce}) EXPECT_EQ(print(parsed(sample)), sample);
  bool seen[KILN_OP_KIND_COUNT] = {};
  for (std::string_view sample : {samples::kEveryOpKind, samples::kMma, samples::kSubgroupReduce, samples::kDotBf16,
                                  samples::kCopyAsync, samples::kLoadMatrix, samples::kWgmma, samples::kPrefetch}) {
    const Kernel k = parsed(sample);
    EXPECT_EQ(print(k), sample);
    EXPECT_TRUE(verify(k).ok()) << verify(k).error().to_string();
    for (const Op& op : k.ops) seen[static_cast<unsigned>(op.kind)] = true;
  }
  for (unsigned kind = 1; kind < KILN_OP_KIND_COUNT; ++kind) EXPECT_TRUE(seen[kind]) << "missing op kind " << kind;
}

TEST(Text, EveryUnaryAndBinaryOpOnEveryDtypeRoundTrips) {
  for (unsigned d = 1; d < KILN_DTYPE_COUNT; ++d) {
    const auto dtype = static_cast<DType>(d);
    Builder b;
    const Value x = b.param(ParamKind::Variable, dtype);
    const Value v = b.broadcast(x, 4);
    for (unsigned u = 1; u < KILN_UNARY_COUNT; ++u) b.unary(static_cast<UnaryOp>(u), x);
    for (unsigned op = 1; op < KILN_BINARY_COUNT; ++op) b.binary(static_cast<BinaryOp>(op), v, v);
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    expect_round_trip(b.finish());
  }
}

TEST(Text, ConstantsOfEveryHalfBitPatternRoundTripExactly) {
  for (DType dtype : {DType::F16, DType::BF16}) {
    Kernel k;
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
      Op op;
      op.kind = OpKind::Const;
      op.dtype = dtype;
      op.imm = bits;
      k.ops.push_back(op);
    }
    expect_round_trip(k);
  }
}

TEST(Text, RandomConstantsOfEveryDtypeRoundTripExactly) {
  std::mt19937_64 rng(42);
  Kernel k;
  for (unsigned d = 1; d < KILN_DTYPE_COUNT; ++d)
    for (int i = 0; i < 2000; ++i) {
      Op op;
      op.kind = OpKind::Const;
      op.dtype = static_cast<DType>(d);
      const unsigned bits = dtype_bits(op.dtype);
      op.imm = bits == 64 ? rng() : rng() & ((std::uint64_t{1} << bits) - 1);
      k.ops.push_back(op);
    }
  expect_round_trip(k);
}

TEST(Text, ConstantsPrintReadably) {
  Builder b;
  b.constant(DType::F32, 0.1);
  b.constant(DType::F16, 0.1);
  b.constant(DType::BF16, 3.0);
  b.constant(DType::F64, -2.5e-300);
  b.constant(DType::F32, -0.0);
  b.constant(DType::I8, -128);
  b.constant(DType::Bool, 1);
  b.constant_bits(DType::F32, 0x7fc00000);
  b.constant_bits(DType::F32, 0xffc00001);
  b.constant(DType::F64, std::numeric_limits<double>::infinity());
  EXPECT_EQ(print(b.finish()), R"(%0 = const f32 0.1
%1 = const f16 0.1
%2 = const bf16 3
%3 = const f64 -2.5e-300
%4 = const f32 -0
%5 = const i8 -128
%6 = const bool true
%7 = const f32 nan
%8 = const f32 nan(0xffc00001)
%9 = const f64 inf
)");
}

TEST(Text, KernelsWithAnyFieldChangedRoundTrip) {
  // Valid kernels with one to three fields of random ops set to random
  // values (often invalid): whatever the printer writes, readable or raw,
  // parses back to the same ops.
  const Kernel base = parsed(samples::kEveryOpKind);
  std::mt19937_64 rng(7);
  auto small = [&] { return rng() % 4 == 0 ? rng() : rng() % 24; };
  int raw_lines = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Kernel k = base;
    const int changes = 1 + static_cast<int>(rng() % 3);
    for (int c = 0; c < changes; ++c) {
      Op& op = k.ops[rng() % k.size()];
      switch (rng() % 9) {
        case 0: op.kind = static_cast<OpKind>(small() % 22); break;
        case 1: op.dtype = static_cast<DType>(small() % 16); break;
        case 2: op.lanes = static_cast<std::uint8_t>(small()); break;
        case 3: op.code = static_cast<std::uint8_t>(small()); break;
        case 4: op.attr = static_cast<std::uint32_t>(small()); break;
        case 5: op.src[rng() % 3] = rng() % 5 == 0 ? kNoValue : static_cast<ValueId>(small() % (k.size() + 2)); break;
        case 6: op.reserved = static_cast<std::uint32_t>(small()); break;
        default: op.imm = small(); break;
      }
    }
    const std::string text = print(k);
    for (std::size_t at = text.find("raw "); at != std::string::npos; at = text.find("raw ", at + 1)) ++raw_lines;
    expect_round_trip(k);
    if (HasFailure()) break;
  }
  EXPECT_GT(raw_lines, 1000);  // both forms were exercised
}

TEST(Text, RawLinesShowEveryField) {
  Kernel k;
  Op op;
  op.kind = OpKind::Binary;
  op.dtype = DType::F32;
  op.code = 99;  // no such binary op
  op.src = {5, kNoValue, 0};
  op.imm = 255;
  k.ops.push_back(op);
  EXPECT_EQ(print(k), "%0 = raw kind=13 dtype=3 lanes=1 code=99 attr=0 src=@5,_,@0 reserved=0 imm=0xff\n");
}

TEST(Text, HandWrittenTextMayUseNamesOmitTypesAndComment) {
  const Kernel k = parsed(R"(
    # y = x * x + 1, with names instead of numbers and types left out
    %x_buf = param global f32[4]      # slot 0 by order
    %y_buf = param global_mut f32[4]
    %n   = const i64 4
    %i   = index group 0 %n
    %x   = load %x_buf[%i]
    %one = const f32 1
    %sq  = mul %x, %x
    %y   = add %sq, %one
    store %y_buf[%i], %y
  )");
  EXPECT_EQ(print(k), R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = const f32 1
%6 = mul f32 %4, %4
%7 = add f32 %6, %5
store f32 %1[%3], %7
)");
  EXPECT_TRUE(verify(k).ok());
}

TEST(Text, EndMarkersMayBeWrittenBare) {
  const Kernel k = parsed(R"(%n = const i64 2
%c = const bool true
%l = loop %n
if %c
barrier
endif
endloop
)");
  EXPECT_EQ(k[5].src[0], 3u);  // endif closes the if
  EXPECT_EQ(k[6].src[0], 2u);  // endloop closes the loop
  EXPECT_EQ(print(k), R"(%0 = const i64 2
%1 = const bool true
%2 = loop %0
  if %1
    barrier
  endif
endloop %2
)");
}

TEST(Text, SourceLinesPointBackIntoTheText) {
  const auto source = parse_with_lines("# header\n\n%a = const i32 1\n  %b = neg %a\n");
  ASSERT_TRUE(source.ok());
  EXPECT_EQ(source->lines, (std::vector<std::uint32_t>{3, 4}));
}

TEST(Text, PrintOpShowsOneLineAnywhere) {
  const Kernel k = parsed(samples::kAdd8);
  EXPECT_EQ(print_op(k, 7), "%7 = add f32 %5, %6");
  EXPECT_EQ(print_op(k, 8), "store f32 %2[%4], %7");
  EXPECT_EQ(print_op(k, 99), "<no op 99>");
  Kernel forward = k;
  forward.ops[7].src[1] = 8;  // names a later op (a store): no readable form
  EXPECT_EQ(print_op(forward, 7), "%7 = raw kind=13 dtype=3 lanes=1 code=1 attr=0 src=@5,@8,_ reserved=0 imm=0x0");
}

TEST(Text, WireKernelsConvertExactly) {
  const Kernel k = parsed(samples::kEveryOpKind);
  EXPECT_EQ(Kernel::from_wire(k.to_wire()), k);
}

// The ABI 1.1 math ops by name, as the builder writes them.
TEST(Text, MathOpsParseAndPrintByName) {
  const Kernel k = parsed(
      "%x = param var f32\n%a = tanh %x\n%b = erf f32 %x\n%c = sigmoid %x\n%d = rsqrt %x\n%e = log1p %x\n%f = expm1 %x\n");
  Builder b;
  const Value x = b.param(ParamKind::Variable, DType::F32);
  b.tanh(x);
  b.erf(x);
  b.sigmoid(x);
  b.rsqrt(x);
  b.log1p(x);
  b.expm1(x);
  const Kernel built = b.finish();
  EXPECT_EQ(k, built) << print(k);
  const std::string text = print(built);
  for (std::string_view name : {"= tanh f32", "= erf f32", "= sigmoid f32", "= rsqrt f32", "= log1p f32", "= expm1 f32"})
    EXPECT_NE(text.find(name), std::string::npos) << name << "\n" << text;
  expect_round_trip(built);
}
