// The main() of every kiln test binary: isolates tests from the user's
// environment before GoogleTest starts, whether the binary runs under ctest
// or by hand. (ctest's ENVIRONMENT_MODIFICATION cannot carry a list through
// gtest_discover_tests: CMake flattens it and keeps only the first entry.)
//
//   KILN_CONFIG       unset: no user config file
//   XDG_CONFIG_HOME   <build>/tests/xdg-config (empty: the built-in default)
//   XDG_CACHE_HOME    <build>/tests/xdg-cache (compile caches, tuning db)
//   POCL_CACHE_DIR    <build>/tests/pocl-cache (PoCL needs a writable one)
//   OMP_NUM_THREADS   2, unless already set
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

void set_dir(const char* name, const std::string& path) {
  std::filesystem::create_directories(path);
  setenv(name, path.c_str(), 1);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = std::string(KILN_BUILD_DIR) + "/tests";
  unsetenv("KILN_CONFIG");
  set_dir("XDG_CONFIG_HOME", root + "/xdg-config");
  set_dir("XDG_CACHE_HOME", root + "/xdg-cache");
  set_dir("POCL_CACHE_DIR", root + "/pocl-cache");
  setenv("OMP_NUM_THREADS", "2", 0);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
