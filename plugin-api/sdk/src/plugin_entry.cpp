#include "kiln/sdk/plugin_entry.hpp"

#include "kiln/sdk/capabilities.hpp"

#include <string>

namespace kiln::sdk {

namespace {

void check_index(const char* function, std::uint32_t index, std::size_t count) {
  if (index >= count)
    fail(KILN_STATUS_INVALID_ARGUMENT, std::string(function) + ": device index " + std::to_string(index) +
                                           " out of range (" + std::to_string(count) + " devices)");
}

}  // namespace

kiln_error* guard_init(kiln_init_args* raw, const std::function<void(const Options&)>& body) noexcept {
  // Bound only when long enough to hold error_create and log (a host table
  // shorter than 1.0's is a host bug that no error can be made for).
  if (raw != nullptr && raw->struct_size >= KILN_STRUCT_SIZE(kiln_init_args, host) && raw->host != nullptr &&
      raw->host->struct_size >= KILN_HOST_API_STRUCT_SIZE_1_0)
    Host::bind(raw->host);
  return guard([&] {
    const kiln_init_args args = read_args(raw);
    if (args.host == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, "init: host table is NULL");
    check_nested_size("init: host table", args.host->struct_size, KILN_HOST_API_STRUCT_SIZE_1_0);
    if (args.options_json == nullptr && args.options_json_len != 0)
      fail(KILN_STATUS_INVALID_ARGUMENT,
           "init: options_json is NULL but options_json_len is " + std::to_string(args.options_json_len));
    const std::string_view json =
        args.options_json == nullptr ? std::string_view() : std::string_view(args.options_json, args.options_json_len);
    body(Options::parse(json));
  });
}

kiln_error* answer_device_count(kiln_device_count_args* raw, const DeviceCountFn& count) noexcept {
  return guard([&] {
    auto args = read_args(raw);
    args.count = static_cast<std::uint32_t>(count());
    write_args(raw, args);
  });
}

kiln_error* answer_device_info(kiln_device_info_args* raw, const DeviceCountFn& count,
                               const std::function<const kiln_device_info&(std::uint32_t)>& info) noexcept {
  return guard([&] {
    const auto args = read_args(raw);
    check_index("device_info", args.index, count());
    if (args.info == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, "device_info: info is NULL");
    // An out-struct: any size is honoured (only what fits is written).
    if (args.info->struct_size < sizeof(std::size_t))
      fail(KILN_STATUS_INVALID_ARGUMENT, "device_info: info has no struct_size");
    kiln_device_info filled = info(args.index);
    normalize_capabilities(filled);
    write_args(args.info, filled);
  });
}

kiln_error* answer_device_open(kiln_device_open_args* raw, const DeviceCountFn& count,
                               const std::function<kiln_device*(std::uint32_t)>& open) noexcept {
  return guard([&] {
    auto args = read_args(raw);
    check_index("device_open", args.index, count());
    args.device = open(args.index);
    write_args(raw, args);
  });
}

kiln_error* answer_program_source(kiln_program_source_args* raw, std::string_view function,
                                  const std::function<ProgramText(kiln_program*)>& text) noexcept {
  return guard([&] {
    auto args = read_args(raw);
    if (args.program == nullptr)
      fail(KILN_STATUS_INVALID_ARGUMENT, std::string(function) + ": program is NULL");
    const ProgramText answer = text(args.program);
    args.language = answer.language;
    args.text = answer.text.data();
    args.text_len = answer.text.size();
    write_args(raw, args);
  });
}

kiln_error* answer_cache_key(kiln_cache_key_args* raw,
                             const std::function<const std::string&(kiln_device*)>& key) noexcept {
  return guard([&] {
    auto args = read_args(raw);
    args.key = key(args.device).c_str();
    write_args(raw, args);
  });
}

}  // namespace kiln::sdk
