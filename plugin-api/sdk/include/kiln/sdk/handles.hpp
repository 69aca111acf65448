// kiln/sdk/handles.hpp - the checked casts from the ABI's opaque handles to a
// plugin's own objects, with the same messages in every plugin. `function`
// names the table function for the message ("copy_to_host"; a plugin may
// prefix its name, "c: launch"); "" leaves the prefix out.
//
//   Device& d = sdk::checked_device(args.device, state().devices, "buffer_alloc");
//   Buffer& b = sdk::checked_buffer<Buffer>(args.buffer, d, "copy_to_host", "source");
//   const Program& p = sdk::checked_program<Program>(args.program, "launch");
#pragma once

#include "kiln/sdk/plugin_support.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::sdk {

// "<function>: <what>", or just <what> when function is "".
inline std::string handle_message(std::string_view function, std::string_view what) {
  return function.empty() ? std::string(what) : std::string(function) + ": " + std::string(what);
}

// Any handle that must not be NULL: "<function>: <role> is NULL".
template <class Object, class Handle>
Object& checked_handle(Handle* handle, std::string_view function, std::string_view role) {
  if (handle == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, handle_message(function, std::string(role) + " is NULL"));
  return *reinterpret_cast<Object*>(handle);
}

// A device of this plugin: one of `devices` (the plugin's discovered
// devices, which own them). Throws INVALID_ARGUMENT for NULL ("device is
// NULL"), a handle of another plugin ("not a device of this plugin"), and,
// for devices that keep an `open` flag, a closed one ("device is closed").
template <class Device>
Device& checked_device(kiln_device* handle, const std::vector<std::unique_ptr<Device>>& devices,
                       std::string_view function) {
  if (handle == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, handle_message(function, "device is NULL"));
  for (const auto& known : devices)
    if (reinterpret_cast<kiln_device*>(known.get()) == handle) {
      if constexpr (requires { known->open; })
        if (!known->open) fail(KILN_STATUS_INVALID_ARGUMENT, handle_message(function, "device is closed"));
      return *known;
    }
  fail(KILN_STATUS_INVALID_ARGUMENT, handle_message(function, "not a device of this plugin"));
}

// A buffer of `device`: non-NULL, and made on that device (its `device`
// member). `role` says which buffer of the call ("source", "destination").
template <class Buffer, class Device>
Buffer& checked_buffer(kiln_buffer* handle, const Device& device, std::string_view function, std::string_view role) {
  const std::string which = role.empty() ? "buffer" : std::string(role) + " buffer";
  Buffer& buffer = checked_handle<Buffer>(handle, function, which);
  if (buffer.device != &device)
    fail(KILN_STATUS_INVALID_ARGUMENT, handle_message(function, which + " belongs to another device"));
  return buffer;
}

// A program: non-NULL ("program is NULL"). Program may be const.
template <class Program>
Program& checked_program(kiln_program* handle, std::string_view function) {
  return checked_handle<Program>(handle, function, "program");
}
// A program compiled for `device` (its `device` member): as above, and
// "<function>: program was compiled for another device".
template <class Program, class Device>
Program& checked_program(kiln_program* handle, const Device& device, std::string_view function) {
  Program& program = checked_program<Program>(handle, function);
  if (program.device != &device)
    fail(KILN_STATUS_INVALID_ARGUMENT, handle_message(function, "program was compiled for another device"));
  return program;
}

}  // namespace kiln::sdk
