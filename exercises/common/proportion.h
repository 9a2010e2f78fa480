// A proportion of hits with its 95 % Wilson score interval: how the exercises of Part II report
// an accuracy, in JSON and on the terminal.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace g2c::exercises {

/// A proportion with its 95 % Wilson score interval.
struct Proportion {
  std::int64_t hits = 0;
  std::int64_t total = 0;
  double value() const {
    return total ? static_cast<double>(hits) / static_cast<double>(total) : 0;
  }
  double low() const;
  double high() const;
  nlohmann::json to_json() const;  // {"hits", "total", "value", "ci95": [low, high]}
  /// How every exercise prints it, in percent: " 13.3% [8.8, 19.7]" (the value 5 wide, so columns
  /// of them line up).
  std::string to_string() const;
};

}  // namespace g2c::exercises
