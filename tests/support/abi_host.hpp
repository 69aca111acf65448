// tests/support/abi_host.hpp - the plugin tests' name for the conformance kit's
// kiln/conformance/abi_host.hpp (tools/conformance, shared with `kiln
// conformance`): the tests keep calling it kiln::test::..., one copy serves both.
#pragma once

#include <kiln/conformance/abi_host.hpp>

#include <string>

namespace kiln::test {

using namespace kiln::conformance;

// An in-tree plugin in the build's plugin folder (KILN_PLUGIN_DIR, which
// every test target defines; the kit itself never assumes a file name).
inline std::string plugin_path(const std::string& name) {
  return std::string(KILN_PLUGIN_DIR) + "/libkiln-" + name + ".so";
}

}  // namespace kiln::test
