#include "kiln/sdk/device_filter.hpp"

#include <algorithm>
#include <variant>

namespace kiln::sdk {

namespace {
constexpr std::string_view kItem = "a device ordinal (>= 0) or a name substring";
}

DeviceFilter DeviceFilter::read(const Options& options, std::string_view key) {
  DeviceFilter filter;
  const auto items = options.get_int_or_string_list(key, kItem);
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (const auto* name = std::get_if<std::string>(&items[i])) {
      filter.names_.push_back(*name);
      continue;
    }
    const std::int64_t ordinal = std::get<std::int64_t>(items[i]);
    if (ordinal < 0)
      fail(KILN_STATUS_INVALID_ARGUMENT, "option '" + std::string(key) + "[" + std::to_string(i) + "]' must be " +
                                             std::string(kItem) + ", got " + std::to_string(ordinal));
    filter.ordinals_.push_back(static_cast<std::uint64_t>(ordinal));
  }
  return filter;
}

bool DeviceFilter::keeps(std::size_t ordinal, std::string_view name) const {
  if (keeps_all()) return true;
  if (std::find(ordinals_.begin(), ordinals_.end(), ordinal) != ordinals_.end()) return true;
  return std::any_of(names_.begin(), names_.end(),
                     [&](const std::string& part) { return name.find(part) != std::string_view::npos; });
}

}  // namespace kiln::sdk
