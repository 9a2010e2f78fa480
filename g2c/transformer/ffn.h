// Module 09 — the position-wise feed-forward network: a two-layer MLP applied to every position on
// its own, with the same weights. Attention mixes information across positions; this mixes it
// across channels, one position at a time.
//
// Dimension legend: D embedding_dim, H hidden_dim (4·D by default); "…" any leading dims (B, T).
//   h = fc1(x)        (…, D) -> (…, H)
//   h = gelu(h)       exact GELU: x · Φ(x), with Φ the standard normal CDF (the erf form)
//   y = fc2(h)        (…, H) -> (…, D)
// With H = 4·D the two weight matrices hold 8·D² numbers, twice the attention's 4·D².
#pragma once

#include <cstdint>
#include <ostream>

#include "g2c/core/torch.h"

#include "g2c/nn/linear.h"
#include "g2c/nn/module.h"

namespace g2c::transformer {

struct FeedForwardOptions {
  explicit FeedForwardOptions(std::int64_t embedding_dim) : embedding_dim_(embedding_dim) {}
  TORCH_ARG(std::int64_t, embedding_dim);  // D, in and out
  /// H, the inner width; 0 means the transformer convention 4·D.
  TORCH_ARG(std::int64_t, hidden_dim) = 0;
};

class FeedForwardImpl : public g2c::nn::Module {
 public:
  explicit FeedForwardImpl(std::int64_t embedding_dim, std::int64_t hidden_dim = 0)
      : FeedForwardImpl(FeedForwardOptions(embedding_dim).hidden_dim(hidden_dim)) {}
  /// ValueError for embedding_dim <= 0 or hidden_dim < 0.
  explicit FeedForwardImpl(const FeedForwardOptions& options);

  /// Registers fc1 = Linear(D, H) then fc2 = Linear(H, D): parameters fc1.W, fc1.b, fc2.W, fc2.b.
  void reset();

  /// x (…, D) -> fc2(gelu(fc1(x))), shape (…, D). Position t of the output depends on position t
  /// of the input only. Example: x (2, 5, 8) -> (2, 5, 8) for D = 8.
  torch::Tensor forward(const torch::Tensor& x) override;

  /// ValueError unless x has at least one dimension and its last one is D.
  void check_input(const torch::Tensor& x) const;

  void pretty_print(std::ostream& stream) const override;

  FeedForwardOptions options;
  std::int64_t embedding_dim;
  std::int64_t hidden_dim;
  g2c::nn::Linear fc1{nullptr};  // (D) -> (H)
  g2c::nn::Linear fc2{nullptr};  // (H) -> (D)
};
TORCH_MODULE(FeedForward);

}  // namespace g2c::transformer
