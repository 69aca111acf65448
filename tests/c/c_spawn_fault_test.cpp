// The C plugin's processes (the compiler, kiln-c-worker) start through
// posix_spawn. This binary defines posix_spawn itself and exports it
// (ENABLE_EXPORTS), so the plugin it loads calls this one, which fails the
// next `g_spawn_faults` calls with EFAULT and passes the rest to the C
// library: the plugin starts the process again after such a failure, a
// bounded number of times (plugins/c/subprocess.cpp says why).
#include <gtest/gtest.h>

#include "support/kernel_runner.hpp"
#include "support/wire_builder.hpp"

#include <dlfcn.h>
#include <spawn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>

namespace {
std::atomic<int> g_spawn_faults{0};
}  // namespace

extern "C" int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                           const posix_spawnattr_t* attributes, char* const argv[], char* const envp[]) {
  using Spawn = int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                        char* const[], char* const[]);
  static const auto real = reinterpret_cast<Spawn>(::dlsym(RTLD_NEXT, "posix_spawn"));
  for (int left = g_spawn_faults.load(); left > 0;)
    if (g_spawn_faults.compare_exchange_weak(left, left - 1)) return EFAULT;
  return real(pid, path, actions, attributes, argv, envp);
}

namespace kiln::test {
namespace {

namespace fs = std::filesystem;

class CPluginSpawnFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = fs::temp_directory_path() / ("kiln-c-spawn-test-" + std::to_string(::getpid()));
    fs::remove_all(cache_);
    test_log_lines().clear();
    g_spawn_faults = 0;
  }
  void TearDown() override {
    g_spawn_faults = 0;
    fs::remove_all(cache_);
  }
  std::string options() const { return "{\"cache_dir\": \"" + cache_.string() + "\"}"; }

  fs::path cache_;
};

TEST_F(CPluginSpawnFaults, TheCompilerIsStartedAgainAfterABadAddress) {
  AbiPlugin plugin(plugin_path("c"), options());
  kiln_device* device = plugin.open(0);
  g_spawn_faults = 2;
  kiln_program* program = plugin.compile(device, wire_add_f32(8));
  EXPECT_NE(program, nullptr);
  EXPECT_EQ(g_spawn_faults.load(), 0);  // both faults were met, so the stand-in was called
  EXPECT_EQ(test_log_count("failed (Bad address); trying again"), 2u);
  plugin.api().program_release(program);
}

TEST_F(CPluginSpawnFaults, FaultsPastTheRetriesAreAnErrorNamingTheCompiler) {
  AbiPlugin plugin(plugin_path("c"), options());
  kiln_device* device = plugin.open(0);
  g_spawn_faults = 100;
  try {
    plugin.api().program_release(plugin.compile(device, wire_add_f32(8)));
    ADD_FAILURE() << "expected the compile to fail";
  } catch (const AbiError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run /"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Bad address"), std::string::npos) << e.what();
  }
  EXPECT_GT(g_spawn_faults.load(), 90);  // a few tries, not a loop until it works
}

}  // namespace
}  // namespace kiln::test
