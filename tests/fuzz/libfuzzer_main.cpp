// One libFuzzer target per fuzz body (tests/fuzz/bodies): the CMake target
// kiln_fuzz_<name> compiles this file with KILN_FUZZ_BODY=<name>_input.
// A broken property aborts, so libFuzzer saves the input as a crash.
#include "bodies/fuzz_bodies.hpp"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem = kiln::fuzz::KILN_FUZZ_BODY({data, size});
  if (!problem.empty()) {
    std::fprintf(stderr, "kiln fuzz: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
