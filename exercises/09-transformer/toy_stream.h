// The lesson's toy token stream, on which the module 09 exercises train their models.
//
// Dimension legend: N stream length.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace g2c::exercises::toy {

/// The lesson's stream: [0, 1, …, 9, 3, 4, 5, 6, 7, 0] repeated `repeats` times, int64 (N = 16 ·
/// repeats; 3,200 tokens for 200). Only ids 0–9 occur; 3–7 occur twice per period, followed by
/// different tokens after 7, so predicting well needs context. ValueError for repeats < 1.
torch::Tensor toy_stream(std::int64_t repeats = 200);

}  // namespace g2c::exercises::toy
