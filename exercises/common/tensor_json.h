// Tensors as JSON arrays for the exercise result files (plot.py reads them as series and matrices).
#pragma once

#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

namespace g2c::exercises {

/// (N) -> [v0, v1, …] as doubles.
inline nlohmann::json vector_json(const torch::Tensor& v) {
  const auto flat = v.detach().to(torch::kCPU, torch::kDouble).contiguous();
  return std::vector<double>(flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
}

/// (R, C) -> [[row 0], [row 1], …] as doubles.
inline nlohmann::json matrix_json(const torch::Tensor& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::int64_t r = 0; r < m.size(0); ++r) rows.push_back(vector_json(m[r]));
  return rows;
}

}  // namespace g2c::exercises
