// The interpreter's SUBGROUP_REDUCE (kernel_ir.h): the halving butterfly
// exactly as the contract writes it. At step m every lane combines the value
// of the lower lane of its pair (lane & ~m) with the upper one's (lane | m),
// through the BINARY op's own row function, so each step rounds as BINARY
// does and both lanes of a pair compute the bitwise same value.
#include <algorithm>

#include "interpreter_program.hpp"

namespace kiln::sdk::interp {

void subgroup_reduce_rows(RowFn fn, unsigned shift, unsigned width, const SubgroupRows& rows) {
  const std::size_t n = rows.n;
  std::copy_n(rows.x, n, rows.out);
  for (std::size_t m = width / 2; m >= 1; m /= 2) {
    for (std::size_t l = 0; l < n; ++l) {
      rows.lower[l] = rows.out[l & ~m];
      rows.upper[l] = rows.out[l | m];
    }
    (void)fn(Row{rows.out, rows.lower, rows.upper, nullptr, n, shift, rows.active});
  }
}

}  // namespace kiln::sdk::interp
