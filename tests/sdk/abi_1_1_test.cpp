// The SDK's side of ABI 1.1: capabilities stated per op (and the 1.0 words
// derived from them, or they from the words), and the launch of a timed
// launch read from whichever form the host filled, nested sizes checked.
#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/host_memory.hpp>
#include <kiln/sdk/op_rules.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <gtest/gtest.h>

namespace {

namespace sdk = kiln::sdk;

TEST(Capabilities, PerOpArraysAndTheLegacyWordsAgree) {
  kiln_device_info info{};
  sdk::set_dtype_caps(info, KILN_DTYPE_F32, sdk::all_op_caps(KILN_DTYPE_F32));
  sdk::set_unary(info, KILN_DTYPE_F32, KILN_UNARY_SIN, false);
  sdk::normalize_capabilities(info);
  EXPECT_TRUE(sdk::has_unary(info, KILN_DTYPE_F32, KILN_UNARY_EXP));
  EXPECT_FALSE(sdk::has_unary(info, KILN_DTYPE_F32, KILN_UNARY_SIN));
  EXPECT_TRUE(sdk::has_op_kind(info, KILN_DTYPE_F32, KILN_OP_LOAD));
  EXPECT_FALSE(sdk::has_dtype(info, KILN_DTYPE_F64));
  EXPECT_EQ(info.dtype_ops[KILN_DTYPE_F32], sdk::all_op_caps(KILN_DTYPE_F32) & ~KILN_CAP_UNARY(KILN_UNARY_SIN));
  EXPECT_EQ(info.dtype_ops[KILN_DTYPE_F64], 0u);
}

TEST(Capabilities, AnAbi10InfoGetsItsArraysFromItsWords) {
  kiln_device_info info{};
  info.dtype_ops[KILN_DTYPE_I32] = KILN_CAP_BINARY(KILN_BINARY_ADD) | KILN_CAP_UNARY(KILN_UNARY_NEG);
  sdk::normalize_capabilities(info);
  EXPECT_TRUE(sdk::has_binary(info, KILN_DTYPE_I32, KILN_BINARY_ADD));
  EXPECT_TRUE(sdk::has_unary(info, KILN_DTYPE_I32, KILN_UNARY_NEG));
  EXPECT_FALSE(sdk::has_binary(info, KILN_DTYPE_I32, KILN_BINARY_MUL));
  EXPECT_TRUE(sdk::has_op_kind(info, KILN_DTYPE_I32, KILN_OP_STORE));
  // No op kind appended after 1.0 is assumed of a 1.0 plugin.
  EXPECT_FALSE(sdk::has_op_kind(info, KILN_DTYPE_I32, KILN_OP_KIND_COUNT));
}

// The math ops of 1.1 (TANH = 14 ... EXPM1 = 19) have no 1.0 bit:
// KILN_CAP_UNARY(14) would be KILN_CAP_BINARY(ADD)'s. A 1.0 word never claims
// them, and claiming them in the arrays leaves the word as 1.0 knows it.
TEST(Capabilities, TheMathOpsOf11LiveInTheArraysOnly) {
  static_assert(KILN_CAP_UNARY(KILN_UNARY_TANH) == KILN_CAP_BINARY(KILN_BINARY_ADD), "the collision this guards");
  kiln_device_info legacy{};
  legacy.dtype_ops[KILN_DTYPE_F32] = 0xffffffffu;  // every bit a 1.0 plugin can set
  sdk::normalize_capabilities(legacy);
  EXPECT_TRUE(sdk::has_binary(legacy, KILN_DTYPE_F32, KILN_BINARY_ADD));
  for (unsigned u = KILN_UNARY_TANH; u < KILN_UNARY_COUNT; ++u)
    EXPECT_FALSE(sdk::has_unary(legacy, KILN_DTYPE_F32, u)) << sdk::unary_name(u);

  kiln_device_info info{};
  sdk::set_all_ops(info, KILN_DTYPE_F32);
  sdk::set_all_ops(info, KILN_DTYPE_I32);
  sdk::normalize_capabilities(info);
  for (unsigned u = KILN_UNARY_TANH; u < KILN_UNARY_COUNT; ++u) {
    EXPECT_TRUE(sdk::has_unary(info, KILN_DTYPE_F32, u)) << sdk::unary_name(u);
    EXPECT_FALSE(sdk::has_unary(info, KILN_DTYPE_I32, u)) << sdk::unary_name(u) << ": float only";
  }
  EXPECT_EQ(info.dtype_ops[KILN_DTYPE_F32], sdk::all_op_caps(KILN_DTYPE_F32));
  EXPECT_EQ(info.dtype_ops[KILN_DTYPE_I32], sdk::all_op_caps(KILN_DTYPE_I32));
  // Turning one off touches only its array entry.
  sdk::set_unary_after_1_0(info, KILN_DTYPE_F32, [](unsigned u) { return u != KILN_UNARY_ERF; });
  EXPECT_FALSE(sdk::has_unary(info, KILN_DTYPE_F32, KILN_UNARY_ERF));
  EXPECT_TRUE(sdk::has_unary(info, KILN_DTYPE_F32, KILN_UNARY_TANH));
  sdk::normalize_capabilities(info);
  EXPECT_EQ(info.dtype_ops[KILN_DTYPE_F32], sdk::all_op_caps(KILN_DTYPE_F32));
}

TEST(Capabilities, FeatureBitsHaveRoomPastOneWord) {
  kiln_device_info info{};
  sdk::set_feature(info, 70);
  EXPECT_TRUE(sdk::has_feature(info, 70));
  EXPECT_FALSE(sdk::has_feature(info, 6));
  EXPECT_EQ(info.features[1], std::uint64_t{1} << 6);
  EXPECT_FALSE(sdk::has_feature(info, KILN_FEATURE_WORDS * 64));  // past the words: never set
}

kiln_launch_args a_launch() {
  kiln_launch_args launch{};
  launch.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  launch.n_args = 3;
  launch.groups[0] = 7;
  launch.local[0] = 4;
  return launch;
}

TEST(TimedLaunch, A11HostsLaunchIsReadThroughThePointer) {
  const kiln_launch_args launch = a_launch();
  kiln_timed_launch_args timed{};
  timed.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  timed.repeats = 1;
  timed.launch_args = &launch;  // the embedded copy left empty: it must not be read
  const kiln_launch_args read = sdk::timed_launch_of(timed);
  EXPECT_EQ(read.n_args, 3u);
  EXPECT_EQ(read.groups[0], 7u);
}

TEST(TimedLaunch, A10HostsLaunchIsTheEmbeddedCopy) {
  kiln_timed_launch_args timed{};
  timed.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE_1_0;
  timed.repeats = 1;
  timed.launch = sdk::launch_args_1_0(a_launch());
  timed.launch_args = reinterpret_cast<const kiln_launch_args*>(0x1);  // past the 1.0 size: never read
  const kiln_launch_args read = sdk::timed_launch_of(timed);
  EXPECT_EQ(read.local[0], 4u);
}

// timed_launch_of refuses `timed` with INVALID_ARGUMENT and `message`
// (`what`: what was wrongly read, for the failure).
void expect_refused(const kiln_timed_launch_args& timed, const char* message, const char* what) {
  try {
    (void)sdk::timed_launch_of(timed);
    ADD_FAILURE() << what;
  } catch (const sdk::PluginError& e) {
    EXPECT_EQ(e.status(), KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(), message);
  }
}

TEST(TimedLaunch, ANestedLaunchTooSmallIsRefusedByName) {
  kiln_launch_args launch = a_launch();
  launch.struct_size = 16;
  kiln_timed_launch_args timed{};
  timed.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  timed.repeats = 1;
  timed.launch_args = &launch;
  expect_refused(timed, "launch_timed: launch_args: struct_size is 16, less than the 88 bytes ABI 1.0 defines",
                 "a 16-byte launch was read");
}

// plugin.h: repeats == 0 is INVALID_ARGUMENT, for every plugin alike (the
// SDK checks it where each plugin reads its launch).
TEST(TimedLaunch, NoRepeatsAreRefused) {
  const kiln_launch_args launch = a_launch();
  kiln_timed_launch_args timed{};
  timed.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  timed.launch_args = &launch;
  expect_refused(timed, "launch_timed: repeats must be >= 1", "repeats 0 was accepted");
}

}  // namespace
