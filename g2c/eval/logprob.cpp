// Module 15 — your work: the log-probability of a continuation.
#include "g2c/eval/logprob.h"

#include "g2c/core/errors.h"

namespace g2c::eval {

ContinuationLogprob continuation_logprob(g2c::nn::Module& model,
                                         const g2c::sft::TokenEncoder& tokenizer,
                                         std::string_view prompt, std::string_view continuation) {
  // TODO: How probable the model finds `continuation` after `prompt`. Encode the two SEPARATELY
  // (P and C ids, so the boundary is exact) and check them (check_continuation_ids); join them,
  // full (1, T) int64 on model.device(), T = P + C. With autograd off, x = full[:, :-1] and
  // y = full[:, 1:] (1, T-1); log_softmax(model(x)) (1, T-1, V); gather each row's target y[t]
  // (1, T-1). Row t predicts full[t + 1], so the continuation's tokens are the targets of rows
  // P-1 … T-2: sum exactly those C values (not the prompt's). Return {that sum, C}.
  // Operations: torch::tensor, narrow, log_softmax, gather, sum, item<double>.
  // Hints, one step at a time: scripts/hint.sh 15 continuation_logprob
  throw g2c::todo("continuation_logprob", "g2c/eval/logprob.cpp", "15");
}

}  // namespace g2c::eval
