// Built with -mavx512f (tools/anchors/CMakeLists.txt): the only code that
// handles 512-bit vectors, reached only after MvecExp checked the CPU.
#include "mvec_exp.hpp"

#include <immintrin.h>

namespace kiln::anchors::detail {

void mvec_expf_pass(void* expf16, const float* in, float* out, std::size_t n) {
  const auto f = reinterpret_cast<__m512 (*)(__m512)>(expf16);
  for (std::size_t i = 0; i < n; i += 16) _mm512_storeu_ps(out + i, f(_mm512_loadu_ps(in + i)));
}

}  // namespace kiln::anchors::detail
