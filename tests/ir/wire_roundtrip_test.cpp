// The core's Op is layout-identical to the ABI's kiln_op, and lowering is exact.
#include <gtest/gtest.h>

#include "kiln/ir/kernel.hpp"
#include "kiln/sdk/wire.hpp"

using namespace kiln::ir;

TEST(WireFormat, KernelRoundTripsExactly) {
  Kernel kernel;
  Op param;
  param.kind = OpKind::Param;
  param.dtype = DType::F32;
  param.code = static_cast<std::uint8_t>(ParamKind::GlobalMut);
  param.attr = 0;
  param.imm = 1024;
  kernel.ops.push_back(param);
  Op c;
  c.kind = OpKind::Const;
  c.dtype = DType::I64;
  c.imm = 7;
  kernel.ops.push_back(c);

  std::vector<kiln_op> wire = kernel.to_wire();
  ASSERT_EQ(wire.size(), 2u);
  EXPECT_EQ(wire[0].kind, KILN_OP_PARAM);
  EXPECT_EQ(wire[0].code, KILN_PARAM_GLOBAL_MUT);
  EXPECT_EQ(wire[0].imm, 1024u);
  EXPECT_EQ(wire[1].src[0], KILN_NO_OPERAND);
  EXPECT_EQ(Kernel::from_wire(wire), kernel);
}

TEST(WireFormat, NamesCoverEveryEnumValue) {
  for (unsigned k = 1; k < KILN_OP_KIND_COUNT; ++k) EXPECT_NE(kiln::sdk::op_kind_name(k), "unknown");
  for (unsigned u = 1; u < KILN_UNARY_COUNT; ++u) EXPECT_NE(kiln::sdk::unary_name(u), "unknown");
  for (unsigned b = 1; b < KILN_BINARY_COUNT; ++b) EXPECT_NE(kiln::sdk::binary_name(b), "unknown");
  for (unsigned d = 1; d < KILN_DTYPE_COUNT; ++d) EXPECT_GT(kiln::sdk::dtype_bytes(d), 0u);
}
