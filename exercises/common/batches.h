// Training batches for a model that maps token ids to next-token logits, drawn from a token
// stream with module 06's get_batch.
//
// Dimension legend: B batch, T context length, V vocab_size.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace g2c::exercises {

/// What a model reads and what it is scored against: position t of the logits is scored against
/// targets[:, t]. inputs (B, T) int64; targets (B, T), (B, T - 1) or (B, T - 2) int64.
struct TokenBatch {
  torch::Tensor inputs;
  torch::Tensor targets;
};

/// How a window of the stream becomes a batch.
enum class TargetRule {
  /// inputs = T tokens, targets = the T tokens one step later: every position predicts the
  /// token after it (windows of T + 1 tokens). The usual language-model batch.
  kNextToken,
  /// inputs = a window of T tokens, targets = its last T - 1: every position but the last predicts
  /// the next token of the same window. Module 07's strip-the-mask experiment: a position that
  /// may look ahead sees its own answer in the input.
  kWithinWindow,
  /// inputs = a window of T tokens, targets = its last T - 2: position t is scored against the
  /// token two after it (a multi-token-prediction head, g2c/specdec/mtp.h, whose row t reads the
  /// trunk at t and the token at t + 1).
  kTwoAhead,
};

/// Random windows of one token stream, reproducible from a seed. Each draw is module 06's
/// get_batch (starts uniform over every window that fits), with this sampler's own generator.
/// Example: WindowSampler(ids, /*context_length=*/32, /*batch_size=*/16, kWithinWindow, 1).next()
/// -> inputs (16, 32), targets (16, 31).
class WindowSampler {
 public:
  WindowSampler(torch::Tensor stream, std::int64_t context_length, std::int64_t batch_size,
                TargetRule rule, std::uint64_t seed);

  /// The next batch (on the CPU).
  TokenBatch next();
  /// `count` batches drawn with a fresh generator seeded `seed`: the same set on every call
  /// (validation batches).
  std::vector<TokenBatch> fixed(std::int64_t count, std::uint64_t seed) const;

  /// Tokens the model reads per batch, B × T.
  std::int64_t tokens_per_batch() const { return batch_size_ * context_length_; }
  std::int64_t context_length() const { return context_length_; }
  std::int64_t batch_size() const { return batch_size_; }

 private:
  TokenBatch draw(at::Generator& generator) const;

  torch::Tensor stream_;
  std::int64_t context_length_;
  std::int64_t batch_size_;
  TargetRule rule_;
  at::Generator generator_;
};

/// Mean next-token cross-entropy (module 03's CrossEntropyLoss; with `fused`, the same loss by
/// g2c::nn::fused_cross_entropy) of logits (B, T, V) against targets (B, T') with T' <= T:
/// positions 0 .. T' - 1 are scored, later ones are not. ValueError for mismatched shapes.
torch::Tensor next_token_loss(const torch::Tensor& logits, const torch::Tensor& targets,
                              bool fused = false);

}  // namespace g2c::exercises
