#include "candidate_pipeline.hpp"

#include "kiln/ir/hash.hpp"

#include <chrono>
#include <exception>

namespace kiln::tune::detail {

namespace {

// The features of a candidate the search did not rank (the untuned kernel,
// the heuristic choice, seeds): taken, as the search takes them, on the
// normalized kernel with the steps applied, before finalizing, so that the
// learned model trains and predicts on the same kind of kernel. Empty when
// a step does not apply (the lowering then fails too).
std::vector<double> search_features(const Device& device, const ir::Kernel& kernel, const SearchSpace& space,
                                    const SearchCandidate& candidate) {
  ir::Kernel current = space.normalize(kernel, device.info());
  for (const passes::OptStep& step : candidate.sequence) {
    Result<ir::Kernel> next = space.apply(current, step, device.info());
    if (!next) return {};
    current = std::move(next).value();
  }
  return space.features(current, device.info());
}

PreparedCandidate prepare_untimed(const Device& device, const ir::Kernel& kernel, const SearchSpace& space,
                                  SearchCandidate candidate, std::size_t max_kernel_ops, CompileForecast* forecast) {
  PreparedCandidate p;
  p.text = passes::to_string(candidate.sequence);
  p.search = std::move(candidate);
  // Optimizations and plugins promise errors, never exceptions; a broken one
  // still costs only its candidate.
  try {
    Result<ir::Kernel> lowered = space.lower(kernel, p.search.sequence, device.info());
    if (!lowered) {
      p.failure = CandidateStatus::LowerFailed;
      p.error = lowered.error().to_string();
      return p;
    }
    p.kernel = std::move(lowered).value();
    p.final_hash = ir::hash_hex(p.kernel);
    if (space.features && p.search.features.empty()) p.search.features = search_features(device, kernel, space, p.search);
    // Recipes are measured whatever their size (tournament_search.cpp, add).
    if (max_kernel_ops > 0 && !p.search.recipe && p.kernel.size() > max_kernel_ops) {
      p.failure = CandidateStatus::Skipped;
      p.error = std::to_string(p.kernel.size()) + " ops, more than max_kernel_ops (" + std::to_string(max_kernel_ops) +
                "): compiling it would take too long";
      return p;
    }
    const CompileWeight weight = forecast != nullptr ? compile_weight(p.kernel) : CompileWeight{};
    if (forecast != nullptr) {
      if (std::optional<std::string> why = forecast->refuses(weight)) {
        p.failure = CandidateStatus::Skipped;
        p.error = *why;
        return p;
      }
    }
    const auto compile_started = std::chrono::steady_clock::now();
    Result<Program> program = device.compile(p.kernel, {.mode = CompileMode::Frozen});
    if (forecast != nullptr)
      forecast->took(weight.ops,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_started).count());
    if (!program) {
      p.failure = CandidateStatus::CompileFailed;
      p.error = program.error().to_string();
      return p;
    }
    p.program = std::move(program).value();
  } catch (const std::exception& e) {
    p.failure = p.final_hash.empty() ? CandidateStatus::LowerFailed : CandidateStatus::CompileFailed;
    p.error = std::string("internal error (an exception): ") + e.what();
  }
  return p;
}

}  // namespace

PreparedCandidate prepare_candidate(const Device& device, const ir::Kernel& kernel, const SearchSpace& space,
                                    SearchCandidate candidate, std::size_t max_kernel_ops, CompileForecast* forecast) {
  const auto started = std::chrono::steady_clock::now();
  PreparedCandidate p = prepare_untimed(device, kernel, space, std::move(candidate), max_kernel_ops, forecast);
  p.prepare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return p;
}


CandidatePipeline::CandidatePipeline(const Device& device, const ir::Kernel& kernel, const SearchSpace& space,
                                     std::vector<SearchCandidate> queue, unsigned threads, bool overlap,
                                     std::size_t max_kernel_ops, CompileForecast* forecast)
    : device_(device),
      kernel_(kernel),
      space_(space),
      queue_(std::move(queue)),
      threads_(std::max(threads, 1u)),
      overlap_(overlap),
      max_kernel_ops_(max_kernel_ops),
      forecast_(forecast),
      pool_(threads_) {}

void CandidatePipeline::submit_one() {
  // The first is always compiled, as may_submit_ never stops it (the
  // tuner measures it whatever the budget left, in place of a heuristic
  // choice when there is none).
  CompileForecast* forecast = next_ == 0 ? nullptr : forecast_;
  const SearchCandidate& candidate = queue_[next_++];
  in_flight_.push_back(pool_.submit([this, &candidate, forecast] {
    return prepare_candidate(device_, kernel_, space_, candidate, max_kernel_ops_, forecast);
  }));
}

bool CandidatePipeline::would_wait() const {
  if (in_flight_.empty()) return submitting_ && next_ < queue_.size();
  return in_flight_.front().wait_for(std::chrono::seconds(0)) != std::future_status::ready;
}

void CandidatePipeline::start() {
  const std::size_t window = overlap_ ? threads_ + 2 : threads_;
  while (submitting_ && next_ < queue_.size() && in_flight_.size() < window) {
    if (next_ > 0 && may_submit_ && !may_submit_()) {
      submitting_ = false;
      break;
    }
    submit_one();
  }
}

std::optional<PreparedCandidate> CandidatePipeline::next() {
  if (overlap_ || in_flight_.empty()) start();
  if (!overlap_)
    for (std::future<PreparedCandidate>& job : in_flight_) job.wait();
  if (in_flight_.empty()) return std::nullopt;
  PreparedCandidate prepared = in_flight_.front().get();
  in_flight_.pop_front();
  return prepared;
}

}  // namespace kiln::tune::detail
