// An IR text file as the CLI takes it: parsed and verified with errors that
// name the place (FILE:LINE:COL for a parse error, FILE:LINE for a verify
// error), and, for `kiln run FILE.kir`, turned into a kernel with random
// inputs whose reference is the SDK's interpreter.
#pragma once

#include <kiln/ir/kernel.hpp>
#include <kiln/kernels/library.hpp>

#include <string>
#include <vector>

namespace kiln::cli {

// Throws (fail / CommandFailed) with the place of the first error.
ir::Kernel read_ir_file(const std::string& file);

// Whether `kernel_or_file` of `kiln run` names an IR file rather than a
// standard kernel: it ends in .kir or is an existing file.
bool names_ir_file(const std::string& kernel_or_file);

// The kernel of `file` with its arguments: buffers of their declared sizes,
// scalars from `scalars` ("%N=VALUE", N the var param's value as printed).
// Its reference runs the kernel on the interpreter, so a device is checked
// against it. Errors name a var param without a value, an unknown name, a
// malformed value.
kernels::StandardKernel ir_file_kernel(const std::string& file, const std::vector<std::string>& scalars);

}  // namespace kiln::cli
