// Internal: reads the `autotune` section of config.json into AutotuneSettings
// with the config's error style (file:line:col + key path; unknown keys are
// warnings). The runtime's config reader calls it for the section it meets.
#pragma once

#include "kiln/tune/autotune_config.hpp"
#include "runtime/json_document.hpp"

#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace kiln::tune::detail {

// `section` is the section's value inside `doc`, found at key path
// `doc_path` ("autotune" in a config file, "" when the document is the
// section itself). Messages always name keys as "autotune.<key>".
Result<AutotuneSettings> read_autotune_settings(const kiln::detail::JsonDocument& doc, const boost::json::value& section,
                                                std::string_view doc_path, std::vector<std::string>& warnings);

}  // namespace kiln::tune::detail
