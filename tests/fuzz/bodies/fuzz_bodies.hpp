// tests/fuzz/bodies - what each fuzz target does with one input, shared by the
// libFuzzer mains (tests/fuzz/*_fuzzer.cpp, clang builds) and by the replay
// test of the normal build (tests/fuzz/replay_test.cpp), which runs every
// saved input (corpus/ and regressions/) through the same code.
//
// Each returns the broken property as a message ("" when the input was
// handled: accepted, or refused with an error). A crash, a hang or a
// sanitizer report is a finding too; the libFuzzer mains abort on a message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kiln::fuzz {

using Bytes = std::span<const std::uint8_t>;

// config.json text -> parse_config: a Config or an error naming the file.
std::string config_input(Bytes input);
// IR text -> parse; a kernel prints and parses back to itself, and the
// verifier and hash take it.
std::string ir_parse_input(Bytes input);
// 32-byte op records, made plausible (operands point backwards, sizes small)
// -> verify; a verified kernel must be accepted by the reference
// interpreter, and runs on small random buffers under an op budget.
std::string kernel_run_input(Bytes input);
// 32-byte op records as a plugin receives them, unverified -> the SDK's
// structure validation, and for what it accepts the C, OpenCL, CUDA and
// GLSL emitters: a program, source text, or a PluginError.
std::string wire_input(Bytes input);

// By target name ("config", "ir_parse", "kernel_run", "wire"); nullptr for
// an unknown one.
using Body = std::string (*)(Bytes);
Body body_named(std::string_view target);

}  // namespace kiln::fuzz
