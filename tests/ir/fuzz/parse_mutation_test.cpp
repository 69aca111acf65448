// Fuzzes the parser by random mutation of valid kernel texts (byte flips,
// deletions, insertions of bytes and of grammar tokens, line shuffles) with a
// fixed seed. Whatever the input, parse returns a kernel or an error with a
// position, never crashes; a returned kernel prints and parses back to
// itself, and the verifier and hash accept it without crashing.
// KILN_FUZZ_ITERATIONS sets the number of mutants (default 50000, a few
// seconds); KILN_FUZZ_SEED the seed.
#include <gtest/gtest.h>

#include "../ir_samples.hpp"
#include "kiln/ir/hash.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/kernels/library.hpp"

#include <cstdlib>
#include <random>
#include <regex>
#include <string>
#include <vector>

using namespace kiln;

namespace {

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::strtoull(value, nullptr, 10) : fallback;
}

std::vector<std::string> corpus() {
  std::vector<std::string> texts = {std::string(ir::samples::kEveryOpKind), std::string(ir::samples::kAdd8),
                                    "%0 = const f16 nan(0x7e01)\n%1 = const bf16 -inf\n%2 = const u64 18446744073709551615\n"
                                    "raw kind=13 dtype=3 lanes=1 code=1 attr=0 src=@0,@7,_ reserved=0 imm=0x0\n"
                                    "%a = const bool true  # a comment\n%b = select %a, %1, %1\n"};
  for (std::string_view name : kernels::standard_kernel_names())
    texts.push_back(ir::print(kernels::make_standard_kernel(name, {.m = 3, .n = 5, .k = 2}).value().kernel));
  return texts;
}

const char* const kTokens[] = {"%", "%1", "%99", "@", "@3", "@4294967294", "[", "]", ",", "=", "#", "\n", " ",
                               "-", "+", ".", "x4", "x0", "x256", "?", "_", "(", ")", "0x", "1e400", "-0", "nan",
                               "nan(", "inf", "raw ", "kind=", "src=", "imm=", "endloop", "endif", "if", "loop",
                               "barrier", "const ", "param ", "f16", "bf16", "bool", "u64", "i8", "global_mut",
                               "var", "local", "register", "group", "9999999999999999999999", "\xff", "\t"};

std::string mutate(std::string text, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
  const int rounds = 1 + static_cast<int>(rng() % 3);
  for (int r = 0; r < rounds; ++r) {
    const std::size_t at = pick(text.size() + 1);
    switch (rng() % 6) {
      case 0:  // flip a byte
        if (!text.empty()) text[pick(text.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // delete a few bytes
        text.erase(std::min(at, text.size()), 1 + pick(8));
        break;
      case 2:  // insert a random byte
        text.insert(text.begin() + static_cast<std::ptrdiff_t>(std::min(at, text.size())), static_cast<char>(rng()));
        break;
      case 3:  // insert a token of the grammar
        text.insert(std::min(at, text.size()), kTokens[pick(std::size(kTokens))]);
        break;
      case 4: {  // duplicate a line elsewhere
        const std::size_t begin = text.rfind('\n', at == 0 ? 0 : at - 1);
        const std::size_t start = begin == std::string::npos ? 0 : begin + 1;
        const std::size_t end = text.find('\n', start);
        const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start + 1);
        text.insert(std::min(pick(text.size() + 1), text.size()), line);
        break;
      }
      default: {  // replace a number with another
        const std::size_t digit = text.find_first_of("0123456789", at);
        if (digit != std::string::npos) text[digit] = static_cast<char>('0' + rng() % 10);
        break;
      }
    }
  }
  return text;
}

}  // namespace

TEST(ParserFuzz, MutantsParseOrFailCleanlyAndKernelsRoundTrip) {
  const std::uint64_t iterations = env_or("KILN_FUZZ_ITERATIONS", 50000);
  std::mt19937_64 rng(env_or("KILN_FUZZ_SEED", 20261129));
  const std::vector<std::string> texts = corpus();
  const std::regex position(R"(^\d+:\d+: expected .+, got .+)");
  std::uint64_t parsed = 0;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    const std::string text = mutate(texts[rng() % texts.size()], rng);
    const auto result = ir::parse(text);
    if (!result.ok()) {
      ASSERT_EQ(result.error().code, ErrorCode::Parse);
      ASSERT_TRUE(std::regex_search(result.error().message, position))
          << "message without a position: " << result.error().message << "\ninput:\n" << text;
      continue;
    }
    ++parsed;
    const ir::Kernel& kernel = *result;
    const std::string printed = ir::print(kernel);
    const auto again = ir::parse(printed);
    ASSERT_TRUE(again.ok()) << again.error().message << "\nprinted:\n" << printed << "\nfrom:\n" << text;
    ASSERT_EQ(*again, kernel) << "round trip differs; printed:\n" << printed;
    ASSERT_EQ(ir::print(*again), printed);
    (void)ir::verify_all(kernel);
    (void)ir::hash(kernel);
  }
  // The mutants must exercise both paths.
  EXPECT_GT(parsed, iterations / 100);
  EXPECT_LT(parsed, iterations);
}
