// Module 12 — what a scaling ladder's numbers become: power laws fitted as straight lines on
// log-log axes, the compute frontier of the learning curves, and the figures of scaling.json.
//
//   L = a · x^(−α)   <=>   ln L = ln a − α · ln x
// so an ordinary least-squares line through the points (ln x, ln L) has slope −α and intercept
// ln a. The irreducible term of the lesson's L(N) = a · N^(−α) + L∞ is not fitted: with four
// points and three unknowns L∞ is not identifiable (the lesson says as much).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "exercises/common/figures.h"

namespace g2c::exercises {

/// L = a · x^(−alpha), fitted by least squares on (ln x, ln L).
struct PowerLaw {
  double a = 0.0;
  double alpha = 0.0;  // the exponent; positive when L falls as x grows
  double r2 = 0.0;     // of the straight line in log-log space (1: every point on it)
  std::size_t points = 0;

  double operator()(double x) const;
};

/// The least-squares line through (ln x, ln y). ValueError for fewer than two points, lengths that
/// differ, a value that is not positive and finite, or x values that are all equal.
/// Example: x {1, 10, 100}, y {4, 2, 1} -> alpha = log10(2) = 0.301, a = 4, r2 = 1.
PowerLaw fit_power_law(const std::vector<double>& x, const std::vector<double>& y);

/// The compute frontier of several learning curves: the points (c, l), sorted by c, whose l is
/// lower than that of every point with less compute — the best loss any run reached for that much
/// compute or less. Example: {(1, 5), (2, 6), (3, 4), (4, 4.5)} -> {(1, 5), (3, 4)}.
std::vector<std::pair<double, double>> compute_frontier(
    std::vector<std::pair<double, double>> points);

/// The fits of scaling.json over its "rungs" (each with parameters {non_embedding, total},
/// final_val_loss, curve {compute} and history {val_loss}):
///   loss_vs_parameters        L(N), N non-embedding, over the final validation losses
///   loss_vs_total_parameters  the same with every parameter counted
///   loss_vs_compute           L(C) over the compute frontier of the validation curves, from
///                             step `from_step` on (the end of warmup: before it every curve falls
///                             from ln V at a rate set by the schedule, not by the model)
/// each {a, alpha, r2, points, fitted (in words), curve {x, loss}} or {error} when it cannot be
/// made; plus points {non_embedding, total, final_val_loss} and the frontier {compute, loss}.
nlohmann::json fit_ladder(const nlohmann::json& rungs, std::int64_t from_step);

/// The three figures (log-log): loss against N with the fit, against compute with one curve per
/// rung and the frontier's fit, and against tokens, one curve per rung.
std::vector<Figure> ladder_figures(const nlohmann::json& rungs, const nlohmann::json& fit);

}  // namespace g2c::exercises
