// Scaled dot-product attention as a free function, and the causal mask.
//
// Dimension legend: B batch, H heads, T_q queries, T_k keys, d feature size per head.
#pragma once

#include <utility>

#include "g2c/core/torch.h"

namespace g2c::attention {

/// Boolean (T, T) mask, true = blocked: position i may not look at j > i. Built directly on
/// `device`, which has no default: pass the device of the scores it will mask (`x.device()`), so
/// that the same code runs on CPU, CUDA and MPS.
/// Example: causal_mask(3, torch::kCPU) -> [[F, T, T], [F, F, T], [F, F, F]].
torch::Tensor causal_mask(std::int64_t seq_len, torch::Device device);

/// softmax(q kᵀ / √d, masked) v for q (..., T_q, d), k and v (..., T_k, d); returns
/// {output (..., T_q, d_v), weights (..., T_q, T_k)}. Cross-attention is the same call with keys
/// and values from another sequence.
///
/// `mask` (optional) is boolean, true = blocked, and broadcasts from (T_q, T_k), (B, T_q, T_k) or
/// (B, 1, T_q, T_k): causal and padding masks combine with `|`.
///
/// subtle: a query whose every key is blocked has nothing to attend to. Softmax over a row of -inf
/// is NaN; instead such a row gets all-zero weights and a zero output vector, so padding positions
/// stay finite and contribute nothing. (PyTorch's fused kernel returns NaN there.)
std::pair<torch::Tensor, torch::Tensor> scaled_dot_product_attention(
    const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
    const torch::Tensor& mask = {});

}  // namespace g2c::attention
