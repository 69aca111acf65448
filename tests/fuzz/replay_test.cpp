// Replays every saved fuzz input through its target's body, in the normal
// build: the seeds (corpus/<target>/) and every input a fuzzer once crashed
// on (regressions/<target>/, named for what it found). A regression that
// comes back fails here, or crashes this test, without clang or libFuzzer.
#include <gtest/gtest.h>

#include "fuzz/bodies/fuzz_bodies.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;

namespace {

const char* const kTargets[] = {"config", "ir_parse", "kernel_run", "wire"};

std::vector<std::uint8_t> read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class FuzzReplay : public testing::TestWithParam<const char*> {};

TEST_P(FuzzReplay, SavedInputsAreHandled) {
  const kiln::fuzz::Body body = kiln::fuzz::body_named(GetParam());
  ASSERT_NE(body, nullptr);
  std::size_t replayed = 0;
  for (const char* folder : {"corpus", "regressions"}) {
    const fs::path dir = fs::path(KILN_SOURCE_DIR) / "tests/fuzz" / folder / GetParam();
    if (!fs::is_directory(dir)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
      if (!entry.is_regular_file() || entry.path().filename().string().starts_with(".")) continue;
      const std::vector<std::uint8_t> bytes = read_bytes(entry.path());
      EXPECT_EQ(body(bytes), "") << entry.path();
      ++replayed;
    }
  }
  EXPECT_GT(replayed, 0u) << "no saved inputs for " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, testing::ValuesIn(kTargets));

}  // namespace
