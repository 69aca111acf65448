#include "candidate_bench.hpp"

#include "kernels/each_row.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/kernels/run.hpp"
#include "kiln/sdk/interpreter.hpp"
#include "kiln/sdk/plugin_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

namespace kiln::tune::detail {

std::uint64_t candidate_timeout_ns(const AutotuneSettings& settings, std::uint64_t best_ns) {
  if (settings.timeout_factor <= 0) return 0;
  const double floor_ns = settings.timeout_floor_s * 1e9;
  const double scaled_ns = settings.timeout_factor * static_cast<double>(best_ns);
  return static_cast<std::uint64_t>(std::ceil(std::min(std::max(floor_ns, scaled_ns), 1.8e19)));
}

namespace {

// Slots of GLOBAL_MUT params that some LOAD reads: written in place.
std::vector<bool> loaded_mutable_slots(const ir::Kernel& kernel, std::size_t slots) {
  std::vector<bool> loaded(slots, false);
  for (const ir::Op& op : kernel.ops) {
    if (op.kind != ir::OpKind::Load || op.src[0] >= kernel.size()) continue;
    const ir::Op& memory = kernel[op.src[0]];
    if (memory.kind == ir::OpKind::Param && memory.param_kind() == ir::ParamKind::GlobalMut && memory.attr < slots)
      loaded[memory.attr] = true;
  }
  return loaded;
}

std::string status_text(const Error& error) { return error.to_string(); }

}  // namespace

std::int64_t longest_loop_nest(const ir::Kernel& kernel) {
  constexpr std::int64_t kUnknownCount = 1024;
  constexpr std::int64_t kCap = std::int64_t{1} << 40;
  std::vector<std::int64_t> products{1};
  std::int64_t longest = 1;
  for (ir::ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind == ir::OpKind::Loop) {
      const std::int64_t count = std::max<std::int64_t>(1, ir::constant_int(kernel, op.src[0]).value_or(kUnknownCount));
      products.push_back(std::min(kCap, products.back() * std::min(count, kCap)));
      longest = std::max(longest, products.back());
    } else if (op.kind == ir::OpKind::EndLoop && products.size() > 1) {
      products.pop_back();
    }
  }
  return longest;
}

Result<CandidateBench> CandidateBench::create(const Device& device, const ir::Kernel& kernel,
                                              std::vector<kernels::ArgSpec> args, std::uint64_t seed,
                                              double tolerance, bool tf32_products) {
  CandidateBench bench;
  bench.device_ = device;
  bench.args_ = std::move(args);
  const std::size_t slots = bench.args_.size();
  bench.in_place_ = loaded_mutable_slots(kernel, slots);
  bench.buffers_.resize(slots);
  bench.initial_.resize(slots);
  bench.reference_.resize(slots);
  bench.actual_.resize(slots);
  bench.tolerance_.assign(slots, 0);

  // The host keeps inputs, initial, reference and actual outputs; the device one set.
  KILN_TRY(kernels::check_buffers_fit(bench.args_, "tune", 4, &device));
  // Made once: the device buffers get them now, the interpreted reference
  // reads them later (record_interpreted_reference; 2^28 random elements
  // take seconds to make).
  bench.inputs_ = kernels::make_input_buffers(bench.args_, seed);
  const std::vector<kernels::HostBuffer>& inputs = bench.inputs_;
  const std::int64_t nest = longest_loop_nest(kernel);
  std::size_t next_input = 0;
  for (std::size_t slot = 0; slot < slots; ++slot) {
    const kernels::ArgSpec& arg = bench.args_[slot];
    if (arg.role == kernels::ArgRole::Scalar) {
      bench.launch_args_.push_back(LaunchArg::scalar(arg.dtype, arg.scalar_bits));
      continue;
    }
    const std::uint64_t bytes = std::max<std::uint64_t>(1, arg.elements * ir::dtype_bytes(arg.dtype));
    KILN_TRY_ASSIGN(bench.buffers_[slot], device.allocate(bytes));
    if (arg.role == kernels::ArgRole::Input) {
      KILN_TRY(bench.buffers_[slot].write(inputs[next_input++].data()));
    } else {
      // Outputs only written start as poison, written from one block of it
      // (a 2^28-element output would be 1 GiB of host memory that says NaN).
      if (bench.in_place_[slot]) {
        bench.initial_[slot] = kernels::HostBuffer(arg.dtype, arg.elements);
        fill_random(bench.initial_[slot], seed + slot, arg.low, arg.high);
      } else {
        bench.initial_[slot] = kernels::make_poison_buffer(arg.dtype, std::min(arg.elements, kPoisonBlockElements));
      }
      bench.tolerance_[slot] = tolerance > 0 ? tolerance : 2 * kernels::tolerance(arg.dtype, nest);
      // tf32 keeps 10 mantissa bits, as f16 does: its products' error is f16's.
      if (tf32_products && arg.dtype == ir::DType::F32)
        bench.tolerance_[slot] = std::max(bench.tolerance_[slot], 2 * kernels::tolerance(ir::DType::F16, nest));
    }
    bench.launch_args_.push_back(LaunchArg::buffer(bench.buffers_[slot]));
  }
  return bench;
}

bool CandidateBench::has_in_place_buffers() const {
  return std::find(in_place_.begin(), in_place_.end(), true) != in_place_.end();
}

Result<void> CandidateBench::write_initial(std::size_t slot, std::uint64_t begin, std::uint64_t end) {
  const std::size_t width = ir::dtype_bytes(args_[slot].dtype);
  const std::span<const std::byte> initial = initial_[slot].data();
  if (in_place_[slot]) return buffers_[slot].write(initial.subspan(begin * width, (end - begin) * width), begin * width);
  // Poison repeats: the block, as often as the range needs.
  for (std::uint64_t at = begin; at < end;) {
    const std::uint64_t n = std::min<std::uint64_t>(end - at, initial_[slot].size());
    KILN_TRY(buffers_[slot].write(initial.first(n * width), at * width));
    at += n;
  }
  return {};
}

kernels::HostBuffer CandidateBench::initial_contents(std::size_t slot) const {
  if (in_place_[slot]) return initial_[slot];
  return kernels::make_poison_buffer(args_[slot].dtype, args_[slot].elements);
}

Result<void> CandidateBench::restore() {
  for (std::size_t slot = 0; slot < args_.size(); ++slot) {
    if (args_[slot].role != kernels::ArgRole::Output) continue;
    // Outputs only written, checked on a sample: only the sampled elements
    // are ever compared, so only they need their starting contents back.
    if (sampled_ && !in_place_[slot]) {
      for (const auto& [begin, end] : sampled_ranges_[slot]) KILN_TRY(write_initial(slot, begin, end));
      continue;
    }
    KILN_TRY(write_initial(slot, 0, args_[slot].elements));
  }
  return {};
}

Result<void> CandidateBench::record_reference(const Program& untuned, const std::function<double()>& clock) {
  inputs_.clear();  // the device buffers have them
  KILN_TRY(restore());
  if (has_in_place_buffers() || !clock) {
    KILN_TRY_ASSIGN(Event done, device_.launch(untuned, launch_args_));
    KILN_TRY(done.wait());
  } else {
    TimedLaunchOptions once;
    once.warmups = 0;
    once.repeats = 1;
    const double before = clock();
    KILN_TRY_ASSIGN(Timing timing, device_.timed_launch(untuned, launch_args_, once));
    reference_run_ = Probe{std::move(timing), clock() - before};
  }
  for (std::size_t slot = 0; slot < args_.size(); ++slot) {
    if (args_[slot].role != kernels::ArgRole::Output) continue;
    reference_[slot] = kernels::HostBuffer(args_[slot].dtype, args_[slot].elements);
    KILN_TRY(buffers_[slot].read(reference_[slot].data()));
  }
  return {};
}

namespace {

// `count` of `total` groups (count < total): the first, the last, and
// evenly spaced ones between, ascending and distinct.
std::vector<std::uint64_t> spread_groups(std::uint64_t count, std::uint64_t total) {
  std::vector<std::uint64_t> groups;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t g =
        count == 1 ? 0 : static_cast<std::uint64_t>(static_cast<long double>(i) * (total - 1) / (count - 1));
    if (groups.empty() || g != groups.back()) groups.push_back(g);
  }
  return groups;
}

// RunOptions::global_writes: per argument slot, the [begin, end) element
// ranges a run stored to.
using GlobalWrites = std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>>;

// The sampled groups split into consecutive shares, one run() each on its
// own thread (the program is immutable; each run keeps its own write log).
// Outputs only written, so each group writes elements of its own (a
// kernel's groups do not share what they write: no atomics in the IR, and a
// device runs them in any order), into the same host buffers; in-place
// outputs, which groups read too, keep the one run in order. Softmax-rows
// 4096 x 16384 f16, 64 rows: 0.53 s in one run on c:0, 0.21-0.28 s in two.
void run_sample_in_parallel(const sdk::InterpretedProgram& program, std::span<const kiln_arg> args,
                            const sdk::RunOptions& options, std::span<const std::uint64_t> groups, GlobalWrites& writes) {
  const std::size_t threads =
      std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), groups.size());
  std::vector<GlobalWrites> logs(threads);
  // A share's exception is rethrown here, as one run's would be.
  kernels::detail::run_shares(threads, [&](std::size_t t) {
    const std::size_t begin = groups.size() * t / threads, end = groups.size() * (t + 1) / threads;
    sdk::RunOptions share = options;
    share.only_groups = groups.subspan(begin, end - begin);
    share.global_writes = &logs[t];
    program.run(args, share);
  });
  writes.assign(args.size(), {});
  for (GlobalWrites& log : logs)
    for (std::size_t slot = 0; slot < log.size() && slot < writes.size(); ++slot)
      writes[slot].insert(writes[slot].end(), log[slot].begin(), log[slot].end());
}

// The elements `writes` covers (RunOptions::global_writes of one slot),
// ascending and distinct.
std::vector<std::uint64_t> written_elements(std::vector<std::pair<std::uint64_t, std::uint64_t>> writes) {
  std::sort(writes.begin(), writes.end());
  std::vector<std::uint64_t> elements;
  std::uint64_t next = 0;  // every element below it is taken (ranges come sorted by begin)
  for (const auto& [begin, end] : writes) {
    for (std::uint64_t e = std::max(begin, next); e < end; ++e) elements.push_back(e);
    next = std::max(next, end);
  }
  return elements;
}

// Ranges [begin, end) covering ascending `elements`, joining those less
// than `gap` apart; past `max_ranges` ranges, one from the first to the last.
std::vector<std::pair<std::uint64_t, std::uint64_t>> covering_ranges(const std::vector<std::uint64_t>& elements) {
  constexpr std::uint64_t kGap = 1024;
  constexpr std::size_t kMaxRanges = 256;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (std::uint64_t e : elements) {
    if (!ranges.empty() && e < ranges.back().second + kGap) ranges.back().second = e + 1;
    else ranges.emplace_back(e, e + 1);
  }
  if (ranges.size() > kMaxRanges) ranges = {{ranges.front().first, ranges.back().second}};
  return ranges;
}

kernels::HostBuffer gather(const kernels::HostBuffer& from, const std::vector<std::uint64_t>& elements) {
  kernels::HostBuffer out(from.dtype(), elements.size());
  const std::size_t width = ir::dtype_bytes(from.dtype());
  for (std::size_t i = 0; i < elements.size(); ++i)
    std::memcpy(out.data().data() + i * width, from.data().data() + elements[i] * width, width);
  return out;
}

}  // namespace

bool CandidateBench::record_interpreted_reference(const ir::Kernel& untuned, std::uint64_t max_ops,
                                                  std::uint64_t sample_ops) {
  sample_ops = std::min(sample_ops, max_ops);
  // The host copy of the inputs is needed only here: released once a
  // reference is recorded (either way), after which there is none to take.
  const auto input_count = std::count_if(args_.begin(), args_.end(),
                                         [](const kernels::ArgSpec& a) { return a.role == kernels::ArgRole::Input; });
  if (inputs_.size() != static_cast<std::size_t>(input_count)) return false;
  const std::vector<kernels::HostBuffer>& inputs = inputs_;
  std::vector<kernels::HostBuffer> outputs(args_.size());
  std::vector<kiln_arg> wire_args(args_.size());
  // Outputs bound to wire_args. Read in place: their starting contents,
  // fresh for each run. Only written: for the probe of the first group and
  // a sample, zeroed memory that only the pages the sample writes ever
  // touch (what it wrote comes from the write log, so the contents before
  // do not matter; a 2^28-element output is 1 GiB to copy), kept from the
  // probe to the sample (which runs the first group again, writing the same
  // values); for a run of every group, the poison the device's buffer
  // starts with, so that the reference holds it where nothing is written.
  const auto bind = [&](bool probe, bool every_group) {
    std::size_t next_input = 0;
    for (std::size_t slot = 0; slot < args_.size(); ++slot) {
      const kernels::ArgSpec& arg = args_[slot];
      if (arg.role == kernels::ArgRole::Scalar) {
        wire_args[slot] = sdk::scalar_arg(static_cast<kiln_dtype>(arg.dtype), arg.scalar_bits);
        continue;
      }
      std::span<std::byte> bytes;
      if (arg.role == kernels::ArgRole::Input) {
        bytes = std::span(const_cast<std::byte*>(inputs[next_input].data().data()), inputs[next_input].bytes());
        ++next_input;
      } else {
        if (in_place_[slot] || every_group) outputs[slot] = initial_contents(slot);
        else if (probe) outputs[slot] = kernels::HostBuffer(arg.dtype, arg.elements);
        bytes = outputs[slot].data();
      }
      wire_args[slot] = sdk::host_buffer_arg(bytes.data(), bytes.size());
    }
  };
  GlobalWrites writes;
  bool sampled = false;
  try {
    const std::vector<kiln_op> wire = untuned.to_wire();
    const sdk::InterpretedProgram program(wire);
    sdk::RunOptions options;
    options.max_ops = max_ops;
    options.check_storage = false;
    const std::uint64_t first_group[] = {0};
    options.only_groups = first_group;
    bind(/*probe=*/true, /*every_group=*/false);
    const sdk::ExecStats probe = program.run(wire_args, options);
    if (probe.executed_ops > max_ops) return false;  // straight-line code is not stopped by the budget
    const std::uint64_t per_group = std::max<std::uint64_t>(1, probe.executed_ops);
    const std::uint64_t count =
        std::min({probe.groups, kSampledGroups, std::max<std::uint64_t>(1, sample_ops / per_group)});
    std::vector<std::uint64_t> groups;
    sampled = count < probe.groups;
    if (sampled) groups = spread_groups(count, probe.groups);
    options.max_ops = max_ops * 2;  // groups differ in cost (ragged edges)
    bind(/*probe=*/false, /*every_group=*/!sampled);
    if (sampled && !has_in_place_buffers()) {
      run_sample_in_parallel(program, wire_args, options, groups, writes);
    } else {
      options.only_groups = groups;  // empty: every group
      options.global_writes = &writes;
      program.run(wire_args, options);
    }
  } catch (const sdk::PluginError&) {
    return false;  // past the budget, or a fault the device run will report in its own words
  }
  std::vector<std::vector<std::uint64_t>> elements(args_.size());
  bool any = !sampled;
  if (sampled)
    for (std::size_t slot = 0; slot < args_.size(); ++slot)
      if (args_[slot].role == kernels::ArgRole::Output) {
        elements[slot] = written_elements(std::move(writes[slot]));
        any = any || !elements[slot].empty();
      }
  if (!any) return false;
  sampled_ranges_.assign(args_.size(), {});
  for (std::size_t slot = 0; slot < args_.size(); ++slot) {
    if (args_[slot].role != kernels::ArgRole::Output) continue;
    // Sampled: only the sampled elements are kept (the full reference of a
    // 2^28-element output is 1 GiB of host memory never read again).
    if (sampled) {
      reference_[slot] = gather(outputs[slot], elements[slot]);
      sampled_ranges_[slot] = covering_ranges(elements[slot]);
    } else {
      reference_[slot] = std::move(outputs[slot]);
    }
  }
  sampled_elements_ = std::move(elements);
  sampled_ = sampled;
  interpreted_ = true;
  inputs_.clear();
  return true;
}

Result<kernels::HostBuffer> CandidateBench::read_sampled(std::size_t slot) const {
  const kernels::ArgSpec& arg = args_[slot];
  const std::size_t width = ir::dtype_bytes(arg.dtype);
  const std::vector<std::uint64_t>& elements = sampled_elements_[slot];
  kernels::HostBuffer out(arg.dtype, elements.size());
  std::vector<std::byte> range;
  std::size_t next = 0;  // the next sampled element to copy out
  for (const auto& [begin, end] : sampled_ranges_[slot]) {
    range.resize((end - begin) * width);
    KILN_TRY(buffers_[slot].read(range, begin * width));
    for (; next < elements.size() && elements[next] < end; ++next)
      std::memcpy(out.data().data() + next * width, range.data() + (elements[next] - begin) * width, width);
  }
  return out;
}

Result<double> CandidateBench::compare_outputs(std::string& problem) {
  double worst = 0;
  for (std::size_t slot = 0; slot < args_.size(); ++slot) {
    if (args_[slot].role != kernels::ArgRole::Output) continue;
    double error = 0;
    if (!sampled_) {
      kernels::HostBuffer& actual = actual_[slot];
      if (actual.size() != args_[slot].elements) actual = kernels::HostBuffer(args_[slot].dtype, args_[slot].elements);
      KILN_TRY(buffers_[slot].read(actual.data()));
      error = kernels::compare(actual, reference_[slot]);
    } else if (!sampled_elements_[slot].empty()) {
      KILN_TRY_ASSIGN(const kernels::HostBuffer sampled, read_sampled(slot));
      error = kernels::compare(sampled, reference_[slot]);  // the reference holds the sampled elements only
    }
    if (!(error <= tolerance_[slot]) && problem.empty())
      problem = "output " + args_[slot].name + " (slot " + std::to_string(slot) + ") differs from the " +
                (interpreted_ ? "reference interpreter's" : "untuned kernel's") + ": " +
                "relative error " + std::to_string(error) + " > tolerance " + std::to_string(tolerance_[slot]);
    if (std::isnan(error) || error > worst) worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : error;
  }
  return worst;
}

std::uint32_t runs_that_fit(const TimedLaunchOptions& options, double allowance, double first_seconds,
                            std::uint32_t first_runs, std::uint64_t run_ns, std::uint32_t more_warmups, bool& full) {
  const double runs = std::max<std::uint32_t>(1, first_runs);
  const double per_run = run_ns > 0 ? std::min(static_cast<double>(run_ns) * 1e-9, first_seconds / runs)
                                    : first_seconds / runs;
  const double fixed = std::max(0.0, first_seconds - runs * per_run);
  full = first_seconds + fixed + per_run * (options.warmups + options.repeats) <= allowance;
  if (full) return options.repeats;
  const double fitting = per_run > 0 ? std::floor((allowance - first_seconds - fixed) / per_run) - more_warmups : 0;
  return static_cast<std::uint32_t>(std::clamp(fitting, 0.0, static_cast<double>(options.repeats)));
}

Result<Timing> CandidateBench::timed(const Program& program, const TimedLaunchOptions& options,
                                     const TimeAllowance& allowance, const Probe* known_probe) {
  if (allowance.seconds < 0 || !allowance.clock) return device_.timed_launch(program, launch_args_, options);
  // An isolated launch on a device that survives timeouts runs in a fresh
  // process (the C plugin's worker): its first run pays the process's cold
  // start (thread pool, caches, TLB), on c:0 8x a 2048^2 row sum's steady
  // 117 us. The probe and the runs after it warm up once there, or a short
  // budget, which keeps one run, would rank candidates by cold starts.
  const std::uint32_t cold_start_warmups =
      (options.flags & KILN_TIMED_ISOLATE) != 0 && device_.info().survives_timeout() ? 1 : 0;
  Probe probe;
  if (known_probe != nullptr) {
    probe = *known_probe;
  } else {
    TimedLaunchOptions first = options;
    first.warmups = cold_start_warmups;
    first.repeats = 1;
    const double before = allowance.clock();
    KILN_TRY_ASSIGN(probe.timing, device_.timed_launch(program, launch_args_, first));
    probe.seconds = allowance.clock() - before;
  }
  // A first run already past the abort threshold ends the timing.
  if (options.abort_ns > 0 && probe.timing.min_ns > options.abort_ns) probe.timing.aborted = true;
  if (probe.timing.aborted) return probe.timing;
  bool full = false;
  const std::uint32_t more =
      runs_that_fit(options, allowance.seconds, probe.seconds, known_probe != nullptr ? 1 : cold_start_warmups + 1,
                    probe.timing.median_ns, cold_start_warmups, full);
  if (full) return device_.timed_launch(program, launch_args_, options);
  if (more == 0) return probe.timing;
  TimedLaunchOptions rest = options;
  rest.warmups = cold_start_warmups;
  rest.repeats = more;
  return device_.timed_launch(program, launch_args_, rest);
}

BenchOutcome CandidateBench::measure(const Program& program, const TimedLaunchOptions& options,
                                     const TimeAllowance& allowance, bool untuned) {
  const Probe* known = untuned && reference_run_ ? &*reference_run_ : nullptr;
  if (known != nullptr && allowance.seconds >= 0 && allowance.clock) {
    bool full = false;
    if (runs_that_fit(options, allowance.seconds, known->seconds, 1, known->timing.median_ns, 0, full) == 0 && !full) {
      // Only the reference run fits: it is the measurement (its outputs are
      // the reference, so there is nothing to compare).
      BenchOutcome outcome;
      outcome.timing = known->timing;
      return outcome;
    }
  }
  return measure_runs(program, options, allowance, known);
}

Result<void> CandidateBench::run_once(const Program& program, const TimedLaunchOptions& options) {
  if ((options.flags & KILN_TIMED_ISOLATE) != 0) {
    // A timed launch of one run: the only launch a plugin can isolate.
    TimedLaunchOptions once;
    once.warmups = 0;
    once.repeats = 1;
    once.flags = options.flags;
    once.timeout_ns = options.timeout_ns;
    KILN_TRY(device_.timed_launch(program, launch_args_, once));
    return {};
  }
  KILN_TRY_ASSIGN(Event done, device_.launch(program, launch_args_));
  return done.wait();
}

BenchOutcome CandidateBench::measure_runs(const Program& program, const TimedLaunchOptions& options,
                                          const TimeAllowance& allowance, const Probe* known) {
  BenchOutcome outcome;
  auto failed = [&](const Error& error) {
    outcome.status = error.code == ErrorCode::Timeout ? CandidateStatus::TimedOut : CandidateStatus::LaunchFailed;
    outcome.error = status_text(error);
    return outcome;
  };
  std::string problem;
  if (Result<void> r = restore(); !r) return failed(r.error());
  if (has_in_place_buffers()) {
    // Repeated timed runs would update the buffers again and again: check
    // one run from the restored state, then restore again for timing.
    if (Result<void> r = run_once(program, options); !r) return failed(r.error());
    Result<double> error = compare_outputs(problem);
    if (!error) return failed(error.error());
    outcome.max_error = *error;
    if (Result<void> r = restore(); !r) return failed(r.error());
  }
  Result<Timing> timing = timed(program, options, allowance, known);
  if (!timing) return failed(timing.error());
  outcome.timing = std::move(timing).value();
  const bool could_win = !outcome.timing.aborted && (allowance.check_below_ns == 0 ||
                                                      outcome.timing.min_ns <= allowance.check_below_ns);
  if (!has_in_place_buffers() && could_win) {
    // Every run writes the same outputs: the last one is checked.
    Result<double> error = compare_outputs(problem);
    if (!error) return failed(error.error());
    outcome.max_error = *error;
  } else if (!has_in_place_buffers()) {
    outcome.max_error = -1;  // not checked: it cannot win
  }
  if (!problem.empty()) {
    outcome.status = CandidateStatus::Mismatch;
    outcome.error = problem;
  } else if (outcome.timing.aborted) {
    outcome.status = CandidateStatus::Aborted;
    outcome.error = "timing stopped early: a run took longer than " + std::to_string(options.abort_ns) + " ns";
  }
  return outcome;
}

}  // namespace kiln::tune::detail
