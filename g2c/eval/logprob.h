// Module 15 — how probable does the model find a continuation of a prompt?
//
// The scoring primitive of multiple choice (and of any "how likely is X" diagnostic): the same
// teacher-forced log-probability as module 11's sequence_log_prob and module 14's masked sum, but
// starting from text. Prompt and continuation are encoded SEPARATELY (so the boundary between them
// is known exactly, even where a tokenizer would merge across it) and joined:
// clang-format off
//   full      = prompt_ids (P) ++ cont_ids (C)            T = P + C
//   x, y      = full[:-1], full[1:]                       (1, T - 1) each; logits row t predicts y[t]
//   log_probs = log_softmax(model(x))                     (1, T - 1, V)
//   logprob   = Σ log_probs[0, t, y[t]]  for t = P - 1 … T - 2
//               (the C rows whose target is a continuation token; the prompt's own tokens do not count)
// clang-format on
// No autograd: evaluation never trains.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "g2c/nn/module.h"
#include "g2c/sft/chat_template.h"

namespace g2c::eval {

/// `auto [logprob, n_tokens] = continuation_logprob(...)`.
struct ContinuationLogprob {
  double logprob = 0.0;       // Σ log p(c_t | prompt, c_<t), nats; <= 0
  std::int64_t n_tokens = 0;  // C, the continuation's token count (for length normalisation)
};

/// The model's log-probability of `continuation` after `prompt` (see above), computed on the
/// model's device with autograd off; the model is called as model(x) with x (1, T - 1) int64 and
/// must return (1, T - 1, V). Encoded with tokenizer.encode. ValueError when the prompt or the
/// continuation encodes to no token (check_continuation_ids).
/// Example: a model with uniform logits over V = 64, prompt "abc", continuation "defgh", one
/// token per character -> {-5·log(64), 5}.
/// (The Python edition's name. Module 11's sequence_log_prob scores token ids through a model,
/// module 14's sequence_logprob a masked batch of logits; this one starts from text.)
ContinuationLogprob continuation_logprob(g2c::nn::Module& model,
                                         const g2c::sft::TokenEncoder& tokenizer,
                                         std::string_view prompt, std::string_view continuation);

/// ValueError when prompt_ids is empty (the first continuation token needs a context) or cont_ids
/// is empty (nothing to score: almost certainly a bug, so not a silent 0).
void check_continuation_ids(const std::vector<std::int64_t>& prompt_ids,
                            const std::vector<std::int64_t>& cont_ids);

}  // namespace g2c::eval
