// `kiln ir` end to end: the real executable, its output, its errors and its
// JSON, against the library calls it stands for.
#include "passes/pass_test_support.hpp"

#include "kiln/passes/optimization.hpp"

#include <boost/json.hpp>
#include <gmock/gmock.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace {

using ::testing::HasSubstr;

struct Output {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// One folder per test process: ctest runs these tests in parallel.
std::filesystem::path scratch() {
  const auto dir = std::filesystem::path(KILN_BUILD_DIR) / "tests" / "cli-ir" / std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

std::string write(const std::string& name, std::string_view text) {
  const auto path = scratch() / name;
  std::ofstream(path) << text;
  return path.string();
}

Output kiln_ir(const std::string& args) {
  const std::string err_file = (scratch() / "stderr.txt").string();
  const std::string command = std::string(KILN_CLI) + " ir " + args + " 2>" + err_file;
  Output result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> chunk{};
  std::size_t n = 0;
  while ((n = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0) result.out.append(chunk.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  result.err.assign(std::istreambuf_iterator<char>(in), {});
  return result;
}

constexpr std::string_view kRowSum = R"(# row sums of a 3 x 5 matrix
%0 = param 0 global f32[15]
%1 = param 1 global_mut f32[3]
%2 = const i64 3
%3 = const i64 5
%4 = index group 0 %2
%5 = mul i64 %4, %3
%6 = const f32 0
%7 = storage register f32[1]
%8 = const i64 0
store f32 %7[%8], %6
%10 = loop %3
  %11 = add i64 %5, %10
  %12 = load f32 %0[%11]
  %13 = load f32 %7[%8]
  %14 = add f32 %13, %12
  store f32 %7[%8], %14
endloop %10
%17 = load f32 %7[%8]
store f32 %1[%4], %17
)";

}  // namespace

TEST(CliIr, PrintsTheKernelItRead) {
  const std::string file = write("sum.kir", kRowSum);
  const Output o = kiln_ir(file);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, kiln::ir::print(kiln::ir::parse(kRowSum).value()));
}

TEST(CliIr, ParseAndVerifyErrorsNameFileLineAndColumn) {
  const std::string bad_parse = write("bad_parse.kir", "%0 = param 0 global f32[4]\n%1 = add f32 %0, %7\n");
  const Output parse = kiln_ir(bad_parse);
  EXPECT_EQ(parse.exit_code, 1);
  EXPECT_THAT(parse.err, HasSubstr(bad_parse + ":2:18: expected a value defined above, got '%7'"));
  const std::string bad_verify = write("bad_verify.kir", "%0 = param 0 global f32[4]\n%1 = const i64 2\n%2 = add f32 %1, %1\n");
  const Output verify = kiln_ir(bad_verify);
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_THAT(verify.err, HasSubstr(bad_verify + ":3: rule binary-type"));
  EXPECT_THAT(kiln_ir(write("missing.kir", "") + "-not-there").err, HasSubstr("cannot read"));
}

// Only regular files are read, and only up to a size: /dev/zero used to be
// read forever.
TEST(CliIr, ADeviceOrFolderIsRefusedNotReadForever) {
  const Output zero = kiln_ir("/dev/zero");
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_THAT(zero.err, HasSubstr("'/dev/zero': not a regular file"));
  EXPECT_THAT(kiln_ir(scratch().string()).err, HasSubstr("not a regular file"));
}

TEST(CliIr, OptimizePrintsWhatTheLibraryGives) {
  const std::string file = write("sum.kir", kRowSum);
  for (const char* device : {"preset:gpu", "preset:h200", "preset:cpu", "preset:small"}) {
    const Output o = kiln_ir(file + " --opt '' --device " + device);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const auto expected = kiln::passes::optimize(kiln::ir::parse(kRowSum).value(), {}, *kiln::passes::device_preset(device));
    EXPECT_EQ(o.out, kiln::ir::print(expected.value())) << device;
  }
  const Output unknown = kiln_ir(file + " --opt 'no_such_opt(x=1)'");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("step 1 `no_such_opt(x=1)`: unknown optimization 'no_such_opt'"));
  const Output malformed = kiln_ir(file + " --opt 'unroll(loop='");
  EXPECT_EQ(malformed.exit_code, 1);
  EXPECT_THAT(malformed.err, HasSubstr("column 13: expected an integer"));
}

TEST(CliIr, RunsOnePass) {
  const std::string file = write("sum.kir", kRowSum);
  const Output o = kiln_ir(file + " --pass constants_to_top");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, ::testing::StartsWith("%0 = const i64 3\n%1 = const i64 5\n%2 = const f32 0\n%3 = const i64 0\n"));
  const Output unknown = kiln_ir(file + " --pass nope");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("no pass named 'nope' (passes: remove_unit_loops, fold_constants"));
}

TEST(CliIr, RunSummarizesOutputsAndJsonCarriesEverything) {
  const std::string file = write("sum.kir", kRowSum);
  const Output text = kiln_ir(file + " --run");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("%1 (slot 1) f32[3]: min "));

  const Output o = kiln_ir(file + " --run --cost --configs --json --device preset:small");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const boost::json::object report = boost::json::parse(o.out).as_object();
  EXPECT_EQ(report.at("device").as_string(), "preset:small");
  EXPECT_EQ(report.at("kernel").as_string(), kiln::ir::print(kiln::ir::parse(kRowSum).value()));
  EXPECT_GT(report.at("cost").at("total_ns").to_number<double>(), 0);
  EXPECT_EQ(report.at("cost").at("flops").to_number<double>(), 15);
  EXPECT_EQ(report.at("configs").as_array().size(), [] {
    std::size_t n = 0;
    const auto device = kiln::passes::small_preset();
    const auto normalized = kiln::passes::normalize(kiln::ir::parse(kRowSum).value(), device);
    for (const auto* opt : kiln::passes::optimizations()) n += opt->configs(normalized, device).size();
    return n;
  }());
  const boost::json::array& outputs = report.at("outputs").as_array();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].at("elements").to_number<int>(), 3);
  EXPECT_EQ(outputs[0].at("unwritten").to_number<int>(), 0);
  // Each row sums five values drawn from [-1, 1].
  EXPECT_LE(std::abs(outputs[0].at("max").to_number<double>()), 5.0);
}

TEST(CliIr, RunNeedsScalarsForVarParams) {
  const std::string file = write("dyn.kir", R"(%0 = param 0 global_mut i64[8]
%1 = param 1 var i64
%2 = index group 0 %1
store i64 %0[%2], %2
)");
  const Output missing = kiln_ir(file + " --run");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("a value for var param 1 is needed"));
  const Output o = kiln_ir(file + " --run --scalars 8");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("i64[8]: min 0, max 7, mean 3.5"));
  // 9 threads on 8 elements: the store (proved only at launch) is guarded by
  // the default policy, so the extra thread writes nothing; under "prove"
  // the launch is refused naming the access.
  const Output guarded = kiln_ir(file + " --run --scalars 9");
  EXPECT_EQ(guarded.exit_code, 0) << guarded.err;
  EXPECT_THAT(guarded.out, HasSubstr("i64[8]: min 0, max 7, mean 3.5"));
  const std::string prove = write("prove-dyn.json", R"({"bounds": "prove"})");
  const Output refused = kiln_ir(file + " --run --scalars 9 --config " + prove);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("with this launch's scalars and buffers, op 3"));
}

TEST(CliIr, UnknownPresetIsAnError) {
  const Output o = kiln_ir(write("sum.kir", kRowSum) + " --cost --device preset:huge");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_THAT(o.err, HasSubstr("no device preset 'preset:huge' (presets: preset:gpu, preset:h200, preset:small, preset:cpu)"));
}

// `kiln ir --run` applies the config's bounds policy (issue 17): an access
// proved out of range is refused naming it, a data-dependent store is
// guarded (default) or refused ("prove"), and buffers whose bytes do not
// fit the host are refused before anything is allocated.
TEST(CliIr, RunAppliesTheBoundsPolicy) {
  const std::string out_of_range = write("oob.ir", R"(%0 = param 0 global_mut f32[1000]
%1 = const i64 1000
%2 = index group 0 %1
%3 = const i64 0
%4 = cmpgt bool %2, %3
if %4
  %6 = const i64 10000000
  %7 = add i64 %2, %6
  %8 = const f32 1
  store f32 %0[%7], %8
endif
)");
  const Output refused = kiln_ir(out_of_range + " --run");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("always outside its memory: param slot 0 (%0) has 1000 f32 elements"));

  const std::string scatter = write("scatter.ir", R"(%0 = param 0 global i64[8]
%1 = param 1 global_mut f32[8]
%2 = const i64 8
%3 = index group 0 %2
%4 = load i64 %0[%3]
%5 = const i64 100000000
%6 = mul i64 %4, %5
%7 = const f32 1
store f32 %1[%6], %7
)");
  const Output guarded = kiln_ir(scatter + " --run");
  EXPECT_EQ(guarded.exit_code, 0) << guarded.err;
  EXPECT_THAT(guarded.err, HasSubstr("bounds policy \"guard\": 1 access(es) guarded"));
  const std::string prove = write("prove.json", R"({"bounds": "prove"})");
  const Output proved = kiln_ir(scatter + " --run --config " + prove);
  EXPECT_EQ(proved.exit_code, 1);
  EXPECT_THAT(proved.err, HasSubstr("bounds policy \"prove\""));
  const std::string bad = write("bad.json", R"({"bounds": "maybe"})");
  EXPECT_THAT(kiln_ir(scatter + " --run --config " + bad).err, HasSubstr("expected \"guard\", \"prove\" or \"trust\", got \"maybe\""));

  // 2^46 f32 (256 TiB): within the verifier's limit, past any host.
  const std::string huge = write("huge.ir", "%0 = param 0 global_mut f32[70368744177664]\n%1 = const i64 0\n%2 = const f32 1\nstore f32 %0[%1], %2\n");
  const Output oom = kiln_ir(huge + " --run");
  EXPECT_EQ(oom.exit_code, 1);
  EXPECT_THAT(oom.err, HasSubstr("its buffers take 268435456 MiB"));
}
