#include "exercises/common/proportion.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace g2c::exercises {

namespace {

// Wilson's interval: the proportion's 95 % interval that stays inside [0, 1] and is sensible for
// small counts and proportions near 0 or 1. Returns {center, half width}.
std::pair<double, double> wilson(const Proportion& proportion) {
  const double n = static_cast<double>(proportion.total), p = proportion.value(), z = 1.96;
  const double center = (p + z * z / (2 * n)) / (1 + z * z / n);
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n);
  return {center, half};
}

}  // namespace

double Proportion::low() const {
  if (total == 0) return 0.0;
  const auto [center, half] = wilson(*this);
  return std::max(0.0, center - half);
}

double Proportion::high() const {
  if (total == 0) return 1.0;
  const auto [center, half] = wilson(*this);
  return std::min(1.0, center + half);
}

std::string Proportion::to_string() const {
  return fmt::format("{:5.1f}% [{:.1f}, {:.1f}]", 100 * value(), 100 * low(), 100 * high());
}

nlohmann::json Proportion::to_json() const {
  return {{"hits", hits}, {"total", total}, {"value", value()}, {"ci95", {low(), high()}}};
}

}  // namespace g2c::exercises
