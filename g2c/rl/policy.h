// Beyond module rl — the policy as GRPOTrainer sees it: a model that samples completions, scores
// every position of one, and has trainable parameters.
//
// GRPO needs three things of a model: draw K completions of a prompt (sample_group), score a
// prompt ++ completion row token by token with autograd (completion_log_prob), and hand its
// trainable parameters to the optimizer. The reference is a second Policy that scores without
// being trained. Two kinds:
//   transformer_policy(model)       module 09's TransformerLM: module 11's generate samples, its
//                                   forward scores, every parameter that requires grad trains
//   llama_lora_policy(lora, on)     SmolLM2 with LoRA adapters (g2c/pretrained/lora.h): samples
//                                   through the KV cache, scores with the adapters on (the
//                                   policy: A and B train) or off (the reference: the same model
//                                   in memory, nothing trains)
// GRPOTrainer holds both as std::shared_ptr<Policy>, so train_step reads the same whichever the
// model: sample_group(model, …), completion_log_prob(model, …), model->device().
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "g2c/core/torch.h"
#include "g2c/pretrained/lora.h"
#include "g2c/rl/grpo.h"
#include "g2c/sampling/generate.h"
#include "g2c/sampling/logits_model.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::rl {

class Policy {
 public:
  virtual ~Policy() = default;
  /// Every position's logits with the policy's current weights: what completion_log_prob reads
  /// (with autograd unless a NoGradGuard is open).
  virtual g2c::sampling::ScoringModel& scorer() = 0;
  /// prompt_ids (P) -> prompt ++ up to max_new_tokens ids (a 1-D int64 CPU tensor), each drawn by
  /// module 11's sample_next_token with `options` (greedy at temperature 0). No autograd.
  virtual torch::Tensor generate(const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                                 const g2c::sampling::GenerateOptions& options) = 0;
  /// The tensors an optimizer trains (none for a reference).
  virtual std::vector<torch::Tensor> trainable_parameters() = 0;
  virtual torch::Device device() const = 0;
  /// True when `other` computes with the same weights in the same state: used as a reference, it
  /// would move with the policy and measure nothing.
  virtual bool same_as(const Policy& other) const = 0;
};

/// Module 09's TransformerLM as a Policy: generate is module 11's generate, the scorer its forward
/// (TransformerLogitsModel), the trainable parameters those with requires_grad. Two policies of
/// one module are the same policy. nullptr for an empty holder (GRPOTrainer says so by name).
std::shared_ptr<Policy> transformer_policy(g2c::transformer::TransformerLM model);

/// A Llama model (SmolLM2) with LoRA adapters as a Policy: `adapters_on` true is the policy
/// (scores and samples with W + scaling · A B, trains A and B), false the reference (the base
/// model exactly, nothing to train) — the same weights in memory, switched per call. Samples
/// through the KV cache with the adapted weights merged once per completion. nullptr for an empty
/// holder.
std::shared_ptr<Policy> llama_lora_policy(g2c::pretrained::LlamaLoRA lora, bool adapters_on);

/// completion_log_prob through a policy's scorer: what train_step calls for model and ref_model.
inline torch::Tensor completion_log_prob(const std::shared_ptr<Policy>& policy,
                                         const torch::Tensor& ids, std::int64_t prompt_len) {
  return completion_log_prob(policy->scorer(), ids, prompt_len);
}

}  // namespace g2c::rl
