// The C API's version queries.
#include "capi/handles.hpp"

extern "C" {

const char* kiln_version(void) { return KILN_VERSION; }

void kiln_c_api_version(uint32_t* major, uint32_t* minor) {
  if (major != nullptr) *major = KILN_C_API_MAJOR;
  if (minor != nullptr) *minor = KILN_C_API_MINOR;
}

}  // extern "C"
