// tests/support/wire_builder.hpp - the plugin tests' name for the conformance kit's
// kiln/conformance/wire_builder.hpp (tools/conformance, shared with `kiln
// conformance`): the tests keep calling it kiln::test::..., one copy serves both.
#pragma once

#include <kiln/conformance/wire_builder.hpp>

#include "support/abi_host.hpp"  // kiln::test's view of the kit, and plugin_path()
