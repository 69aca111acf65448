// tests/support/kernel_runner.hpp - the plugin tests' name for the conformance kit's
// kiln/conformance/kernel_runner.hpp (tools/conformance, shared with `kiln
// conformance`): the tests keep calling it kiln::test::..., one copy serves both.
#pragma once

#include <kiln/conformance/kernel_runner.hpp>

#include "support/abi_host.hpp"  // kiln::test's view of the kit, and plugin_path()
