// kiln/sdk/listing.hpp - a readable listing of a wire kernel: one op per line,
// SSA names (%N = op N), indented by LOOP/IF depth, names from wire.hpp.
// For program_source of plugins that generate no source (the dummy) and for
// reports. It is not the core's text form (kiln::ir prints and parses that);
// it only prints, and prints anything, valid or not.
#pragma once

#include <kiln/kernel_ir.h>

#include <cstdint>
#include <span>
#include <string>

namespace kiln::sdk {

std::string wire_listing(std::span<const kiln_op> ops);

// A CONST's value as text ("1.5", "-3", "true"; f16/bf16 also show their bits).
std::string const_value_text(unsigned dtype, std::uint64_t bits);

}  // namespace kiln::sdk
