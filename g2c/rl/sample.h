// Beyond module rl — a group: K fresh attempts at one prompt, drawn by module 11's generate.
//
// On-policy RL makes its own data: every step samples a group of completions of ONE prompt from
// the current model at temperature > 0, and the group grades itself (group_advantages). Greedy
// decoding would make the K attempts identical and every group useless, so temperature 0 is
// refused.
//   prompt_ids  = tokenizer.encode(prompt)                          (P)
//   K times:    full = generate(model, prompt_ids, max_new_tokens)  (P + n_k), n_k <=
//   max_new_tokens
//               completion = full[P:]                               (n_k)   lengths vary (EOS)
//               text = tokenizer.decode(completion)                 what the verifier reads
// The tokenizer is anything with encode and decode: g2c::inference::TextCodec, the interface a
// local backend already reads a tokenizer through (module 04's TextTokenizer as
// TextTokenizerCodec, a test's character tokenizer).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "g2c/core/torch.h"
#include "g2c/inference/local.h"
#include "g2c/rl/policy.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::rl {

/// K sampled completions of one prompt.
struct GroupSample {
  std::string prompt_text;                 // the prompt as given
  torch::Tensor prompt_ids;                // (P) int64 on the CPU: the encoded prompt
  std::vector<torch::Tensor> completions;  // K tensors (n_k) int64 on the CPU, prompt excluded
  std::vector<std::string> texts;          // the K decoded completions, for the verifier
};

/// How sample_group draws. Builder style: SampleGroupOptions().max_new_tokens(12).generator(gen).
struct SampleGroupOptions {
  TORCH_ARG(std::int64_t, max_new_tokens) = 64;
  /// > 0; GRPOTrainer samples at 1 (the model's own distribution, which it rescores).
  TORCH_ARG(double, temperature) = 1.0;
  TORCH_ARG(std::optional<std::int64_t>, top_k) = std::nullopt;
  TORCH_ARG(std::optional<double>, top_p) = std::nullopt;
  /// Generation of a completion stops after this id (kept in the completion).
  TORCH_ARG(std::optional<std::int64_t>, eos_id) = std::nullopt;
  /// A CPU generator for every draw of the group (nullopt: LibTorch's default one).
  TORCH_ARG(std::optional<at::Generator>, generator) = std::nullopt;
};

/// Samples k completions of `prompt` from the current model through module 11's generate, one
/// after another with the same options (and so the same generator, its stream going on). No
/// autograd. ValueError, before the model or the tokenizer is touched, for k < 2 (a group of one
/// has no one to compare with) and temperature <= 0; then for an empty model holder and whatever
/// generate refuses (an empty prompt, ids outside the model's vocabulary).
GroupSample sample_group(g2c::transformer::TransformerLM& model,
                         const g2c::inference::TextCodec& tokenizer, const std::string& prompt,
                         std::int64_t k, const SampleGroupOptions& options = SampleGroupOptions());

/// The same for any Policy (policy.h): its generate draws each completion (module 11's generate
/// for a TransformerLM, the KV cache for SmolLM2 with LoRA). ValueError as above, then for a null
/// policy.
GroupSample sample_group(const std::shared_ptr<Policy>& policy,
                         const g2c::inference::TextCodec& tokenizer, const std::string& prompt,
                         std::int64_t k, const SampleGroupOptions& options = SampleGroupOptions());

}  // namespace g2c::rl
