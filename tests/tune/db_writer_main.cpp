// A second process for the tuning database tests: stores entries in a loop,
// printing "stored N" after each commit, so a test can run two at once or
// kill one mid-way.
//
//   kiln_tune_db_writer DB TAG COUNT CANDIDATES
//     stores COUNT entries with kernel hashes "TAG-0" .. "TAG-<COUNT-1>"
//     (COUNT 0: forever), each with CANDIDATES candidates.
#include "kiln/tune/tuning_db.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s DB TAG COUNT CANDIDATES\n", argv[0]);
    return 2;
  }
  const std::string tag = argv[2];
  const long count = std::atol(argv[3]);
  const long candidates = std::atol(argv[4]);
  kiln::Result<kiln::tune::TuningDb> db = kiln::tune::TuningDb::open(argv[1]);
  if (!db) {
    std::fprintf(stderr, "%s\n", db.error().to_string().c_str());
    return 1;
  }
  for (long i = 0; count == 0 || i < count; ++i) {
    kiln::tune::TuningEntry e;
    e.key = {tag + "-" + std::to_string(i % 100000), "plugin=test;device=writer", "1-test"};
    e.kernel_name = "writer " + tag;
    e.kernel_text = "%0 = param 0 global f32[" + std::to_string(i + 1) + "]\n";
    e.sequence = "step(i=" + std::to_string(i) + ")";
    e.final_hash = std::to_string(i);
    e.best_ns = 100 + static_cast<std::uint64_t>(i);
    e.baseline_ns = 1000;
    e.timer = "host";
    e.statistic = "median";
    e.candidates_measured = static_cast<std::uint32_t>(candidates);
    for (long c = 0; c < candidates; ++c) {
      kiln::tune::CandidateRecord r;
      r.sequence = "step(c=" + std::to_string(c) + ")";
      r.median_ns = r.min_ns = 100 + static_cast<std::uint64_t>(c);
      r.runs = 5;
      // Enough bytes per entry that a kill lands inside a transaction now and then.
      r.error = std::string(2000, 'x');
      e.candidates.push_back(r);
    }
    kiln::Result<std::int64_t> stored = db->store(e);
    if (!stored) {
      std::fprintf(stderr, "%s\n", stored.error().to_string().c_str());
      return 1;
    }
    std::printf("stored %ld\n", i);
    std::fflush(stdout);
  }
  return 0;
}
