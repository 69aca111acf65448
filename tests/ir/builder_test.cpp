// The builder: inferred types, slot assignment, constant encodings, block
// helpers; checked through the text form, which shows every field.
#include <gtest/gtest.h>

#include "kiln/ir/builder.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

#include <bit>
#include <cstdint>
#include <limits>

using namespace kiln::ir;

TEST(Builder, InfersResultTypesFromOperands) {
  Builder b;
  const Value buf = b.param(ParamKind::Global, DType::F16, 32);
  const Value i = b.constant_i64(8);
  const Value x = b.load(buf, i);
  const Value v = b.load(buf, i, 8);
  const Value lt = b.cmplt(x, x);
  const Value vlt = b.cmpgt(v, v);
  const Value wide = b.cast(DType::F32, v);
  const Value s = b.select(lt, x, x);
  const Value bc = b.broadcast(x, 4);
  const Value ins = b.insert(bc, x, 3);
  const Value ex = b.extract(v, 7);
  const Value m = b.mad(x, x, x);

  EXPECT_EQ(b.type_of(x), (ValueType{DType::F16, 1}));
  EXPECT_EQ(b.type_of(v), (ValueType{DType::F16, 8}));
  EXPECT_EQ(b.type_of(lt), (ValueType{DType::Bool, 1}));
  EXPECT_EQ(b.type_of(vlt), (ValueType{DType::Bool, 8}));
  EXPECT_EQ(b.type_of(wide), (ValueType{DType::F32, 8}));
  EXPECT_EQ(b.type_of(s), (ValueType{DType::F16, 1}));
  EXPECT_EQ(b.type_of(bc), (ValueType{DType::F16, 4}));
  EXPECT_EQ(b.type_of(ins), (ValueType{DType::F16, 4}));
  EXPECT_EQ(b.type_of(ex), (ValueType{DType::F16, 1}));
  EXPECT_EQ(b.type_of(m), (ValueType{DType::F16, 1}));
  EXPECT_EQ(b.type_of(Value{999}), ValueType{});
}

TEST(Builder, AssignsSlotsInCallOrderUnlessGiven) {
  Builder b;
  const Value p2 = b.param(ParamKind::Global, DType::F32, 4, 2);
  const Value a = b.param(ParamKind::Global, DType::F32, 4);
  const Value c = b.param(ParamKind::GlobalMut, DType::F32, 4);
  const Value n = b.param(ParamKind::Variable, DType::I64, 123);  // a var has no element count
  const Kernel k = b.finish();
  EXPECT_EQ(k[p2.id].attr, 2u);
  EXPECT_EQ(k[a.id].attr, 0u);
  EXPECT_EQ(k[c.id].attr, 1u);
  EXPECT_EQ(k[n.id].attr, 3u);
  EXPECT_EQ(k[n.id].imm, 0u);
  EXPECT_TRUE(verify(k).ok()) << verify(k).error().to_string();
}

TEST(Builder, ConstantsHoldExactBitsOfTheirDtype) {
  Builder b;
  const Kernel k = [&] {
    b.constant(DType::F16, 1.5);
    b.constant(DType::BF16, 1.0);
    b.constant(DType::F32, 3);
    b.constant(DType::F64, 0.1);
    b.constant(DType::I8, -1);
    b.constant(DType::U64, std::numeric_limits<std::uint64_t>::max());
    b.constant(DType::I32, 1.9);  // floats to integers truncate, as CAST
    b.constant(DType::I32, -1.9);
    b.constant(DType::Bool, 5);
    b.constant(DType::U8, 300);  // integers wrap, as CAST
    b.constant(DType::F32, -std::numeric_limits<double>::infinity());
    return b.finish();
  }();
  EXPECT_EQ(k[0].imm, 0x3e00u);
  EXPECT_EQ(k[1].imm, 0x3f80u);
  EXPECT_EQ(k[2].imm, std::bit_cast<std::uint32_t>(3.0f));
  EXPECT_EQ(k[3].imm, std::bit_cast<std::uint64_t>(0.1));
  EXPECT_EQ(k[4].imm, 0xffu);
  EXPECT_EQ(k[5].imm, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(k[6].imm, 1u);
  EXPECT_EQ(k[7].imm, 0xffffffffu);
  EXPECT_EQ(k[8].imm, 1u);
  EXPECT_EQ(k[9].imm, 44u);
  EXPECT_EQ(k[10].imm, 0xff800000u);
  for (const Op& op : k.ops) EXPECT_EQ(op.kind, OpKind::Const);
}

TEST(Builder, BlockHelpersWriteMatchingEndMarkers) {
  Builder b;
  const Value out = b.param(ParamKind::GlobalMut, DType::I32, 16);
  const Value i = b.group_index(0, 4);
  b.for_loop(4, [&](Value j) {
    const Value four = b.constant_i64(4);
    const Value at = b.add(b.mul(i, four), j);
    const Value three = b.constant_i64(3);
    b.if_then(b.cmplt(j, three), [&] { b.store(out, at, b.cast(DType::I32, j)); });
  });
  const Kernel k = b.finish();
  EXPECT_EQ(print(k), R"(%0 = param 0 global_mut i32[16]
%1 = const i64 4
%2 = index group 0 %1
%3 = const i64 4
%4 = loop %3
  %5 = const i64 4
  %6 = mul i64 %2, %5
  %7 = add i64 %6, %4
  %8 = const i64 3
  %9 = cmplt bool %4, %8
  if %9
    %11 = cast i32 %4
    store i32 %0[%7], %11
  endif
endloop %4
)");
  EXPECT_TRUE(verify(k).ok()) << verify(k).error().to_string();
}

TEST(Builder, ContinuesAnExistingKernelWithItsOpenBlocks) {
  Builder first;
  const Value n = first.constant_i64(3);
  const Value loop = first.loop(n);
  Kernel partial = first.finish();

  Builder b(std::move(partial));
  ASSERT_EQ(b.open_blocks().size(), 1u);
  EXPECT_EQ(b.open_blocks()[0], loop.id);
  b.end_block();
  EXPECT_TRUE(b.open_blocks().empty());
  const Kernel k = b.finish();
  EXPECT_EQ(k.ops.back().kind, OpKind::EndLoop);
  EXPECT_EQ(k.ops.back().src[0], loop.id);
  EXPECT_TRUE(verify(k).ok());
}

TEST(Builder, MismatchedOperandsAreBuiltAndLeftToTheVerifier) {
  Builder b;
  const Value x = b.constant(DType::F32, 1.0);
  const Value y = b.constant(DType::F64, 1.0);
  b.add(x, y);
  const Kernel k = b.finish();
  const auto result = verify(k);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().op, 2);
  EXPECT_NE(result.error().message.find("rule binary-type"), std::string::npos);
}
