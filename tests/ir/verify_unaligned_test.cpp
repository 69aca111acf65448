// Vector LOAD and STORE at any element index (attr KILN_ACCESS_UNALIGNED,
// ABI 1.1) in the core: the text form's `unaligned`, its round trip, and the
// verifier's rules (attr 0 or 1, 1 only on more than one lane; a statically
// misaligned index is an error only without it).
#include <gtest/gtest.h>

#include "verify_expect.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

using namespace kiln;
using namespace kiln::ir;

namespace {

constexpr const char* kUnaligned = R"(%0 = param 0 global f16[100]
%1 = param 1 global_mut f16[100]
%2 = const i64 3
%3 = load unaligned f16x8 %0[%2]
store unaligned f16x8 %1[%2], %3
)";

using kiln::test::expect_rule;

}  // namespace

TEST(UnalignedAccess, RoundTripsAndVerifies) {
  const auto k = parse(kUnaligned);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(print(*k), kUnaligned);
  EXPECT_TRUE(verify(*k).ok()) << verify(*k).error().to_string();
  EXPECT_EQ((*k)[3].attr, KILN_ACCESS_UNALIGNED);
  EXPECT_EQ((*k)[4].attr, KILN_ACCESS_UNALIGNED);
  const auto wire = k->to_wire();
  EXPECT_EQ(wire[3].attr, KILN_ACCESS_UNALIGNED);
}

TEST(UnalignedAccess, VerifierRules) {
  // Index 3 of an 8-lane access: misaligned without the attr.
  std::string plain(kUnaligned);
  plain.replace(plain.find("load unaligned"), 14, "load");
  expect_rule(plain, 3, "alignment", "a 8-lane access needs an index that is a multiple of 8; this one is always 3");
  // A one-lane access has nothing to align.
  std::string scalar(kUnaligned);
  scalar.replace(scalar.find("load unaligned f16x8"), 20, "load unaligned f16");
  scalar.replace(scalar.find("store unaligned f16x8"), 21, "store f16");
  expect_rule(scalar, 3, "load-attr", "attr 1 is neither 0 nor KILN_ACCESS_UNALIGNED");
  // Any other attr is refused by name.
  auto k = parse(kUnaligned);
  ASSERT_TRUE(k.ok());
  k->ops[4].attr = 2;
  const auto result = verify(*k);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().op, 4u);
  EXPECT_NE(result.error().message.find("rule store-attr: attr 2"), std::string::npos) << result.error().to_string();
}
