// The order candidates are measured in: the untuned kernel, the heuristic
// choice, one-step sequences of each optimization, then cost and variety.
#include <gtest/gtest.h>

#include "kiln/tune/tournament_search.hpp"

using namespace kiln;
using namespace kiln::tune;

namespace {

SearchCandidate candidate(const std::string& text, double cost) {
  return {passes::parse_sequence(text).value(), cost, std::hash<std::string>{}(text)};
}

std::vector<std::string> texts(const std::vector<SearchCandidate>& order) {
  std::vector<std::string> out;
  for (const SearchCandidate& c : order) out.push_back(passes::to_string(c.sequence));
  return out;
}

}  // namespace

TEST(MeasurementOrder, UntunedHeuristicOneStepsThenCostThenFamilies) {
  SearchResult search;
  search.candidates = {
      candidate("", 100),
      candidate("a(x=1); b(y=1)", 1),  // the heuristic choice
      candidate("a(x=1); b(y=2)", 2),
      candidate("a(x=1); b(y=3)", 3),
      candidate("a(x=1); b(y=4)", 4),
      candidate("a(x=1)", 50),
      candidate("a(x=2)", 40),
      candidate("b(y=1)", 60),
      candidate("c(z=1)", 90),
      candidate("c(z=1); a(x=1)", 95),
      candidate("d(w=1); d(w=2)", 99),
  };
  const std::vector<std::string> order = texts(measurement_order(search, 8));
  const std::vector<std::string> expected = {
      "",                // the untuned kernel
      "a(x=1); b(y=1)",  // the heuristic
      "a(x=2)",          // one step of a (the cheaper of its two)
      "b(y=1)",          // one step of b
      // one-step part full ((8 - 2 + 3) / 4 = 2), then half of the rest by cost
      "a(x=1); b(y=2)",
      "a(x=1); b(y=3)",
      // new families: {c}, {a,c}, {d}
      "c(z=1)",
      "c(z=1); a(x=1)",
      // spares by cost
      "a(x=1); b(y=4)",
      "a(x=1)",
      "d(w=1); d(w=2)",
  };
  EXPECT_EQ(order, expected);
}

TEST(MeasurementOrder, TiesGoToTheShorterSequenceThenItsText) {
  SearchResult search;
  search.candidates = {candidate("", 10), candidate("b(y=1); a(x=1)", 5), candidate("b(y=2)", 5),
                       candidate("a(x=1)", 5)};
  EXPECT_EQ(texts(measurement_order(search, 2)),
            (std::vector<std::string>{"", "a(x=1)", "b(y=2)", "b(y=1); a(x=1)"}));
}
