// launch.hpp - the ABI's launch and timed launch.
#pragma once

#include <kiln/plugin.h>

namespace kiln::vulkan {

kiln_error* launch(kiln_launch_args* args);
kiln_error* launch_timed(kiln_timed_launch_args* args);

}  // namespace kiln::vulkan
