// The tournament search over optimization sequences (zyx's autotune.rs, with its
// dead ends fixed: an expanded item is not drawn again, a step that adds
// nothing does not end the search, and sequences have a length limit).
#include "kiln/tune/tournament_search.hpp"

#include "kiln/ir/hash.hpp"
#include "thread_pool.hpp"

#include <algorithm>
#include <future>
#include <exception>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <unordered_set>

namespace kiln::tune {

namespace {

// splitmix64: tiny, and the same sequence on every platform (std's
// distributions are not specified exactly).
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n > 0.
  std::size_t below(std::size_t n) {
    return static_cast<std::size_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

 private:
  std::uint64_t state_;
};

// Threads that apply and rank a step's variants at once. Most of a search's
// time is applying steps (the always-on passes after each) and pricing the
// result, each variant on its own: on one thread a 1024^3 matmul's 48 steps
// took 8.5 s here, past the 7.1 s share of a 30 s tuning.
constexpr unsigned kMaxSearchThreads = 16;

unsigned search_threads(unsigned asked) {
  return asked > 0 ? asked : std::clamp(std::thread::hardware_concurrency(), 1u, kMaxSearchThreads);
}

thread_local bool t_search_worker = false;

// A job run on a search worker, marked as such while it runs.
template <class Job>
auto as_search_work(Job job) {
  return [job = std::move(job)] {
    struct Mark {
      Mark() { t_search_worker = true; }
      ~Mark() { t_search_worker = false; }
    } mark;
    return job();
  };
}

// One variant applied and ranked, before the search keeps it or not.
struct Applied {
  std::optional<ir::Kernel> kernel;  // empty: the step (or a recipe's earlier step) failed
  bool prefix_failed = false;        // a recipe's earlier step failed: not counted as a failed variant
  bool too_large = false;            // over max_kernel_ops: not ranked, not kept
  double cost = 0;
  std::vector<double> features;
};

struct Item {
  SearchCandidate candidate;
  std::shared_ptr<const ir::Kernel> kernel;  // the normalized kernel the sequence gives
  bool exhausted = false;                    // expanded already, or not to be expanded
};

// The variants to try on `kernel`: of each optimization, its first
// (most promising) configs, in proportion to how many it has, about
// `wanted` in all (as zyx: ceil(n_configs * wanted / total) each).
std::vector<passes::OptStep> variants(const ir::Kernel& kernel, const DeviceInfo& device, const SearchSpace& space,
                                      std::size_t wanted) {
  std::vector<std::vector<passes::OptStep>> per_opt;
  std::size_t total = 0;
  for (const passes::Optimization* opt : space.optimizations) {
    per_opt.push_back(opt->configs(kernel, device));
    total += per_opt.back().size();
  }
  std::vector<passes::OptStep> out;
  if (total == 0 || wanted == 0) return out;
  const std::size_t take = std::min(wanted, total);
  for (std::vector<passes::OptStep>& configs : per_opt) {
    const std::size_t count = (configs.size() * take + total - 1) / total;
    for (std::size_t i = 0; i < count && i < configs.size(); ++i) out.push_back(std::move(configs[i]));
  }
  return out;
}

class TournamentSearch {
 public:
  TournamentSearch(const DeviceInfo& device, const SearchSpace& space, const AutotuneSettings& settings)
      : device_(device), space_(space), settings_(settings), random_(settings.seed) {}

  SearchResult run(const ir::Kernel& kernel, const std::function<bool()>& out_of_time, unsigned threads) {
    out_of_time_ = out_of_time;
    if (threads > 1) {
      pool_.emplace(threads);
      width_ = threads;
    }
    SearchResult result;
    result.normalized = space_.normalize(kernel, device_);
    const auto base = std::make_shared<const ir::Kernel>(result.normalized);
    const std::uint64_t base_hash = ir::hash(*base);
    visited_.insert(base_hash);

    expand({}, base, variants(*base, device_, space_, settings_.n_seeds));
    add_recipes(base);

    for (std::uint32_t step = 0; step < settings_.n_total_opts && !stats_.out_of_time; ++step) {
      Item* parent = draw();
      if (parent == nullptr) break;  // nothing left to expand
      parent->exhausted = true;
      ++stats_.steps;
      // Copies: `expand` grows items_ and may move the parent.
      const passes::OptSequence sequence = parent->candidate.sequence;
      const std::shared_ptr<const ir::Kernel> kernel_of_parent = parent->kernel;
      expand(sequence, kernel_of_parent, variants(*kernel_of_parent, device_, space_, settings_.n_added_per_step));
      remove_worst(settings_.n_removed_per_step);
    }

    SearchCandidate untuned;
    untuned.cost_ns = rank(*base, untuned.features);
    untuned.hash = base_hash;
    result.candidates.push_back(std::move(untuned));
    for (Item& item : items_) result.candidates.push_back(std::move(item.candidate));
    result.stats = stats_;
    return result;
  }

 private:
  // The estimate that ranks `kernel`: the learned model's from its features
  // when the space has one, else the space's cost model. Fills `features`
  // when the space computes them (they are stored with the measurements).
  double rank(const ir::Kernel& kernel, std::vector<double>& features) const {
    if (space_.features) features = space_.features(kernel, device_);
    return space_.rank_estimate(kernel, device_, features);
  }

  // Applies one step to `from` and ranks the result (on any thread: the
  // space's apply and ranking are thread-safe, as the tuner's compile pool
  // relies on). `max_ops` bounds what the search wanders into, not recipes
  // (0), which were chosen by hand at their size: the best f16 matmul recipe
  // on the H200 lowers to 2052 ops.
  Applied apply(const ir::Kernel& from, const passes::OptStep& step, std::size_t max_ops) const {
    Applied out;
    // Optimizations promise errors, never exceptions; a broken one still
    // costs only its variant.
    try {
      Result<ir::Kernel> result = space_.apply(from, step, device_);
      if (!result) return out;
      out.kernel = std::move(result).value();
      out.too_large = max_ops > 0 && out.kernel->size() > max_ops;
      if (!out.too_large) out.cost = rank(*out.kernel, out.features);
    } catch (const std::exception&) {
      out.kernel.reset();
    }
    return out;
  }

  // Runs `jobs` in order, up to width_ at a time on the pool, asking the
  // clock (on this thread only: a caller's clock need not be thread-safe)
  // before each one starts: one application of a large optimization can take
  // long, and none starts after the deadline. Returns the results of those
  // that started, in order.
  std::vector<Applied> run_jobs(std::vector<std::function<Applied()>> jobs) {
    std::vector<Applied> done;
    std::vector<std::future<Applied>> running;
    for (std::function<Applied()>& job : jobs) {
      if (running.size() - done.size() >= width_) done.push_back(running[done.size()].get());
      if (stats_.out_of_time || (out_of_time_ && out_of_time_())) {
        stats_.out_of_time = true;
        break;
      }
      if (pool_) {
        running.push_back(pool_->submit(as_search_work(std::move(job))));
      } else {
        std::promise<Applied> now;
        now.set_value(job());
        running.push_back(now.get_future());
      }
    }
    while (done.size() < running.size()) done.push_back(running[done.size()].get());
    return done;
  }

  // Keeps an applied variant when it is new, in the order the variants were
  // drawn (so a search is the same on any number of threads).
  void keep(const passes::OptSequence& prefix, passes::OptStep step, Applied applied, bool recipe = false) {
    if (applied.prefix_failed) return;
    if (!applied.kernel) {
      ++stats_.failed;
      return;
    }
    // Too large before visited: a kernel dropped for its size stays
    // reachable by a recipe that makes it.
    if (applied.too_large) {
      ++stats_.too_large;
      return;
    }
    const std::uint64_t hash = ir::hash(*applied.kernel);
    if (!visited_.insert(hash).second) {
      ++stats_.duplicates;
      return;
    }
    ++stats_.generated;
    Item item;
    item.candidate.sequence = prefix;
    item.candidate.sequence.push_back(std::move(step));
    item.candidate.cost_ns = applied.cost;
    item.candidate.features = std::move(applied.features);
    item.candidate.hash = hash;
    item.candidate.recipe = recipe;
    item.exhausted = item.candidate.sequence.size() >= settings_.max_sequence_length;
    item.kernel = std::make_shared<const ir::Kernel>(std::move(applied.kernel).value());
    items_.push_back(std::move(item));
  }

  // Each of `steps` applied to `from` (the kernel `prefix` gives).
  void expand(const passes::OptSequence& prefix, const std::shared_ptr<const ir::Kernel>& from,
              std::vector<passes::OptStep> steps) {
    std::vector<std::function<Applied()>> jobs;
    for (const passes::OptStep& step : steps)
      jobs.push_back([this, from, step] { return apply(*from, step, settings_.max_kernel_ops); });
    std::vector<Applied> applied = run_jobs(std::move(jobs));
    for (std::size_t i = 0; i < applied.size(); ++i) keep(prefix, std::move(steps[i]), std::move(applied[i]));
  }

  // Each recipe's steps applied one by one; the whole sequence becomes an
  // item (marked, so it is measured) when every step applies.
  void add_recipes(const std::shared_ptr<const ir::Kernel>& base) {
    std::vector<const passes::OptSequence*> recipes;
    std::vector<std::function<Applied()>> jobs;
    for (const passes::OptSequence& recipe : space_.recipes) {
      if (recipe.empty()) continue;
      recipes.push_back(&recipe);
      jobs.push_back([this, base, &recipe] {
        std::optional<ir::Kernel> kernel = *base;
        try {
          for (std::size_t i = 0; i + 1 < recipe.size() && kernel; ++i) {
            Result<ir::Kernel> next = space_.apply(*kernel, recipe[i], device_);
            if (next) kernel = std::move(next).value();
            else kernel.reset();
          }
        } catch (const std::exception&) {
          kernel.reset();
        }
        if (kernel) return apply(*kernel, recipe.back(), /*max_ops=*/0);
        Applied failed;
        failed.prefix_failed = true;
        return failed;
      });
    }
    std::vector<Applied> applied = run_jobs(std::move(jobs));
    for (std::size_t i = 0; i < applied.size(); ++i) {
      const passes::OptSequence& recipe = *recipes[i];
      keep(passes::OptSequence(recipe.begin(), recipe.end() - 1), recipe.back(), std::move(applied[i]), /*recipe=*/true);
    }
  }

  // A tournament of two among the items not yet expanded: the cheaper wins.
  Item* draw() {
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < items_.size(); ++i)
      if (!items_[i].exhausted) open.push_back(i);
    if (open.empty()) return nullptr;
    std::size_t best = open[random_.below(open.size())];
    const std::size_t other = open[random_.below(open.size())];
    if (items_[other].candidate.cost_ns < items_[best].candidate.cost_ns) best = other;
    return &items_[best];
  }

  // Tournaments of two biased to high cost remove `n` items, once the pool
  // holds at least 10 n of them (so early steps keep their variety); a
  // recipe drawn to go stays.
  void remove_worst(std::size_t n) {
    if (n == 0 || items_.size() < 10 * n) return;
    for (; n > 0 && !items_.empty(); --n) {
      std::size_t worst = random_.below(items_.size());
      const std::size_t other = random_.below(items_.size());
      if (items_[other].candidate.cost_ns > items_[worst].candidate.cost_ns) worst = other;
      if (items_[worst].candidate.recipe) continue;  // recipes are always measured
      items_[worst] = std::move(items_.back());
      items_.pop_back();
      ++stats_.removed;
    }
  }

  const DeviceInfo& device_;
  const SearchSpace& space_;
  const AutotuneSettings& settings_;
  Random random_;
  std::function<bool()> out_of_time_;
  std::optional<detail::ThreadPool> pool_;  // absent: one thread, the variants applied in turn
  std::size_t width_ = 1;                   // variants applied at once
  std::vector<Item> items_;
  std::unordered_set<std::uint64_t> visited_;
  SearchStats stats_;
};

std::string family_of(const passes::OptSequence& sequence) {
  std::set<std::string> names;
  for (const passes::OptStep& step : sequence) names.insert(step.opt);
  std::string family;
  for (const std::string& name : names) family += name + ",";
  return family;
}

}  // namespace

bool on_search_thread() { return t_search_worker; }

SearchResult tournament_search(const ir::Kernel& kernel, const DeviceInfo& device, const SearchSpace& space,
                         const AutotuneSettings& settings, const std::function<bool()>& out_of_time,
                         unsigned threads) {
  return TournamentSearch(device, space, settings).run(kernel, out_of_time, search_threads(threads));
}

std::vector<SearchCandidate> measurement_order(const SearchResult& search, std::size_t launches) {
  std::vector<SearchCandidate> out;
  if (search.candidates.empty()) return out;
  out.push_back(search.candidates.front());  // the untuned kernel

  struct Ranked {
    const SearchCandidate* candidate;
    std::string text;
  };
  std::vector<Ranked> ranked;
  for (std::size_t i = 1; i < search.candidates.size(); ++i)
    ranked.push_back({&search.candidates[i], passes::to_string(search.candidates[i].sequence)});
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.candidate->cost_ns != b.candidate->cost_ns) return a.candidate->cost_ns < b.candidate->cost_ns;
    if (a.candidate->sequence.size() != b.candidate->sequence.size())
      return a.candidate->sequence.size() < b.candidate->sequence.size();
    return a.text < b.text;
  });

  std::vector<bool> taken(ranked.size(), false);
  std::set<std::string> families;
  auto take = [&](std::size_t i) {
    taken[i] = true;
    families.insert(family_of(ranked[i].candidate->sequence));
    out.push_back(*ranked[i].candidate);
  };
  const std::size_t rest = launches > 2 ? launches - 2 : 0;
  // The heuristic choice, then the recipes that apply.
  if (!ranked.empty()) take(0);
  for (std::size_t i = 0; i < ranked.size(); ++i)
    if (!taken[i] && ranked[i].candidate->recipe) take(i);
  // The best one-step sequence of each optimization: cheap to compile, and
  // each a different direction from the untuned kernel.
  std::set<std::string> first_steps;
  const std::size_t one_step_end = out.size() + (rest + 3) / 4;
  for (std::size_t i = 0; i < ranked.size() && out.size() < one_step_end; ++i) {
    const passes::OptSequence& sequence = ranked[i].candidate->sequence;
    if (!taken[i] && sequence.size() == 1 && first_steps.insert(sequence[0].opt).second) take(i);
  }
  // Half of what is left by cost.
  const std::size_t by_cost_end = out.size() + (launches > out.size() ? (launches - out.size()) / 2 : 0);
  for (std::size_t i = 0; i < ranked.size() && out.size() < by_cost_end; ++i)
    if (!taken[i]) take(i);
  // One of each family not represented yet, best ranked first.
  for (std::size_t i = 0; i < ranked.size() && out.size() < launches; ++i)
    if (!taken[i] && !families.count(family_of(ranked[i].candidate->sequence))) take(i);
  // Everything else by cost (spares for candidates that fail or repeat a kernel).
  for (std::size_t i = 0; i < ranked.size(); ++i)
    if (!taken[i]) take(i);
  return out;
}

}  // namespace kiln::tune
