#include "g2c/attention/scaled_dot_product.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::attention {

torch::Tensor causal_mask(std::int64_t seq_len, torch::Device device) {
  if (seq_len < 0)
    throw ValueError(fmt::format("causal_mask: seq_len must be >= 0, got {}", seq_len));
  const auto ones = torch::ones({seq_len, seq_len}, torch::dtype(torch::kBool).device(device));
  return torch::triu(ones, /*diagonal=*/1);  // (T, T), true strictly above the diagonal
}

namespace {

void check_inputs(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                  const torch::Tensor& mask) {
  if (!q.defined() || !k.defined() || !v.defined()) {
    throw ValueError("scaled_dot_product_attention: q, k and v must all be defined tensors");
  }
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2) {
    throw ValueError(fmt::format(
        "scaled_dot_product_attention expects q (..., T_q, d), k (..., T_k, d), v (..., T_k, d_v); "
        "got q {}, k {}, v {}",
        describe_shape(q), describe_shape(k), describe_shape(v)));
  }
  if (q.size(-1) != k.size(-1) || k.size(-2) != v.size(-2)) {
    throw ValueError(fmt::format(
        "scaled_dot_product_attention: q and k need the same feature size d and k and v the same "
        "length T_k; got q {}, k {}, v {}",
        describe_shape(q), describe_shape(k), describe_shape(v)));
  }
  if (q.device() != k.device() || q.device() != v.device()) {
    throw ValueError("scaled_dot_product_attention: q, k and v must be on the same device");
  }
  if (!mask.defined()) return;
  if (mask.scalar_type() != torch::kBool) {
    throw ValueError("scaled_dot_product_attention: the mask must be boolean (true = blocked)");
  }
  const std::int64_t t_q = q.size(-2), t_k = k.size(-2);
  const bool shape_ok =
      mask.dim() >= 2 && mask.dim() <= 4 && mask.size(-2) == t_q && mask.size(-1) == t_k &&
      (mask.dim() < 3 || mask.size(0) == q.size(0) || mask.size(0) == 1) &&
      (mask.dim() < 4 || mask.size(1) == 1 || (q.dim() == 4 && mask.size(1) == q.size(1)));
  if (!shape_ok) {
    throw ValueError(fmt::format(
        "scaled_dot_product_attention: the mask must broadcast from (T_q, T_k), (B, T_q, T_k) or "
        "(B, 1, T_q, T_k) with T_q={}, T_k={}; got {}",
        t_q, t_k, describe_shape(mask)));
  }
}

}  // namespace

std::pair<torch::Tensor, torch::Tensor> scaled_dot_product_attention(const torch::Tensor& q,
                                                                     const torch::Tensor& k,
                                                                     const torch::Tensor& v,
                                                                     const torch::Tensor& mask) {
  check_inputs(q, k, v, mask);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  auto scores = torch::matmul(q, k.transpose(-2, -1)) * scale;  // (..., T_q, T_k)
  torch::Tensor empty_rows;
  if (mask.defined()) {
    auto blocked = mask.to(q.device());
    // (B, T_q, T_k) meets (B, H, T_q, T_k) scores: give it the head axis.
    if (blocked.dim() == 3 && scores.dim() == 4) blocked = blocked.unsqueeze(1);
    // Rows with every key blocked get plain zeros before the softmax (no NaN, forward or
    // backward) and zero weights after it (see the header).
    empty_rows = blocked.all(/*dim=*/-1, /*keepdim=*/true);
    scores = scores.masked_fill(blocked, -std::numeric_limits<double>::infinity())
                 .masked_fill(empty_rows, 0.0);
  }
  auto weights = torch::softmax(scores, /*dim=*/-1);  // (..., T_q, T_k)
  if (empty_rows.defined()) weights = weights.masked_fill(empty_rows, 0.0);
  return {torch::matmul(weights, v), weights};  // (..., T_q, d_v), (..., T_q, T_k)
}

}  // namespace g2c::attention
