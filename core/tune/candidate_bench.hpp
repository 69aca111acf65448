// Internal: the bench candidates are measured on. It owns one set of device
// buffers holding random inputs, the untuned kernel's outputs on them (the
// reference), and runs each candidate: restore -> timed launch -> compare.
#pragma once

#include "kiln/kernels/host_buffer.hpp"
#include "kiln/kernels/library.hpp"
#include "kiln/runtime/device.hpp"
#include "kiln/tune/autotune_config.hpp"
#include "kiln/tune/tuning_db.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tune::detail {

// The time limit of one run of a candidate (TimedLaunchOptions::timeout_ns):
// max(timeout_factor x best_ns, timeout_floor_s); the floor alone while
// nothing is measured yet (best_ns 0); 0 (none) when timeout_factor is 0.
std::uint64_t candidate_timeout_ns(const AutotuneSettings& settings, std::uint64_t best_ns);

// How much wall time one candidate's timing may take, and the clock to
// judge it by (seconds). Unlimited by default.
struct TimeAllowance {
  double seconds = -1;  // < 0: no limit
  std::function<double()> clock;
  // Outputs are compared only when the candidate's fastest run is at most
  // this (0: always): a slower one cannot win, and comparing large outputs
  // costs seconds. Kernels with in-place buffers are always checked.
  std::uint64_t check_below_ns = 0;
};

// Timed runs beyond a first launch that fit `allowance` seconds; `full`
// when the whole timed launch (warmups + repeats runs) fits. The first
// launch ran `first_runs` runs (its warm-ups and one timed run) in
// `first_seconds` of wall time, a run taking `run_ns` by the launch's own
// timer. What a launch costs beyond its runs is fixed (its set-up; on c:0
// an isolated launch's fresh worker process, tens of ms against a 2048^2
// row sum's 0.1 ms run): judged by the wall time alone, a 2 s budget gave
// each such candidate one run, and one run a scheduler's time slice (8 ms)
// decides. `more_warmups`: the warm-ups the next launch runs first.
std::uint32_t runs_that_fit(const TimedLaunchOptions& options, double allowance, double first_seconds,
                            std::uint32_t first_runs, std::uint64_t run_ns, std::uint32_t more_warmups, bool& full);

struct BenchOutcome {
  CandidateStatus status = CandidateStatus::Measured;
  std::string error;
  Timing timing;
  double max_error = 0;  // largest compare() error over the outputs; -1: not compared (it could not win)
};

class CandidateBench {
 public:
  // `args` in PARAM slot order (kernels::args_of or a standard kernel's).
  // A GLOBAL_MUT param the kernel also loads is read-and-written in place:
  // it gets random contents too, restored before every candidate. Other
  // outputs are reset to NaN (integers: 0x5a bytes) before every candidate,
  // so an element a candidate fails to write never passes.
  // `tolerance` <= 0: twice kernels::tolerance(dtype, the kernel's longest
  // loop nest), since the reference carries rounding error too; with
  // `tf32_products` (AutotuneSettings::allow_tf32) f32 outputs get at least f16's,
  // the error of products of inputs rounded to tf32.
  static Result<CandidateBench> create(const Device& device, const ir::Kernel& kernel,
                                       std::vector<kernels::ArgSpec> args, std::uint64_t seed, double tolerance,
                                       bool tf32_products = false);

  // Runs the untuned program once; its outputs become the reference (and
  // the host copy of the inputs is released). For
  // kernels without in-place buffers that run is a timed launch of one run
  // (timed on `clock` too), which measure(..., untuned = true) reuses as
  // its first run.
  Result<void> record_reference(const Program& untuned, const std::function<double()>& clock = {});
  // The reference from the reference interpreter instead, run on the same
  // inputs over a sample of the grid's work-groups (all of them when they
  // fit): the first group, the last, and evenly spaced ones between, as
  // many as `max_ops` executed ops allow (at most kSampledGroups).
  // Candidates are then compared on the elements the sample wrote. Costs
  // no launch, so a slow untuned kernel costs nothing here. `untuned` is
  // the kernel as lowered with the empty sequence. False when the kernel
  // does not suit it (one group past the budget, a fault, nothing
  // written): record_reference then.
  // `sample_ops`: the sample's own share of that (a short budget's: the
  // groups it runs beyond the first), at most max_ops.
  bool record_interpreted_reference(const ir::Kernel& untuned, std::uint64_t max_ops,
                                    std::uint64_t sample_ops = UINT64_MAX);
  static constexpr std::uint64_t kSampledGroups = 64;
  // Outputs only written start as poison (make_poison_buffer); the bench
  // keeps one block of it, written as often as a buffer needs.
  static constexpr std::size_t kPoisonBlockElements = std::size_t{1} << 18;
  // Whether the reference came from the interpreter (the untuned program
  // then still has to be measured in full).
  bool interpreted_reference() const { return interpreted_; }

  // Times `program` and checks its outputs against the reference. Never
  // fails: problems are the outcome's status and error.
  //
  // With an allowance, a first single run (no warm-up) tells what a run
  // costs: when warmups + repeats runs fit the allowance, the full timed
  // launch follows (the first run was an extra warm-up); otherwise only as
  // many further runs as fit (the first one as their warm-up), or, when
  // none fits, that first run alone. Slow candidates thus cost one or two
  // runs, not warmups + repeats.
  // `untuned`: `program` is the one record_reference ran; when no run fits
  // beyond the reference run, that run is the outcome.
  BenchOutcome measure(const Program& program, const TimedLaunchOptions& options, const TimeAllowance& allowance = {},
                       bool untuned = false);

  bool has_in_place_buffers() const;

 private:
  Result<void> restore();
  // Elements [begin, end) of output `slot` set to what every candidate starts with.
  Result<void> write_initial(std::size_t slot, std::uint64_t begin, std::uint64_t end);
  // The whole of output `slot` as every candidate starts with it.
  kernels::HostBuffer initial_contents(std::size_t slot) const;
  // One run, isolated when `flags` holds KILN_TIMED_ISOLATE.
  Result<void> run_once(const Program& program, const TimedLaunchOptions& options);
  Result<double> compare_outputs(std::string& problem);
  // Slot's sampled elements as the device holds them, in sampled_elements_
  // order, read range by range (sampled_ranges_).
  Result<kernels::HostBuffer> read_sampled(std::size_t slot) const;
  struct Probe {
    Timing timing;
    double seconds = 0;  // wall time of the call, on the allowance's clock
  };
  Result<Timing> timed(const Program& program, const TimedLaunchOptions& options, const TimeAllowance& allowance,
                       const Probe* known_probe);
  BenchOutcome measure_runs(const Program& program, const TimedLaunchOptions& options, const TimeAllowance& allowance,
                            const Probe* known);

  Device device_;
  std::vector<kernels::ArgSpec> args_;
  std::vector<bool> in_place_;                 // per slot
  std::vector<Buffer> buffers_;                // per slot (invalid for scalars)
  std::vector<LaunchArg> launch_args_;         // point into buffers_ (stable: never resized)
  std::vector<kernels::HostBuffer> inputs_;    // per input, until the reference is recorded
  std::vector<kernels::HostBuffer> initial_;   // per slot: the contents of GLOBAL_MUT buffers before a run
                                               // (read in place: all of it; only written: a poison block)
  std::vector<kernels::HostBuffer> reference_; // per slot: the untuned kernel's outputs
  std::vector<kernels::HostBuffer> actual_;    // per slot: a candidate's outputs, read back (reused: large
                                               // outputs cost page faults on every fresh allocation)
  std::vector<double> tolerance_;              // per slot
  std::optional<Probe> reference_run_;         // the reference run, when it was timed
  bool interpreted_ = false;                   // reference_ from the interpreter
  bool sampled_ = false;                       // ... on a sample of the groups: compare only sampled_elements_
  std::vector<std::vector<std::uint64_t>> sampled_elements_;  // per slot: elements the sample wrote
  // Per slot: [begin, end) element ranges that cover sampled_elements_
  // (near ones merged): what a candidate's run is reset in and read back
  // from, instead of the whole buffer (a 2^28-element output is 1 GiB to
  // move per candidate).
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> sampled_ranges_;
};

// The longest product of constant LOOP trip counts along one nest (1 when
// there is no loop; an unknown count counts as 1024), for tolerance().
std::int64_t longest_loop_nest(const ir::Kernel& kernel);

}  // namespace kiln::tune::detail
