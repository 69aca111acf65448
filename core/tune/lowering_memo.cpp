#include "lowering_memo.hpp"

#include "passes/always_on.hpp"
#include "kiln/ir/hash.hpp"
#include "kiln/ir/verify.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace kiln::tune::detail {

namespace {

// Results by (input kernel hash, what was done to it): a step's text, or
// "" for the checked normalize and "\n" for the checked finalize. Errors
// are remembered too (a recipe that does not apply fails the same way each
// time). Entries hold shared kernels: a hit copies nothing until it is used.
class LoweringMemo {
 public:
  using Entry = std::shared_ptr<const Result<ir::Kernel>>;

  template <class Compute>
  Entry get(const ir::Kernel& kernel, const std::string& what, Compute&& compute) {
    const Key key{ir::hash(kernel), what};
    {
      std::lock_guard lock(mutex_);
      if (auto it = entries_.find(key); it != entries_.end()) return it->second;
    }
    // Computed outside the lock: two threads may both compute a miss, with
    // the same result.
    Entry entry = std::make_shared<const Result<ir::Kernel>>(compute());
    std::lock_guard lock(mutex_);
    return entries_.emplace(key, std::move(entry)).first->second;
  }

 private:
  using Key = std::pair<std::uint64_t, std::string>;
  std::mutex mutex_;
  std::map<Key, Entry> entries_;
};

// apply_sequence names a failing step by its place in the sequence it was
// given ("step 1 `...`: ..." for one step): its place in the whole one.
Error numbered(Error error, std::size_t index) {
  constexpr std::string_view kFirst = "step 1 ";
  if (error.message.starts_with(kFirst))
    error.message = "step " + std::to_string(index + 1) + " " + error.message.substr(kFirst.size());
  return error;
}

constexpr const char* kNormalize = "";
constexpr const char* kFinalize = "\n";

}  // namespace

SearchSpace with_lowering_memo(const SearchSpace& space) {
  SearchSpace memoized = space;
  auto memo = std::make_shared<LoweringMemo>();
  const StepApplier apply = space.apply;
  memoized.apply = [memo, apply](const ir::Kernel& kernel, const passes::OptStep& step,
                                 const DeviceInfo& device) -> Result<ir::Kernel> {
    return *memo->get(kernel, step.to_string(), [&] { return apply(kernel, step, device); });
  };
  // passes::optimize, a step at a time through the memo.
  memoized.lower = [memo, apply](const ir::Kernel& kernel, const passes::OptSequence& sequence,
                                 const DeviceInfo& device) -> Result<ir::Kernel> {
    LoweringMemo::Entry current = memo->get(kernel, kNormalize, [&]() -> Result<ir::Kernel> {
      if (Result<void> valid = ir::verify(kernel); !valid.ok()) return std::move(valid).error();
      return passes::detail::normalize_checked(kernel, device);
    });
    if (!current->ok()) return *current;
    for (std::size_t i = 0; i < sequence.size(); ++i) {
      const ir::Kernel& from = current->value();
      current = memo->get(from, sequence[i].to_string(), [&] { return apply(from, sequence[i], device); });
      if (!current->ok()) return numbered(current->error(), i);
    }
    const ir::Kernel& tuned = current->value();
    return *memo->get(tuned, kFinalize, [&] { return passes::detail::finalize_checked(tuned, device); });
  };
  return memoized;
}

}  // namespace kiln::tune::detail
