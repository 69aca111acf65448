// kiln/runtime/report.hpp - the plugin and device report `kiln devices`
// prints, for host applications that want the same.
#pragma once

#include <kiln/runtime/runtime.hpp>

#include <string>

namespace kiln {

// One JSON object (indented, newline-terminated):
//   {"config": <path or "built-in">, "warnings": [...],
//    "plugins": [{"name", "library", "version", "status", "reason",
//                 "can_compile", "required", "origin", "warnings", "log",
//                 "devices": [{"id", "name", "kind", "memory_bytes",
//                              "compute_units", "warp_size",
//                              "max_local_threads", "vector_widths", ...}]}]}
std::string devices_report_json(const Runtime& runtime);

}  // namespace kiln
