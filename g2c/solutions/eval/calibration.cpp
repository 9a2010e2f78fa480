// Module 15 — reference: expected calibration error and the reliability curve.
#include "g2c/eval/calibration.h"

#include <cmath>
#include <limits>

namespace g2c::eval {

double expected_calibration_error(const std::vector<double>& confidences,
                                  const std::vector<bool>& correct, std::int64_t n_bins) {
  check_calibration_inputs(confidences, correct, n_bins);
  const auto curve = reliability_curve(confidences, correct, n_bins);
  const auto N = static_cast<double>(confidences.size());
  double ece = 0.0;
  for (std::int64_t b = 0; b < n_bins; ++b) {
    const auto count = curve.bin_count[b];
    if (count == 0) continue;
    // Weighted by the share of SAMPLES in the bin.
    ece +=
        static_cast<double>(count) / N * std::abs(curve.bin_accuracy[b] - curve.bin_confidence[b]);
  }
  return ece;
}

ReliabilityCurve reliability_curve(const std::vector<double>& confidences,
                                   const std::vector<bool>& correct, std::int64_t n_bins) {
  check_calibration_inputs(confidences, correct, n_bins);
  std::vector<double> confidence_sum(n_bins, 0.0);
  std::vector<double> correct_sum(n_bins, 0.0);
  ReliabilityCurve curve;
  curve.bin_count.assign(n_bins, 0);
  for (std::size_t i = 0; i < confidences.size(); ++i) {
    const auto b = calibration_bin(confidences[i], n_bins);
    confidence_sum[b] += confidences[i];
    correct_sum[b] += correct[i] ? 1.0 : 0.0;
    curve.bin_count[b] += 1;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::int64_t b = 0; b < n_bins; ++b) {
    const auto count = static_cast<double>(curve.bin_count[b]);
    curve.bin_confidence.push_back(count > 0 ? confidence_sum[b] / count : nan);
    curve.bin_accuracy.push_back(count > 0 ? correct_sum[b] / count : nan);
  }
  return curve;
}

}  // namespace g2c::eval
