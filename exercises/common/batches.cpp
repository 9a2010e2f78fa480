#include "exercises/common/batches.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/lm/batching.h"
#include "g2c/nn/fused_cross_entropy.h"
#include "g2c/nn/losses.h"

namespace g2c::exercises {

WindowSampler::WindowSampler(torch::Tensor stream, std::int64_t context_length,
                             std::int64_t batch_size, TargetRule rule, std::uint64_t seed)
    : stream_(std::move(stream)),
      context_length_(context_length),
      batch_size_(batch_size),
      rule_(rule),
      generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {
  const std::int64_t minimum =
      rule == TargetRule::kTwoAhead ? 3 : (rule == TargetRule::kWithinWindow ? 2 : 1);
  if (context_length < minimum || batch_size < 1) {
    throw ValueError(
        fmt::format("a batch needs context_length >= {} and batch_size >= 1, got {} and {}",
                    minimum, context_length, batch_size));
  }
  // A window is T + 1 tokens for kNextToken and T for the others: get_batch's context is one
  // shorter, its next token completes the window.
  const std::int64_t window = rule == TargetRule::kNextToken ? context_length + 1 : context_length;
  g2c::lm::check_stream(stream_, window - 1, "the token stream");
}

TokenBatch WindowSampler::draw(at::Generator& generator) const {
  const std::int64_t context =
      rule_ == TargetRule::kNextToken ? context_length_ : context_length_ - 1;
  const auto batch = g2c::lm::get_batch(stream_, context, batch_size_, generator);
  const auto windows = torch::cat({batch.x, batch.y.unsqueeze(1)}, /*dim=*/1);  // (B, context + 1)
  if (rule_ == TargetRule::kNextToken) {
    return {windows.narrow(1, 0, context_length_), windows.narrow(1, 1, context_length_)};
  }
  if (rule_ == TargetRule::kTwoAhead) {
    return {windows, windows.narrow(1, 2, context_length_ - 2)};  // (B, T), (B, T - 2)
  }
  return {windows, windows.narrow(1, 1, context_length_ - 1)};  // (B, T), (B, T - 1)
}

TokenBatch WindowSampler::next() {
  return draw(generator_);
}

std::vector<TokenBatch> WindowSampler::fixed(std::int64_t count, std::uint64_t seed) const {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<TokenBatch> batches;
  for (std::int64_t i = 0; i < count; ++i) batches.push_back(draw(generator));
  return batches;
}

torch::Tensor next_token_loss(const torch::Tensor& logits, const torch::Tensor& targets,
                              bool fused) {
  if (!logits.defined() || !targets.defined() || logits.dim() != 3 || targets.dim() != 2 ||
      targets.size(0) != logits.size(0) || targets.size(1) > logits.size(1)) {
    throw ValueError(fmt::format(
        "next_token_loss expects logits (B, T, V) and targets (B, T') with T' <= T, got {} and {}",
        logits.defined() ? describe_shape(logits, {"B", "T", "V"}) : "undefined",
        targets.defined() ? describe_shape(targets, {"B", "T'"}) : "undefined"));
  }
  const auto scored = logits.narrow(/*dim=*/1, /*start=*/0, targets.size(1));  // (B, T', V)
  const auto rows = scored.reshape({-1, logits.size(2)});                      // (B·T', V)
  const auto flat_targets = targets.reshape({-1});                             // (B·T')
  return fused ? g2c::nn::fused_cross_entropy(rows, flat_targets)
               : g2c::nn::CrossEntropyLoss()(rows, flat_targets);
}

}  // namespace g2c::exercises
