// kiln/sdk/plugin_entry.hpp - the table functions every plugin writes the
// same way: init's preamble (bind the host, check the arguments, parse the
// options) and the three device-enumeration calls. A plugin supplies only
// what differs: what its devices are and how one is opened.
//
//   kiln_error* init(kiln_init_args* raw) {
//     return sdk::guard_init(raw, [&](const sdk::Options& options) { ... });
//   }
//   kiln_error* device_count(kiln_device_count_args* raw) {
//     return sdk::answer_device_count(raw, [] { return state().devices.size(); });
//   }
//   kiln_error* device_info(kiln_device_info_args* raw) {
//     return sdk::answer_device_info(raw, count, [](std::uint32_t i) -> const kiln_device_info& { ... });
//   }
//   kiln_error* device_open(kiln_device_open_args* raw) {
//     return sdk::answer_device_open(raw, count, [](std::uint32_t i) { return handle_of_opened(i); });
//   }
//   kiln_error* program_source(kiln_program_source_args* raw) {
//     return sdk::answer_program_source(raw, "program_source", [](kiln_program* p) { return text_of(p); });
//   }
//   kiln_error* cache_key(kiln_cache_key_args* raw) {
//     return sdk::answer_cache_key(raw, [](kiln_device* d) -> const std::string& { return key_of(d); });
//   }
#pragma once

#include "kiln/sdk/plugin_support.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace kiln::sdk {

// Binds the host table first (outside the guard, so that init's own errors
// can be reported), then checks the arguments and runs `body` with the
// parsed options under guard(). Errors: INVALID_ARGUMENT for a NULL host
// table (which cannot be reported: there is no host to make the error),
// options_json NULL with a nonzero length, or options that are not a JSON
// object.
kiln_error* guard_init(kiln_init_args* raw, const std::function<void(const Options&)>& body) noexcept;

using DeviceCountFn = std::function<std::size_t()>;

// device_count: `count()` devices.
kiln_error* answer_device_count(kiln_device_count_args* raw, const DeviceCountFn& count) noexcept;

// device_info: copies `info(index)` into the caller's struct (as much as its
// struct_size holds), after checking index < count() and the info pointer.
kiln_error* answer_device_info(kiln_device_info_args* raw, const DeviceCountFn& count,
                               const std::function<const kiln_device_info&(std::uint32_t)>& info) noexcept;

// device_open: `open(index)` returns the (possibly already open) device,
// after checking index < count().
kiln_error* answer_device_open(kiln_device_open_args* raw, const DeviceCountFn& count,
                               const std::function<kiln_device*(std::uint32_t)>& open) noexcept;

// What program_source reports: the program's language and text (owned by
// the program, so valid until program_release).
struct ProgramText {
  const char* language;
  std::string_view text;
};

// program_source: `text(program)` after checking the program is not NULL
// ("<function>: program is NULL"; a plugin may prefix its name).
kiln_error* answer_program_source(kiln_program_source_args* raw, std::string_view function,
                                  const std::function<ProgramText(kiln_program*)>& text) noexcept;

// cache_key: `key(device)`, a string the plugin owns until shutdown. `key`
// does its own device check (the host passes the device of the compile).
kiln_error* answer_cache_key(kiln_cache_key_args* raw,
                             const std::function<const std::string&(kiln_device*)>& key) noexcept;

}  // namespace kiln::sdk
