// The C plugin as a plugin: init and options, DeviceInfo from the machine,
// the compile cache, compile errors, launch checks, timed launch, buffers
// from elsewhere. Each test inits the plugin with its own options (this
// binary never keeps a plugin alive between tests).
#include <gtest/gtest.h>

#include "support/kernel_runner.hpp"
#include "support/timeout_launch.hpp"
#include "support/wire_builder.hpp"

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

namespace kiln::test {
namespace {

namespace fs = std::filesystem;

// A fresh, empty cache directory per test.
class CPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    cache_ = fs::temp_directory_path() / ("kiln-c-plugin-test-" + std::to_string(::getpid())) / info->name();
    fs::remove_all(cache_);
    test_log_lines().clear();
  }
  void TearDown() override { fs::remove_all(cache_.parent_path()); }

  std::string options(const std::string& extra = "") const {
    return "{\"cache_dir\": \"" + cache_.string() + "\"" + (extra.empty() ? "" : ", " + extra) + "}";
  }
  std::size_t files_with_extension(const std::string& ext) const {
    std::size_t count = 0;
    for (const auto& entry : fs::directory_iterator(cache_)) count += entry.path().extension() == ext ? 1 : 0;
    return count;
  }
  static bool logged(const std::string& what) { return test_log_count(what) > 0; }

  fs::path cache_;
};

kiln_status init_status(const std::string& options, std::string* message = nullptr) {
  try {
    AbiPlugin plugin(plugin_path("c"), options);
  } catch (const AbiError& e) {
    if (message != nullptr) *message = e.what();
    return e.status;
  }
  return KILN_STATUS_OK;
}

TEST_F(CPlugin, DeviceInfoComesFromTheMachine) {
  AbiPlugin plugin(plugin_path("c"), options());
  ASSERT_EQ(plugin.device_count(), 1u);
  const kiln_device_info info = plugin.info(0);
  EXPECT_GT(std::strlen(info.name), 0u);
  EXPECT_EQ(info.kind, static_cast<std::uint32_t>(KILN_DEVICE_KIND_CPU));
  EXPECT_EQ(info.flags, KILN_DEVICE_CAN_COMPILE | KILN_DEVICE_HOST_MEMORY | KILN_DEVICE_SURVIVES_TIMEOUT);
  EXPECT_GE(info.compute_units, 1u);
  EXPECT_LE(info.compute_units, std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(info.warp_size, 1u);
  EXPECT_EQ(info.max_local_threads, 1u);
  EXPECT_EQ(info.max_local_dims[0], 1u);
  EXPECT_GT(info.max_grid_dims[0], 1u << 20);
  EXPECT_GT(info.memory_bytes, 0u);
  EXPECT_NE(info.vector_widths & (1u << 1), 0u);
  EXPECT_NE(info.dtype_ops[KILN_DTYPE_F32] & KILN_CAP_UNARY(KILN_UNARY_EXP), 0u);
  EXPECT_NE(info.dtype_ops[KILN_DTYPE_BF16], 0u);
  EXPECT_EQ(info.dtype_ops[KILN_DTYPE_INVALID], 0u);
  // The compiler's own version line, as the driver version.
  EXPECT_TRUE(std::string(info.driver_version).find("cc") != std::string::npos ||
              std::string(info.driver_version).find("clang") != std::string::npos)
      << info.driver_version;
#if defined(__x86_64__)
  EXPECT_NE(info.vector_widths & (1u << 4), 0u);  // SSE2 at least
  EXPECT_GT(info.register_bytes, 0u);
  EXPECT_GT(info.peak_gflops, 0.0);
#endif
  if (fs::exists("/sys/devices/system/cpu/cpu0/cache/index0")) {
    EXPECT_GT(info.cache_bytes[0], 0u);
    EXPECT_GE(info.cache_bytes[1], info.cache_bytes[0]);
  }
}

TEST_F(CPlugin, OlderHostGetsOnlyTheFieldsItKnows) {
  AbiPlugin plugin(plugin_path("c"), options());
  kiln_device_info info{};
  std::memset(&info, 0xab, sizeof info);
  info.struct_size = offsetof(kiln_device_info, kind);  // a host that knows only the strings
  kiln_device_info_args args{};
  args.struct_size = KILN_DEVICE_INFO_ARGS_STRUCT_SIZE;
  args.info = &info;
  check(plugin.api().device_info(&args));
  EXPECT_GT(std::strlen(info.name), 0u);
  EXPECT_EQ(info.kind, 0xababababu);  // untouched
}

TEST_F(CPlugin, MissingCompilerIsUnavailableAndNamed) {
  std::string message;
  EXPECT_EQ(init_status(options("\"compiler\": \"kiln-no-such-cc\""), &message), KILN_STATUS_UNAVAILABLE);
  EXPECT_NE(message.find("kiln-no-such-cc"), std::string::npos) << message;
  EXPECT_NE(message.find("compiler"), std::string::npos) << message;
}

TEST_F(CPlugin, BadOptionsNameTheKey) {
  std::string message;
  EXPECT_EQ(init_status(options("\"threads\": \"two\""), &message), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("threads"), std::string::npos) << message;
  EXPECT_EQ(init_status(options("\"threads\": 0"), &message), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(init_status("{\"openmp\": 1, }", &message), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("openmp"), std::string::npos) << message;
  EXPECT_EQ(init_status("{not json", &message), KILN_STATUS_INVALID_ARGUMENT);
}

TEST_F(CPlugin, UnknownOptionsAreWarnings) {
  AbiPlugin plugin(plugin_path("c"), options("\"optimise_harder\": true"));
  EXPECT_TRUE(logged("optimise_harder"));
}

// The plugin's cache key for `device` (its compiler, flags and target).
std::string device_cache_key(AbiPlugin& plugin, kiln_device* device) {
  kiln_cache_key_args key{};
  key.struct_size = KILN_CACHE_KEY_ARGS_STRUCT_SIZE;
  key.device = device;
  check(plugin.api().cache_key(&key));
  return key.key;
}

TEST_F(CPlugin, SecondCompileHitsTheCacheAndAChangedFlagMissesIt) {
  const auto ops = wire_add_f32(100);
  std::string key_o3;
  {
    AbiPlugin plugin(plugin_path("c"), options());
    kiln_device* d = plugin.open(0);
    ProgramHandle first(plugin, plugin.compile(d, ops));
    EXPECT_TRUE(logged("c: compiled "));
    EXPECT_EQ(files_with_extension(".so"), 1u);
    test_log_lines().clear();
    ProgramHandle second(plugin, plugin.compile(d, ops));
    EXPECT_TRUE(logged("c: cache hit "));
    EXPECT_FALSE(logged("c: compiled "));
    EXPECT_EQ(files_with_extension(".so"), 1u);
    EXPECT_EQ(files_with_extension(".c"), 0u);  // keep_source is off
    key_o3 = device_cache_key(plugin, d);
    EXPECT_NE(key_o3.find("-O3"), std::string::npos) << key_o3;
  }
  test_log_lines().clear();
  AbiPlugin plugin(plugin_path("c"), options("\"flags\": \"-O2 -march=native\", \"keep_source\": true"));
  kiln_device* d = plugin.open(0);
  ProgramHandle third(plugin, plugin.compile(d, ops));
  EXPECT_TRUE(logged("c: compiled "));
  EXPECT_EQ(files_with_extension(".so"), 2u);
  EXPECT_EQ(files_with_extension(".c"), 1u);
  EXPECT_NE(key_o3, device_cache_key(plugin, d));
}

// kiln's 16-lane vectors are whole AVX-512 registers: where the target has
// them the plugin asks the compiler for 512-bit vectors (GCC prefers 256 on
// Xeons, and the helpers' halves then meet through memory), unless the
// flags choose a width themselves; a target without AVX-512 is left alone.
TEST_F(CPlugin, AnAvx512TargetGetsWholeVectorsUnlessTheFlagsChooseAWidth) {
  AbiPlugin plugin(plugin_path("c"), options());
  if ((plugin.info(0).vector_widths & (1u << 16)) == 0) GTEST_SKIP() << "the compiler's target here has no AVX-512";
  const std::string key = device_cache_key(plugin, plugin.open(0));
  EXPECT_NE(key.find(" -mprefer-vector-width=512"), std::string::npos) << key;
  AbiPlugin chosen(plugin_path("c"), options("\"flags\": \"-O2 -march=native -mprefer-vector-width=256\""));
  const std::string chosen_key = device_cache_key(chosen, chosen.open(0));
  EXPECT_EQ(chosen_key.find("=512"), std::string::npos) << chosen_key;
  EXPECT_NE(chosen_key.find("-mprefer-vector-width=256"), std::string::npos) << chosen_key;
  AbiPlugin baseline(plugin_path("c"), options("\"flags\": \"-O2\""));  // x86-64's baseline: SSE2
  const std::string baseline_key = device_cache_key(baseline, baseline.open(0));
  EXPECT_EQ(baseline_key.find("-mprefer-vector-width"), std::string::npos) << baseline_key;
}

TEST_F(CPlugin, ConcurrentCompilesOfOneKernelAgree) {
  AbiPlugin plugin(plugin_path("c"), options());
  kiln_device* d = plugin.open(0);
  const auto ops = wire_add_f32(4096);
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        ProgramHandle p(plugin, plugin.compile(d, ops));
        ok[t] = 1;
      } catch (const std::exception&) {
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(std::count(ok.begin(), ok.end(), 1), 4);
  EXPECT_EQ(files_with_extension(".so"), 1u);
  EXPECT_EQ(files_with_extension(".tmp"), 0u);
}

// A compile killed with its process leaves <key>.<pid>.<n>.c / .so.tmp in
// the cache; the next init removes those of processes that are gone and
// keeps everything else (a live process's temporaries, cache entries).
TEST_F(CPlugin, TemporariesOfKilledCompilesAreRemovedAtInit) {
  fs::create_directories(cache_);
  // A pid that is certainly gone: a child that has exited and been reaped.
  const pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  const std::string key(40, 'a');
  const std::string dead_stem = key + "." + std::to_string(dead) + ".3";
  const std::string live_stem = key + "." + std::to_string(::getpid()) + ".9";
  for (const std::string& name : {dead_stem + ".c", dead_stem + ".so.tmp", live_stem + ".c", key + ".so", key + ".c",
                                  std::string("notes.1.2.c")})
    std::ofstream(cache_ / name) << "x";
  AbiPlugin plugin(plugin_path("c"), options());
  EXPECT_FALSE(fs::exists(cache_ / (dead_stem + ".c")));
  EXPECT_FALSE(fs::exists(cache_ / (dead_stem + ".so.tmp")));
  for (const std::string& kept : {live_stem + ".c", key + ".so", key + ".c", std::string("notes.1.2.c")})
    EXPECT_TRUE(fs::exists(cache_ / kept)) << kept;
  EXPECT_TRUE(logged("c: removed 2 temporary files of killed compiles"));
}

TEST_F(CPlugin, CompilerErrorsReturnTheLogAndTheSourcePath) {
  AbiPlugin plugin(plugin_path("c"), options("\"flags\": \"-O2 -fno-such-flag-kiln\""));
  EXPECT_TRUE(logged("-fno-such-flag-kiln"));  // warned at init
  kiln_device* d = plugin.open(0);
  std::int64_t failed_op = 0;
  try {
    plugin.compile(d, wire_add_f32(8), &failed_op);
    FAIL() << "expected COMPILE_FAILED";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_COMPILE_FAILED);
    const std::string message = e.what();
    EXPECT_NE(message.find("-fno-such-flag-kiln"), std::string::npos) << message;
    const auto at = message.find(cache_.string());
    ASSERT_NE(at, std::string::npos) << message;
    const std::string path = message.substr(at, message.find(".c", at) + 2 - at);
    EXPECT_TRUE(fs::exists(path)) << path;
  }
  EXPECT_EQ(failed_op, -1);
}

// A compiler that crashes (GCC 12's vectorizer does on some generated
// reductions) gets one more try without -ftree-vectorize; the kernel runs.
TEST_F(CPlugin, CompilerCrashIsRetriedWithoutTheVectorizer) {
  fs::create_directories(cache_);
  const fs::path wrapper = cache_ / "crashing-cc";
  {
    std::ofstream out(wrapper);
    out << "#!/bin/sh\n"
           "case \" $* \" in *\" -fno-tree-vectorize \"*) exec cc \"$@\";; esac\n"
           "case \" $* \" in *\" -shared \"*) echo \"k.c:1: internal compiler error: in info_for_reduction\" >&2; exit 1;; esac\n"
           "exec cc \"$@\"\n";
  }
  fs::permissions(wrapper, fs::perms::owner_all);
  AbiPlugin plugin(plugin_path("c"), options("\"compiler\": \"" + wrapper.string() + "\""));
  kiln_device* d = plugin.open(0);
  kiln_program* program = plugin.compile(d, wire_add_f32(8));
  EXPECT_NE(program, nullptr);
  EXPECT_TRUE(logged("retrying with -fno-tree-vectorize"));
  plugin.api().program_release(program);
}

// A compiler wrapper: behaves as cc, except that compiling a kernel (-shared)
// runs `on_compile` instead.
fs::path compiler_wrapper(const fs::path& dir, const std::string& on_compile) {
  fs::create_directories(dir);
  const fs::path wrapper = dir / "misbehaving-cc";
  {
    std::ofstream out(wrapper);
    out << "#!/bin/sh\n"
           "case \" $* \" in *\" -shared \"*) " << on_compile << ";; esac\n"
           "exec cc \"$@\"\n";
  }
  fs::permissions(wrapper, fs::perms::owner_all);
  return wrapper;
}

std::string compile_error(AbiPlugin& plugin, kiln_device* device) {
  try {
    plugin.api().program_release(plugin.compile(device, wire_add_f32(8)));
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_COMPILE_FAILED);
    return e.what();
  }
  ADD_FAILURE() << "expected COMPILE_FAILED";
  return "";
}

TEST_F(CPlugin, CompilerKilledByASignalIsReportedWithTheSignal) {
  const fs::path wrapper = compiler_wrapper(cache_, "echo 'cc1: about to crash' >&2; kill -SEGV $$");
  AbiPlugin plugin(plugin_path("c"), options("\"compiler\": \"" + wrapper.string() + "\""));
  const std::string message = compile_error(plugin, plugin.open(0));
  EXPECT_NE(message.find("killed by signal 11 (SIGSEGV)"), std::string::npos) << message;
  EXPECT_NE(message.find("cc1: about to crash"), std::string::npos) << message;
  EXPECT_EQ(files_with_extension(".tmp"), 0u);  // no half-written object left in the cache
}

TEST_F(CPlugin, HangingCompilerIsKilledAtTheTimeout) {
  // The compiler and what it started (here a sleep) are killed as a process group.
  const fs::path wrapper = compiler_wrapper(cache_, "sleep 60 & wait");
  AbiPlugin plugin(plugin_path("c"), options("\"compiler\": \"" + wrapper.string() + "\", \"compile_timeout\": 0.5"));
  const auto begin = std::chrono::steady_clock::now();
  const std::string message = compile_error(plugin, plugin.open(0));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(20));
  EXPECT_NE(message.find("no answer within the time allowed (option 'compile_timeout'); killed"), std::string::npos)
      << message;
  EXPECT_EQ(files_with_extension(".tmp"), 0u);
}

TEST_F(CPlugin, CompileTimeoutMustBePositive) {
  std::string message;
  EXPECT_EQ(init_status(options("\"compile_timeout\": 0"), &message), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("compile_timeout"), std::string::npos) << message;
}

TEST_F(CPlugin, UnsupportedKernelsNameTheOp) {
  AbiPlugin plugin(plugin_path("c"), options());
  WireBuilder w;
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 0, 64);
  auto t = w.local_index(0, w.const_i64(64));
  w.store(KILN_DTYPE_F32, y, t, w.const_f32(1));
  std::int64_t failed_op = -1;
  try {
    plugin.compile(plugin.open(0), w.ops, &failed_op);
    FAIL();
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, KILN_STATUS_UNSUPPORTED) << e.what();
  }
  EXPECT_EQ(failed_op, t);
}

TEST_F(CPlugin, OpenMPCanBeTurnedOff) {
  AbiPlugin plugin(plugin_path("c"), options("\"openmp\": false"));
  ProgramHandle p(plugin, plugin.compile(plugin.open(0), wire_add_f32(64)));
  EXPECT_EQ(plugin.source(p.get()).find("#pragma omp parallel"), std::string::npos);
  AbiPlugin parallel(plugin_path("c"), options("\"threads\": 2"));
  ProgramHandle q(parallel, parallel.compile(parallel.open(0), wire_add_f32(64)));
  EXPECT_NE(parallel.source(q.get()).find("num_threads(2)"), std::string::npos);
}

// libm calls vectorise through libmvec unless turned off; the results are
// checked by the op batteries (c_ops_test.cpp), which run with it on.
TEST_F(CPlugin, VectorMathCanBeTurnedOff) {
  AbiPlugin plugin(plugin_path("c"), options("\"vector_math\": false"));
  ProgramHandle p(plugin, plugin.compile(plugin.open(0), wire_add_f32(64)));
  EXPECT_EQ(plugin.source(p.get()).find("declare simd"), std::string::npos);
}

TEST_F(CPlugin, ProgramSourceIsC) {
  AbiPlugin plugin(plugin_path("c"), options());
  ProgramHandle p(plugin, plugin.compile(plugin.open(0), wire_add_f32(64)));
  kiln_program_source_args a{};
  a.struct_size = KILN_PROGRAM_SOURCE_ARGS_STRUCT_SIZE;
  a.program = p.get();
  check(plugin.api().program_source(&a));
  EXPECT_STREQ(a.language, "c");
  EXPECT_NE(std::string(a.text, a.text_len).find("void kiln_kernel("), std::string::npos);
}

// Launch arguments that do not fit the kernel are INVALID_ARGUMENT, never a crash.
TEST_F(CPlugin, LaunchChecksItsArguments) {
  AbiPlugin plugin(plugin_path("c"), options());
  kiln_device* d = plugin.open(0);
  const auto ops = wire_add_f32(100);
  ProgramHandle p(plugin, plugin.compile(d, ops));
  std::vector<HostArg> args = {HostArg::buffer(KILN_DTYPE_F32, 100), HostArg::buffer(KILN_DTYPE_F32, 100),
                               HostArg::buffer(KILN_DTYPE_F32, 100)};
  DeviceArgs device_args(plugin, d, args);
  auto expect_invalid = [&](std::vector<kiln_arg> abi, const std::string& what) {
    kiln_launch_args l = launch_args(ops, d, p.get(), device_args.abi());
    l.args = abi.data();
    l.n_args = abi.size();
    try {
      check(plugin.api().launch(&l));
      ADD_FAILURE() << "accepted: " << what;
    } catch (const AbiError& e) {
      EXPECT_EQ(e.status, KILN_STATUS_INVALID_ARGUMENT) << what;
      EXPECT_NE(std::string(e.what()).find("argument"), std::string::npos) << e.what();
    }
  };
  auto abi = device_args.abi();
  expect_invalid({abi[0], abi[1]}, "too few arguments");
  auto small = abi;
  small[2].bytes = 40;
  expect_invalid(small, "buffer too small");
  auto scalar = abi;
  scalar[0].kind = KILN_ARG_SCALAR;
  expect_invalid(scalar, "scalar for a buffer");
  auto null_pointer = abi;
  null_pointer[1].host_pointer = nullptr;
  expect_invalid(null_pointer, "no host pointer");
}

// A buffer another host-memory plugin allocated arrives as a bare host
// pointer (kiln_arg.buffer NULL): it works as is.
TEST_F(CPlugin, RunsOnForeignHostPointers) {
  AbiPlugin plugin(plugin_path("c"), options());
  kiln_device* d = plugin.open(0);
  const auto ops = wire_add_f32(1000);
  ProgramHandle p(plugin, plugin.compile(d, ops));
  alignas(64) static float a[1000], b[1000], c[1000];
  for (int i = 0; i < 1000; ++i) {
    a[i] = static_cast<float>(i) * 0.5f;
    b[i] = 3.0f - static_cast<float>(i);
  }
  std::vector<kiln_arg> args(3);
  float* pointers[] = {a, b, c};
  for (int i = 0; i < 3; ++i) {
    args[i].kind = KILN_ARG_BUFFER;
    args[i].host_pointer = pointers[i];
    args[i].bytes = sizeof a;
  }
  kiln_launch_args l = launch_args(ops, d, p.get(), args);
  check(plugin.api().launch(&l));
  EXPECT_EQ(l.event, nullptr);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
}

TEST_F(CPlugin, TimedLaunchReportsMinAndMedian) {
  AbiPlugin plugin(plugin_path("c"), options());
  kiln_device* d = plugin.open(0);
  const auto ops = wire_add_f32(1 << 16);
  ProgramHandle p(plugin, plugin.compile(d, ops));
  std::vector<HostArg> args = {HostArg::buffer(KILN_DTYPE_F32, 1 << 16), HostArg::buffer(KILN_DTYPE_F32, 1 << 16),
                               HostArg::buffer(KILN_DTYPE_F32, 1 << 16)};
  DeviceArgs device_args(plugin, d, args);
  std::vector<std::uint64_t> samples(5, 0);
  kiln_timed_launch_args t{};
  t.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  const kiln_launch_args launch = launch_args(ops, d, p.get(), device_args.abi());
  t.launch = kiln::sdk::launch_args_1_0(launch);
  t.launch_args = &launch;
  t.warmups = 2;
  t.repeats = 5;
  t.flags = KILN_TIMED_FLUSH_CACHE;
  t.samples_ns = samples.data();
  check(plugin.api().launch_timed(&t));
  EXPECT_EQ(t.runs, 5u);
  EXPECT_EQ(t.aborted, 0u);
  EXPECT_EQ(t.timer, static_cast<std::uint32_t>(KILN_TIMER_HOST));
  EXPECT_GT(t.min_ns, 0u);
  EXPECT_LE(t.min_ns, t.median_ns);
  EXPECT_EQ(*std::min_element(samples.begin(), samples.end()), t.min_ns);
  // A limit every run exceeds stops after the first timed run.
  t.abort_ns = 1;
  t.flags = 0;
  check(plugin.api().launch_timed(&t));
  EXPECT_EQ(t.runs, 1u);
  EXPECT_EQ(t.aborted, 1u);
}

// A timed launch of `program` (compiled from `ops`) on `args`: what it
// reported (its pointers cleared) and its error, the caller's to check.
std::pair<kiln_timed_launch_args, kiln_error*> timed_launch(AbiPlugin& plugin, kiln_device* d, const std::vector<kiln_op>& ops,
                                                          kiln_program* program, DeviceArgs& args, std::uint32_t warmups,
                                                          std::uint32_t repeats, std::uint32_t flags) {
  kiln_timed_launch_args t{};
  t.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  const kiln_launch_args launch = launch_args(ops, d, program, args.abi());
  t.launch = kiln::sdk::launch_args_1_0(launch);
  t.launch_args = &launch;
  t.warmups = warmups;
  t.repeats = repeats;
  t.flags = flags;
  kiln_error* error = plugin.api().launch_timed(&t);
  t.launch_args = nullptr;
  return {t, error};
}

// KILN_TIMED_ISOLATE: the same results and timing fields as in-process,
// from kiln-c-worker; a program that crashes there is LAUNCH_FAILED naming
// the signal, with the buffers left as they were.
// timeout_ns on an isolated launch: a kernel that would run for minutes is
// TIMEOUT within about the limit (the worker is killed), and the device
// takes the next launch as if nothing happened.
TEST_F(CPlugin, IsolatedTimedLaunchPastItsTimeoutIsKilledAndTheDeviceStaysUsable) {
  AbiPlugin plugin(plugin_path("c"), options());
  kiln_device* d = plugin.open(0);
  const TimeoutOutcome outcome =
      timed_launch_with_timeout(plugin, d, kiln::conformance::wire_long_loop(36), long_loop_args(), 300'000'000,
                                KILN_TIMED_ISOLATE);
  EXPECT_EQ(outcome.status, KILN_STATUS_TIMEOUT) << outcome.message;
  EXPECT_NE(outcome.message.find("passed its time limit (no answer within 0.3 s"), std::string::npos) << outcome.message;
  EXPECT_LT(outcome.seconds, 5.0);
  const std::vector<float> one(1, 1.0f);
  const TimeoutOutcome next = timed_launch_with_timeout(plugin, d, wire_add_f32(1),
                                                        {HostArg::of(one), HostArg::of(one), HostArg::of(one)},
                                                        5'000'000'000, KILN_TIMED_ISOLATE);
  EXPECT_EQ(next.status, KILN_STATUS_OK) << next.message;
}

TEST_F(CPlugin, IsolatedTimedLaunchMatchesInProcessAndSurvivesACrash) {
  constexpr std::size_t kN = 1 << 12;
  AbiPlugin plugin(plugin_path("c"), options("\"test_plant_fault\": \"segv\", \"test_plant_every\": 2"));
  kiln_device* d = plugin.open(0);
  const auto ops = wire_add_f32(kN);
  std::vector<float> a(kN), b(kN);
  for (std::size_t i = 0; i < kN; ++i) {
    a[i] = 0.25f * static_cast<float>(i % 97) - 3.0f;
    b[i] = 1.5f - 0.125f * static_cast<float>(i % 31);
  }
  std::vector<HostArg> args = {HostArg::of(a), HostArg::of(b), HostArg::of(std::vector<float>(kN, -7.0f))};
  auto timed = [&](kiln_program* program, DeviceArgs& device_args, std::uint32_t flags) {
    return timed_launch(plugin, d, ops, program, device_args, 1, 3, flags);
  };
  // The first compile is sound, the second planted.
  ProgramHandle sound(plugin, plugin.compile(d, ops));
  ProgramHandle planted(plugin, plugin.compile(d, ops));
  {
    DeviceArgs device_args(plugin, d, args);
    const auto [t, error] = timed(sound.get(), device_args, KILN_TIMED_ISOLATE);
    check(error);
    EXPECT_EQ(t.runs, 3u);
    EXPECT_GT(t.min_ns, 0u);
    EXPECT_LE(t.min_ns, t.median_ns);
    std::vector<HostArg> out = args;
    device_args.read_back(out);
    const float* c = reinterpret_cast<const float*>(out[2].bytes.data());
    for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
  }
  {
    DeviceArgs device_args(plugin, d, args);
    const auto [t, error] = timed(planted.get(), device_args, KILN_TIMED_ISOLATE);
    ASSERT_NE(error, nullptr);
    try {
      check(error);
    } catch (const AbiError& e) {
      EXPECT_EQ(e.status, KILN_STATUS_LAUNCH_FAILED);
      EXPECT_NE(std::string(e.what()).find("crashed in an isolated launch (killed by signal 11 (SIGSEGV))"),
                std::string::npos)
          << e.what();
    }
    std::vector<HostArg> out = args;
    device_args.read_back(out);
    EXPECT_EQ(out[2].bytes, args[2].bytes);  // untouched: -7 everywhere
  }
  // The cost of isolation per timed launch, for docs/autotune.md (printed,
  // not asserted: timings are no unit-test verdicts).
  DeviceArgs device_args(plugin, d, args);
  auto average_us = [&](std::uint32_t flags) {
    const auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) check(timed(sound.get(), device_args, flags).second);
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - begin).count() / 10;
  };
  const auto in_process = average_us(0);
  const auto isolated = average_us(KILN_TIMED_ISOLATE);
  std::printf("timed launch of a %zu-element add, warmups 1 + repeats 3: in-process %lld us, isolated %lld us\n", kN,
              static_cast<long long>(in_process), static_cast<long long>(isolated));
}

// The sizes of the shared-memory areas named `name` this process holds open.
std::vector<std::uintmax_t> open_memfds(const std::string& name) {
  std::vector<std::uintmax_t> sizes;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const fs::path target = fs::read_symlink(entry.path(), error);
    if (!error && target.string().rfind("/memfd:" + name + " ", 0) == 0) sizes.push_back(fs::file_size(entry.path()));
  }
  return sizes;
}

// Isolated launches copy their buffers into one kept shared-memory area
// (shared_area.hpp): a launch after a larger one, and one after a crash
// that left its partial writes there, still compute from their own
// buffers; the area is one, kept between launches, sized to them in 2 MiB
// steps (made again smaller for a launch that needs under a quarter of
// it), gone at shutdown.
TEST_F(CPlugin, IsolatedLaunchesShareOneKeptAreaAndSeeOnlyTheirOwnBuffers) {
  using Sizes = std::vector<std::uintmax_t>;
  constexpr std::uintmax_t kMiB = 1 << 20;
  ASSERT_EQ(open_memfds("kiln-c-buffers"), Sizes{});
  {
    AbiPlugin plugin(plugin_path("c"), options("\"test_plant_fault\": \"segv\", \"test_plant_every\": 4"));
    kiln_device* d = plugin.open(0);
    auto isolated_add = [&](kiln_program* program, const std::vector<kiln_op>& ops, std::size_t n, float shift) {
      std::vector<float> a(n), b(n);
      for (std::size_t i = 0; i < n; ++i) {
        a[i] = shift + 0.5f * static_cast<float>(i % 89);
        b[i] = 2.0f - 0.25f * static_cast<float>(i % 13);
      }
      std::vector<HostArg> args = {HostArg::of(a), HostArg::of(b), HostArg::of(std::vector<float>(n, -7.0f))};
      DeviceArgs device_args(plugin, d, args);
      kiln_error* error = timed_launch(plugin, d, ops, program, device_args, 0, 1, KILN_TIMED_ISOLATE).second;
      std::vector<HostArg> out = args;
      device_args.read_back(out);
      const float* c = reinterpret_cast<const float*>(out[2].bytes.data());
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) wrong += c[i] == a[i] + b[i] ? 0 : 1;
      return std::make_pair(error, wrong);
    };
    constexpr std::size_t kLarge = 1 << 20, kSmall = 1000;
    const auto large_ops = wire_add_f32(kLarge), small_ops = wire_add_f32(kSmall);
    // Compiles 1-3 are sound, the 4th crashes where it runs.
    ProgramHandle large(plugin, plugin.compile(d, large_ops));
    ProgramHandle small(plugin, plugin.compile(d, small_ops));
    ProgramHandle large_too(plugin, plugin.compile(d, wire_add_f32(kLarge - 1)));
    ProgramHandle planted(plugin, plugin.compile(d, large_ops));
    auto [error, wrong] = isolated_add(large.get(), large_ops, kLarge, 1.0f);
    check(error);
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(open_memfds("kiln-c-buffers"), Sizes{12 * kMiB});  // kept after the launch: 3 x 4 MiB
    std::tie(error, wrong) = isolated_add(small.get(), small_ops, kSmall, -3.0f);
    check(error);
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(open_memfds("kiln-c-buffers"), Sizes{2 * kMiB});  // 12 KB needed: made again, one step
    std::tie(error, wrong) = isolated_add(planted.get(), large_ops, kLarge, 5.0f);
    EXPECT_NE(error, nullptr);
    EXPECT_THROW(check(error), AbiError);  // the crash
    EXPECT_EQ(wrong, kLarge);  // the host's output untouched: -7 everywhere
    std::tie(error, wrong) = isolated_add(large_too.get(), wire_add_f32(kLarge - 1), kLarge - 1, 9.0f);
    check(error);
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(open_memfds("kiln-c-buffers"), Sizes{12 * kMiB});  // the crash's area, reused
  }
  EXPECT_EQ(open_memfds("kiln-c-buffers"), Sizes{});  // released at shutdown
}

TEST_F(CPlugin, MemoryInfoAndAlignedBuffers) {
  AbiPlugin plugin(plugin_path("c"), options());
  kiln_device* d = plugin.open(0);
  kiln_memory_info_args m{};
  m.struct_size = KILN_MEMORY_INFO_ARGS_STRUCT_SIZE;
  m.device = d;
  check(plugin.api().memory_info(&m));
  EXPECT_GT(m.free_bytes, 0u);
  EXPECT_GE(m.total_bytes, m.free_bytes);
  kiln_buffer* b = plugin.alloc(d, 1000);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(plugin.host_pointer(d, b)) % 64, 0u);
  plugin.api().buffer_free(d, b);
}

}  // namespace
}  // namespace kiln::test
