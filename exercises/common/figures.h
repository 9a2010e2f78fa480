// Figure descriptions for scripts/plot.py, which draws what a result file's "figures" array
// describes. Series values are JSON pointers into the same file, so no curve is written twice.
//
//   result["figures"] = {line_figure("loss.png", "Training loss", "step", "cross-entropy",
//                                    {line_series("train", "/run/steps", "/run/train_loss")},
//                                    {hline(std::log(2048.0), "ln V")})};
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace g2c::exercises {

/// One curve: x and y are JSON pointers ("/runs/causal/steps"); style is a matplotlib line style
/// ("-" solid, "--" dashed).
inline nlohmann::json line_series(const std::string& label, const std::string& x,
                                  const std::string& y, const std::string& style = "-") {
  return {{"label", label}, {"x", x}, {"y", y}, {"style", style}};
}

/// A dashed horizontal reference line at `y`.
inline nlohmann::json hline(double y, const std::string& label) {
  return {{"y", y}, {"label", label}};
}

/// A line plot written to `file` (next to the JSON). `series` and `hlines` are vectors, not json:
/// a braced list of one json value would be that value itself, not an array of one.
inline nlohmann::json line_figure(const std::string& file, const std::string& title,
                                  const std::string& xlabel, const std::string& ylabel,
                                  const std::vector<nlohmann::json>& series,
                                  const std::vector<nlohmann::json>& hlines = {}) {
  return {{"file", file},     {"kind", "line"},   {"title", title},  {"xlabel", xlabel},
          {"ylabel", ylabel}, {"series", series}, {"hlines", hlines}};
}

}  // namespace g2c::exercises
