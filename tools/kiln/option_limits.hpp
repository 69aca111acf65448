// tools/kiln/option_limits.hpp - the bounds the CLI puts on numbers a user
// types, so that a typo is an error naming the option, not a default taken
// silently (--budget 0, -1 or nan) or a run of hours (--repeats 100000000).
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <string>

namespace kiln::cli {

// A tuning budget: finite seconds in (0, 1 day].
inline constexpr double kMaxBudgetSeconds = 86400;
inline const CLI::Validator kBudgetSeconds(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0 || v > kMaxBudgetSeconds)
        return "must be a number of seconds above 0 and at most 86400, got '" + text + "'";
      return "";
    },
    "SECONDS");

// Timed runs or warm-ups: at most this many (each can take seconds).
inline constexpr unsigned kMaxRepeats = 10000;

}  // namespace kiln::cli
