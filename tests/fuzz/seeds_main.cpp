// kiln_fuzz_seeds DIR: writes seed inputs generated from the standard kernel
// library into DIR/<target>/ (IR text for ir_parse; the wire form, 32 bytes
// an op, for kernel_run and wire), next to the hand-written ones in
// tests/fuzz/corpus. scripts/fuzz.sh runs it before the fuzzers.
#include "kiln/ir/text.hpp"
#include "kiln/kernels/library.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kiln_fuzz_seeds DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  for (const char* target : {"ir_parse", "kernel_run", "wire"}) fs::create_directories(dir / target);
  int written = 0;
  for (std::string_view name : kiln::kernels::standard_kernel_names()) {
    auto made = kiln::kernels::make_standard_kernel(name, {.m = 3, .n = 5, .k = 2});
    if (!made.ok()) continue;
    const kiln::ir::Kernel& kernel = made->kernel;
    const std::string file = "std-" + std::string(name);
    std::ofstream(dir / "ir_parse" / file) << kiln::ir::print(kernel);
    const std::vector<kiln_op> wire = kernel.to_wire();
    for (const char* target : {"kernel_run", "wire"})
      std::ofstream(dir / target / file, std::ios::binary)
          .write(reinterpret_cast<const char*>(wire.data()), static_cast<std::streamsize>(wire.size() * sizeof(kiln_op)));
    ++written;
  }
  std::printf("%d seed kernels written to %s\n", written, dir.c_str());
  return written > 0 ? 0 : 1;
}
