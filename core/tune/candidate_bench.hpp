// Internal: the bench candidates are measured on. It owns one set of device
// buffers holding random inputs, the untuned kernel's outputs on them (the
// reference), and runs each candidate: restore -> timed launch -> compare.
#pragma once

#include "kiln/kernels/host_buffer.hpp"
#include "kiln/kernels/library.hpp"
#include "kiln/runtime/device.hpp"
#include "kiln/tune/tuning_db.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::tune::detail {

struct BenchOutcome {
  CandidateStatus status = CandidateStatus::Measured;
  std::string error;
  Timing timing;
  double max_error = 0;  // largest compare() error over the outputs
};

class CandidateBench {
 public:
  // `args` in PARAM slot order (kernels::args_of or a standard kernel's).
  // A GLOBAL_MUT param the kernel also loads is read-and-written in place:
  // it gets random contents too, restored before every candidate. Other
  // outputs are reset to NaN (integers: 0x5a bytes) before every candidate,
  // so an element a candidate fails to write never passes.
  // `tolerance` <= 0: twice kernels::tolerance(dtype, the kernel's longest
  // loop nest), since the reference carries rounding error too.
  static Result<CandidateBench> create(const Device& device, const ir::Kernel& kernel,
                                       std::vector<kernels::ArgSpec> args, std::uint64_t seed, double tolerance);

  // Runs the untuned program once; its outputs become the reference.
  Result<void> record_reference(const Program& untuned);

  // Times `program` and checks its outputs against the reference. Never
  // fails: problems are the outcome's status and error.
  BenchOutcome measure(const Program& program, const TimedLaunchOptions& options);

  bool has_in_place_buffers() const;

 private:
  Result<void> restore();
  Result<double> compare_outputs(std::string& problem);

  Device device_;
  std::vector<kernels::ArgSpec> args_;
  std::vector<bool> in_place_;                 // per slot
  std::vector<Buffer> buffers_;                // per slot (invalid for scalars)
  std::vector<LaunchArg> launch_args_;         // point into buffers_ (stable: never resized)
  std::vector<kernels::HostBuffer> initial_;   // per slot: the contents of GLOBAL_MUT buffers before a run
  std::vector<kernels::HostBuffer> reference_; // per slot: the untuned kernel's outputs
  std::vector<double> tolerance_;              // per slot
};

// The longest product of constant LOOP trip counts along one nest (1 when
// there is no loop; an unknown count counts as 1024), for tolerance().
std::int64_t longest_loop_nest(const ir::Kernel& kernel);

}  // namespace kiln::tune::detail
