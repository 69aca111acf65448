// kiln/ir/text.hpp - the text form of a kernel: print and parse, an exact
// round trip: parse(print(k)) == k for every kernel, valid or not, whose
// loop and if blocks nest at most kMaxTextNesting deep.
//
//   %0 = param 0 global f32[1000]
//   %1 = param 1 global_mut f32[1000]
//   %2 = const i64 1000
//   %3 = index group 0 %2
//   %4 = load f32 %0[%3]
//   %5 = exp f32 %4
//   store f32 %1[%3], %5
//
// One op per line; %N names the value of op N (its position); ops without a
// value (store, if, endif, endloop, barrier) have no name; the body of a
// loop or if is indented. The grammar, with examples, is in docs/ir.md.
// Parsing is forgiving where writing by hand benefits: names may be any
// %word (they are renumbered), and types that follow from the operands may
// be left out. Ops the readable form cannot express exactly (invalid fields)
// print as `raw kind=.. dtype=.. ...` lines, so even a broken kernel prints
// and parses back unchanged.
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

std::string print(const Kernel& kernel);

// One op as print() writes it, without indentation: "%7 = add f32 %5, %6".
// Works for any id and any kernel (out-of-range operands print as @N).
std::string print_op(const Kernel& kernel, ValueId id);

// Loop and if blocks open at once that parse() accepts: far beyond any real
// kernel (a few levels), and a bound on what a text can make the tools
// that follow (printer, verifier, analyses) do per op.
inline constexpr std::size_t kMaxTextNesting = 256;

// Errors: ErrorCode::Parse, message "LINE:COL: expected WHAT, got TOKEN";
// a block opened past kMaxTextNesting is one, naming the limit.
Result<Kernel> parse(std::string_view text);

// A parsed kernel with the 1-based source line of each op, so that errors
// found later (verify) can point back into the text.
struct SourceKernel {
  Kernel kernel;
  std::vector<std::uint32_t> lines;
};
Result<SourceKernel> parse_with_lines(std::string_view text);

}  // namespace kiln::ir
