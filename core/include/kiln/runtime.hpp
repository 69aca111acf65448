// kiln/runtime.hpp - the kiln runtime API for host applications: config,
// plugins, devices, buffers, programs, events.
#pragma once

#include <kiln/result.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/config.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/device_info.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/launch.hpp>
#include <kiln/runtime/plugin_record.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/runtime/report.hpp>
#include <kiln/runtime/runtime.hpp>
#include <kiln/version.hpp>
