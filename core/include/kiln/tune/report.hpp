// kiln/tune/report.hpp - the summary `kiln tune` prints, for host apps that
// want the same.
#pragma once

#include <kiln/compile_options.hpp>
#include <kiln/tune/tuner.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tune {

struct TuneReport {
  std::string kernel;        // its name, as the user gave it
  std::string device;        // device id
  std::uint64_t baseline_ns = 0;
  std::uint64_t best_ns = 0;
  double speedup = 0;        // baseline_ns / best_ns (0 when either is unknown)
  std::string sequence;      // the winner's text ("" = untuned)
  std::uint32_t candidates_measured = 0;  // launched by this run (0: database hit)
  bool from_cache = false;
  double tune_seconds = 0;
  TuneTimes times;           // a tuning ran: where its time went
  // Extras, after the fields above in the JSON.
  std::string kernel_hash;
  std::string timer;         // "device", "host", "model"
  std::string statistic;     // "median", "min"
  std::vector<std::string> warnings;
  std::string ranked_by = {};   // a tuning ran: "analytic" or "learned" (the cost model that ranked)
  std::string cost_model_note = {};  // why, with the held-out rank correlations
  struct Reference {         // the same kernel timed on another device (e.g. cblas:0)
    std::string device;
    std::uint64_t ns = 0;
  };
  std::optional<Reference> reference;
};

// From the report of a program Device::compile made in Tuned mode.
TuneReport make_tune_report(const CompileReport& tuned, std::string kernel_name, std::string device_id);

// One JSON object, keys in this order: kernel, device, baseline_ns, best_ns,
// speedup, sequence, candidates_measured, from_cache, tune_seconds, then
// kernel_hash, timer, statistic, warnings, seconds {setup, search, compile,
// measure} (zeros from the database) and (when set) reference
// {device, ns, tuned_vs_reference} (reference ns / best ns: 1 = as fast).
std::string tune_report_json(const TuneReport& report);

}  // namespace kiln::tune
