// tests/support/kernel_suite.hpp - the plugin tests' name for the conformance kit's
// kiln/conformance/kernel_suite.hpp (tools/conformance, shared with `kiln
// conformance`): the tests keep calling it kiln::test::..., one copy serves both.
#pragma once

#include <kiln/conformance/kernel_suite.hpp>

#include "support/abi_host.hpp"  // kiln::test's view of the kit, and plugin_path()
