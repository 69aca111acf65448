// libFuzzer target (clang only, not part of ctest): parse any bytes; a kernel
// that parses must print and parse back to itself; verify and hash must not
// crash on it.
#include "kiln/ir/hash.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto result = kiln::ir::parse(text);
  if (!result.ok()) return 0;
  const auto again = kiln::ir::parse(kiln::ir::print(*result));
  if (!again.ok() || !(*again == *result)) std::abort();
  (void)kiln::ir::verify_all(*result);
  (void)kiln::ir::hash(*result);
  return 0;
}
