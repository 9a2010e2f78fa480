#include "exercises/12-scaling/scaling_fits.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::exercises {

double PowerLaw::operator()(double x) const {
  return a * std::pow(x, -alpha);
}

PowerLaw fit_power_law(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) {
    throw ValueError(
        fmt::format("a power-law fit needs at least two (x, y) pairs of equal length, "
                    "got {} x values and {} y values",
                    x.size(), y.size()));
  }
  std::vector<double> lx, ly;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0.0) || !(y[i] > 0.0) || !std::isfinite(x[i]) || !std::isfinite(y[i])) {
      throw ValueError(
          fmt::format("a power-law fit takes logarithms: every x and y must be "
                      "positive and finite, got x = {}, y = {} at point {}",
                      x[i], y[i], i));
    }
    lx.push_back(std::log(x[i]));
    ly.push_back(std::log(y[i]));
  }
  const double n = static_cast<double>(lx.size());
  const double mx = std::accumulate(lx.begin(), lx.end(), 0.0) / n;
  const double my = std::accumulate(ly.begin(), ly.end(), 0.0) / n;
  double sxx = 0.0, sxy = 0.0, syy = 0.0;
  for (std::size_t i = 0; i < lx.size(); ++i) {
    sxx += (lx[i] - mx) * (lx[i] - mx);
    sxy += (lx[i] - mx) * (ly[i] - my);
    syy += (ly[i] - my) * (ly[i] - my);
  }
  if (sxx == 0.0) throw ValueError("a power-law fit needs at least two different x values");
  const double slope = sxy / sxx;
  // The residual sum of squares of the line is syy - slope · sxy.
  const double r2 = syy > 0.0 ? 1.0 - (syy - slope * sxy) / syy : 1.0;
  return {.a = std::exp(my - slope * mx), .alpha = -slope, .r2 = r2, .points = lx.size()};
}

std::vector<std::pair<double, double>> compute_frontier(
    std::vector<std::pair<double, double>> points) {
  std::sort(points.begin(), points.end());
  std::vector<std::pair<double, double>> frontier;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [c, l] : points) {
    if (l < best) {
      frontier.emplace_back(c, l);
      best = l;
    }
  }
  return frontier;
}

namespace {

/// The fit as JSON with its line drawn from the first to the last x (a straight line on log-log
/// axes needs no more points), or {"error": why} when it cannot be made: a frontier of one point
/// after a diverging run must not cost the rungs' results.
nlohmann::json fit_json(const std::vector<double>& x, const std::vector<double>& y,
                        const std::string& fitted) {
  try {
    const auto fit = fit_power_law(x, y);
    const double lo = *std::min_element(x.begin(), x.end());
    const double hi = *std::max_element(x.begin(), x.end());
    return {{"a", fit.a},       {"alpha", fit.alpha},
            {"r2", fit.r2},     {"points", fit.points},
            {"fitted", fitted}, {"curve", {{"x", {lo, hi}}, {"loss", {fit(lo), fit(hi)}}}}};
  } catch (const ValueError& error) {
    return {{"error", error.what()}, {"fitted", fitted}};
  }
}

}  // namespace

nlohmann::json fit_ladder(const nlohmann::json& rungs, std::int64_t from_step) {
  std::vector<double> n, n_total, loss;
  std::vector<std::pair<double, double>> curve_points;
  for (const auto& rung : rungs) {
    n.push_back(rung["parameters"]["non_embedding"].get<double>());
    n_total.push_back(rung["parameters"]["total"].get<double>());
    loss.push_back(rung["final_val_loss"].get<double>());
    const auto& compute = rung["curve"]["compute"];
    const auto& val = rung["history"]["val_loss"];
    const auto& step = rung["history"]["val_step"];
    for (std::size_t i = 0; i < compute.size(); ++i) {
      if (!val[i].is_null() && step[i].get<std::int64_t>() >= from_step) {
        curve_points.emplace_back(compute[i], val[i]);
      }
    }
  }
  std::vector<double> frontier_c, frontier_l;
  for (const auto& [c, l] : compute_frontier(curve_points)) {
    frontier_c.push_back(c);
    frontier_l.push_back(l);
  }
  nlohmann::json fit = {
      {"loss_vs_parameters",
       fit_json(n, loss,
                "ln L = ln a - alpha ln N, least squares over the rungs' final validation losses, "
                "N the non-embedding parameters")},
      {"loss_vs_total_parameters", fit_json(n_total, loss, "the same line with N all parameters")},
      {"loss_vs_compute",
       fit_json(frontier_c, frontier_l,
                fmt::format("ln L = ln a - alpha ln C over the compute frontier of the rungs' "
                            "validation curves from step {} on, C = 6 N tokens",
                            from_step))}};
  fit["loss_vs_compute"]["frontier"] = {
      {"from_step", from_step}, {"compute", frontier_c}, {"loss", frontier_l}};
  fit["points"] = {{"non_embedding", n}, {"total", n_total}, {"final_val_loss", loss}};
  return fit;
}

std::vector<Figure> ladder_figures(const nlohmann::json& rungs, const nlohmann::json& fit) {
  const auto& by_n_fit = fit["loss_vs_parameters"];
  const auto& by_c_fit = fit["loss_vs_compute"];
  const auto log_log = [](const std::string& file, const std::string& title,
                          const std::string& xlabel) {
    return Figure::line(file, title, xlabel, "validation loss (nats)").logx().logy();
  };
  auto by_n = log_log("scaling_params.png", "Validation loss against model size, same tokens",
                      "non-embedding parameters N");
  auto by_c = log_log("scaling_compute.png", "Validation loss against training compute",
                      "compute C = 6 N tokens (FLOPs)");
  auto by_tokens =
      log_log("scaling_tokens.png", "Validation loss against tokens, per size", "training tokens");
  by_n.add(
      Series("final validation loss", "/fit/points/non_embedding", "/fit/points/final_val_loss")
          .style("-")
          .marker("o"));
  if (by_n_fit.contains("curve")) {
    by_n.add(Series(fmt::format("fit L = {:.2f} N^-{:.3f}", by_n_fit["a"].get<double>(),
                                by_n_fit["alpha"].get<double>()),
                    "/fit/loss_vs_parameters/curve/x", "/fit/loss_vs_parameters/curve/loss")
                 .style("--"));
  }
  for (std::size_t i = 0; i < rungs.size(); ++i) {
    const auto name = rungs[i]["name"].get<std::string>();
    const auto rung = fmt::format("/rungs/{}/", i);
    by_c.add(
        Series(name, rung + "curve/compute", rung + "history/val_loss").style("-").marker("."));
    by_tokens.add(Series(name, rung + "curve/tokens", rung + "history/val_loss").style("-"));
  }
  if (by_c_fit.contains("curve")) {
    by_c.add(Series(fmt::format("frontier fit L = {:.2f} C^-{:.3f}", by_c_fit["a"].get<double>(),
                                by_c_fit["alpha"].get<double>()),
                    "/fit/loss_vs_compute/curve/x", "/fit/loss_vs_compute/curve/loss")
                 .style("--"));
  }
  return {by_n, by_c, by_tokens};
}

}  // namespace g2c::exercises
