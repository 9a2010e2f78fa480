// Module 15 — calibration: when the model says 70 %, is it right 70 % of the time?
//
// Equal-width bins over [0, 1]: confidence c goes to bin b = min(floor(c · n_bins), n_bins - 1)
// (so 1.0 lands in the last bin). For each bin B_b, acc(B_b) is the fraction correct and conf(B_b)
// the mean confidence. Expected calibration error (Naeini et al., 2015):
//   ECE = Σ_b (|B_b| / N) · |acc(B_b) − conf(B_b)|        weighted by SAMPLES, empty bins skipped
// 0 is perfectly calibrated, 1 the worst (always sure, always wrong or the reverse). The
// reliability curve is the per-bin table ECE summarises: plot acc against conf, and the diagonal is
// perfect; below it is over-confident (the usual state of a small LM). ECE depends on n_bins and
// says nothing about accuracy: calibration and accuracy are different questions.
#pragma once

#include <cstdint>
#include <vector>

namespace g2c::eval {

/// ECE as above. ValueError (check_calibration_inputs) for no examples, confidences and correct of
/// different lengths, n_bins < 1, or a confidence outside [0, 1].
/// Example: confidences {0.0, 0.1, 0.9, 1.0}, correct {1, 0, 1, 1}, n_bins 2 -> 0.25.
double expected_calibration_error(const std::vector<double>& confidences,
                                  const std::vector<bool>& correct, std::int64_t n_bins = 10);

/// The reliability diagram's data, n_bins entries each: bin b's mean confidence, its accuracy
/// (both NaN for an empty bin) and its count (the counts sum to N).
struct ReliabilityCurve {
  std::vector<double> bin_confidence;
  std::vector<double> bin_accuracy;
  std::vector<std::int64_t> bin_count;
};

/// Same bins and checks as expected_calibration_error.
/// Example: confidences {0.5, 0.5, 0.5, 0.5}, correct {1, 1, 0, 0} -> bin 5 holds (0.5, 0.5, 4),
/// every other bin (NaN, NaN, 0).
ReliabilityCurve reliability_curve(const std::vector<double>& confidences,
                                   const std::vector<bool>& correct, std::int64_t n_bins = 10);

/// The bin of confidence c: min(floor(c · n_bins), n_bins - 1).
std::int64_t calibration_bin(double confidence, std::int64_t n_bins);

/// The entry checks of expected_calibration_error and reliability_curve.
void check_calibration_inputs(const std::vector<double>& confidences,
                              const std::vector<bool>& correct, std::int64_t n_bins);

}  // namespace g2c::eval
