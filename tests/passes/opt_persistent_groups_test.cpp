// persistent_groups: the grid axis as at most compute_units * per_unit
// groups, each looping over its share (pad + coarsen, strided, the factor
// from the device).
#include "passes/structural_test_support.hpp"

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

// A device of `units` compute units with threads per group.
DeviceInfo units(std::uint32_t count) {
  DeviceInfo d = gpu_preset();
  d.compute_units = count;
  return d;
}

// The GROUP index length of axis 0 of `kernel`.
std::int64_t groups_of(const ir::Kernel& kernel) {
  for (const ir::Op& op : kernel.ops)
    if (op.kind == ir::OpKind::Index && op.scope() == ir::Scope::Group) return static_cast<std::int64_t>(kernel[op.src[0]].imm);
  return -1;
}

}  // namespace

TEST(PersistentGroups, RowsLoopInOneWaveOfGroups) {
  // 37 rows on 4 units: factor ceil(37 / 4) = 10, padded to 40, 4 groups;
  // 2 a unit: factor 5, 8 groups (37 -> 40). The results are the
  // unoptimized kernel's exactly (the interpreter, random inputs).
  const ir::Kernel softmax = standard("softmax-rows", {37, 19, 1});
  const ir::Kernel tiled = expect_applies(softmax, "tiled_reduce(loop=0,local=8,branch=4)", units(4));
  const ir::Kernel one = expect_applies(tiled, "persistent_groups(axis=0,per_unit=1)", units(4));
  EXPECT_EQ(groups_of(one), 4);
  const ir::Kernel two = expect_applies(tiled, "persistent_groups(axis=0,per_unit=2)", units(4));
  EXPECT_EQ(groups_of(two), 8);
  // A length the factor divides needs no guard: 36 rows on 4 units, 9 each.
  const ir::Kernel even = expect_applies(standard("softmax-rows", {36, 19, 1}), "persistent_groups(axis=0,per_unit=1)",
                                         units(4));
  EXPECT_EQ(groups_of(even), 4);
  EXPECT_EQ(ir::print(even).find("cmplt"), std::string::npos) << ir::print(even);
  // Fewer groups left than the factor's rows: 37 on 16 units is factor 3,
  // 13 groups.
  EXPECT_EQ(groups_of(expect_applies(tiled, "persistent_groups(axis=0,per_unit=1)", units(16))), 13);
}

TEST(PersistentGroups, ConfigsAndRefusals) {
  const ir::Kernel rows = standard("softmax-rows", {64, 19, 1});
  const ir::Kernel tiled = expect_applies(rows, "tiled_reduce(loop=0,local=8,branch=4)", units(4));
  // At least four rows a group at each per_unit; threads per group only.
  EXPECT_EQ(config_texts("persistent_groups", tiled, units(4)),
            (std::vector<std::string>{"persistent_groups(axis=0,per_unit=1)", "persistent_groups(axis=0,per_unit=2)"}));
  EXPECT_EQ(config_texts("persistent_groups", tiled, units(12)),
            (std::vector<std::string>{"persistent_groups(axis=0,per_unit=1)"}));
  EXPECT_TRUE(config_texts("persistent_groups", rows, units(4)).empty());  // no LOCAL index yet
  EXPECT_TRUE(config_texts("persistent_groups", tiled, cpu_preset()).empty());
  EXPECT_NE(refusal(tiled, "persistent_groups(axis=0,per_unit=1)", units(64)).find("not more than 64"), std::string::npos);
  EXPECT_NE(refusal(tiled, "persistent_groups(axis=1,per_unit=1)", units(4)).find("no GROUP index on axis 1"),
            std::string::npos);
  EXPECT_NE(refusal(tiled, "persistent_groups(axis=0,per_unit=0)", units(4)).find("per_unit must be"), std::string::npos);
  EXPECT_NE(refusal(tiled, "persistent_groups(axis=0,per_unit=1,mode=1)", units(4)).find("unknown parameter 'mode'"),
            std::string::npos);
  EXPECT_NE(refusal(tiled, "persistent_groups(axis=0)", units(4)).find("per_unit"), std::string::npos);
  EXPECT_NE(refusal(tiled, "persistent_groups(axis=0,per_unit=1)", units(0)).find("compute units"), std::string::npos);
  EXPECT_NE(refusal(parse_valid(kDynamicRowSum), "persistent_groups(axis=0,per_unit=1)", units(4)).find("dynamic"),
            std::string::npos);
}
