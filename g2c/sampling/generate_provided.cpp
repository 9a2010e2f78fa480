// Module 11 (inference, module 16 of the course) — generation with the KV cache, implemented for
// you: the same sampling as generate() (your sample_next_token), a different way of getting the
// logits. Each step feeds one token to model.forward_cached(), which reads the keys and values
// of every earlier token from the cache instead of recomputing them. The second generate_cached
// does the same through any CachedScoringModel (SmolLM2 and its LoRA policy), whose cached forward
// takes the whole prompt in one pass.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"
#include "g2c/sampling/generate.h"
#include "g2c/sampling/logits_model.h"

namespace g2c::sampling {

torch::Tensor generate_cached(g2c::transformer::TransformerLMImpl& model,
                              const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                              const GenerateOptions& options,
                              const std::function<void(std::int64_t)>& on_token) {
  check_generate_arguments(model, prompt_ids, max_new_tokens, options);
  if (max_new_tokens <= 0) {
    throw ValueError(
        fmt::format("generate_cached needs max_new_tokens > 0; got {}", max_new_tokens));
  }
  if (prompt_ids.size(0) >= model.max_seq_len) {
    throw ValueError(fmt::format(
        "generate_cached needs at least one free position in the KV cache: the prompt has {} "
        "tokens and max_seq_len is {} (the cache has no rolling window). Shorten the prompt to at "
        "most {} tokens, or use generate(), which crops the context",
        prompt_ids.size(0), model.max_seq_len, model.max_seq_len - 1));
  }
  torch::NoGradGuard no_grad;
  auto ids = prompt_ids.to(torch::kCPU, torch::kLong).clone();  // (T), the sequence so far
  const auto device = model.device();
  auto cache = model.empty_kv_cache();

  // Prefill: the prompt one token at a time; only the last step's logits are needed.
  const auto prompt = prompt_ids.to(device, torch::kLong).view({1, -1});  // (1, T)
  torch::Tensor logits;                                                   // (1, 1, V)
  for (std::int64_t t = 0; t < prompt.size(1); ++t) {
    logits = model.forward_cached(prompt.narrow(/*dim=*/1, t, 1), cache);
  }
  for (std::int64_t step = 0; step < max_new_tokens; ++step) {
    const auto next = sample_next_token(logits.select(/*dim=*/1, 0).to(torch::kCPU), ids,
                                        options);  // (1)
    ids = torch::cat({ids, next});
    if (on_token) on_token(next.item<std::int64_t>());
    if (options.eos_id() && next.item<std::int64_t>() == *options.eos_id()) break;
    if (ids.size(0) >= model.max_seq_len) break;  // no position left for another token
    logits = model.forward_cached(next.view({1, 1}).to(device), cache);
  }
  return ids;
}

torch::Tensor generate_cached(CachedScoringModel& model, const torch::Tensor& prompt_ids,
                              std::int64_t max_new_tokens, const GenerateOptions& options) {
  check_generate_arguments(model.vocab_size(), prompt_ids, max_new_tokens, options);
  if (max_new_tokens <= 0) {
    throw ValueError(
        fmt::format("generate_cached needs max_new_tokens > 0; got {}", max_new_tokens));
  }
  if (prompt_ids.size(0) >= model.max_seq_len()) {
    throw ValueError(fmt::format(
        "generate_cached needs at least one free position in the KV cache: the prompt has {} "
        "tokens and the model's context is {}; shorten the prompt",
        prompt_ids.size(0), model.max_seq_len()));
  }
  torch::NoGradGuard no_grad;
  auto ids = prompt_ids.to(torch::kCPU, torch::kLong).clone();  // (T), the sequence so far
  auto cache = model.empty_cache();
  auto logits = model.forward(ids.view({1, -1}).to(model.device()), cache);  // (1, T, V)
  for (std::int64_t step = 0; step < max_new_tokens; ++step) {
    const auto last = logits.select(/*dim=*/1, -1).to(torch::kCPU, torch::kFloat);  // (1, V)
    const auto next = sample_next_token(last, ids, options);                        // (1)
    ids = torch::cat({ids, next});
    if (options.eos_id() && next.item<std::int64_t>() == *options.eos_id()) break;
    if (ids.size(0) >= model.max_seq_len()) break;  // no position left for another token
    logits = model.forward(next.view({1, 1}).to(model.device()), cache);  // (1, 1, V)
  }
  return ids;
}

}  // namespace g2c::sampling
