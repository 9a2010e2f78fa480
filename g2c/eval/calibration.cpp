// Module 15 — your work: expected calibration error and the reliability curve.
#include "g2c/eval/calibration.h"

#include <cmath>
#include <limits>

#include "g2c/core/errors.h"

namespace g2c::eval {

double expected_calibration_error(const std::vector<double>& confidences,
                                  const std::vector<bool>& correct, std::int64_t n_bins) {
  // TODO: ECE = Σ_b (|B_b| / N) · |acc(B_b) − conf(B_b)| over the non-empty bins: each bin's gap
  // between accuracy and mean confidence, weighted by its share of the N SAMPLES (not 1 / number
  // of bins). Check first (check_calibration_inputs). The per-bin numbers are reliability_curve's:
  // use it, or bin with calibration_bin(c, n_bins). Operations: a loop, std::abs.
  // Hints, one step at a time: scripts/hint.sh 15 expected_calibration_error
  throw g2c::todo("expected_calibration_error", "g2c/eval/calibration.cpp", "15");
}

ReliabilityCurve reliability_curve(const std::vector<double>& confidences,
                                   const std::vector<bool>& correct, std::int64_t n_bins) {
  // TODO: Per bin b (calibration_bin(c, n_bins) puts confidence c in its bin): the mean confidence,
  // the fraction correct and the count of the examples in it; n_bins entries each, NaN for the
  // mean and the accuracy of an empty bin (count 0). Check first (check_calibration_inputs).
  // Operations: per-bin sums in one pass, then a division per bin;
  // std::numeric_limits<double>::quiet_NaN().
  // Hints, one step at a time: scripts/hint.sh 15 reliability_curve
  throw g2c::todo("reliability_curve", "g2c/eval/calibration.cpp", "15");
}

}  // namespace g2c::eval
