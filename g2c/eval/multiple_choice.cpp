// Module 15 — your work: scoring one multiple-choice question.
#include "g2c/eval/multiple_choice.h"

#include <algorithm>
#include <cmath>

#include "g2c/core/errors.h"
#include "g2c/eval/logprob.h"

namespace g2c::eval {

EvalResult score_multiple_choice(g2c::nn::Module& model, const g2c::sft::TokenEncoder& tokenizer,
                                 const MultipleChoiceExample& example, bool length_normalize) {
  // TODO: Each choice i scored with continuation_logprob(prompt, choice) = {logp_i, n_i}; its score
  // s_i = logp_i, or logp_i / n_i with length_normalize (per TOKEN). The answer is the first
  // argmax of s; confidence = softmax(s) at that index, exp(s_i - max) / Σ_j exp(s_j - max).
  // Fill EvalResult: prediction = the chosen choice's text, choice_idx, correct (== answer_idx),
  // confidence, metadata {"option_logps", "option_lengths", "option_scores", "gold_idx"}.
  // Operations: a loop, std::max_element, std::exp.
  // Hints, one step at a time: scripts/hint.sh 15 score_multiple_choice
  throw g2c::todo("score_multiple_choice", "g2c/eval/multiple_choice.cpp", "15");
}

}  // namespace g2c::eval
