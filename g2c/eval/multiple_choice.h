// Module 15 — multiple choice: score every option, answer with the most probable.
//
// For a question with N options, each option i is scored by continuation_logprob(prompt, choice_i)
// = (logp_i, n_i), the sum over its n_i tokens. The score used to decide is
//   s_i = logp_i                 raw: the joint probability of the whole option
//   s_i = logp_i / n_i           length-normalised: mean per TOKEN (a raw sum favours short
//                                options, since every extra token adds a negative term)
// prediction = argmax_i s_i (the first on a tie); confidence = softmax(s)[prediction], the
// probability the model puts on its own answer when forced to pick among the N (1/N when it is
// indifferent). One forward pass per option, the prompt re-encoded each time: no shared-prefix
// cache — an optimisation, not the lesson.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/eval/data.h"
#include "g2c/nn/module.h"
#include "g2c/sft/chat_template.h"

namespace g2c::eval {

/// One question scored (see above). The result: prediction = the chosen choice's text, choice_idx
/// = its index, correct = (choice_idx == example.answer_idx()), confidence =
/// softmax(s)[choice_idx], metadata {"option_logps": [logp_i], "option_lengths": [n_i],
/// "option_scores": [s_i], "gold_idx": answer_idx}. Example: a model that prefers "a" and choices
/// {"a", "b"}: choice_idx 0, confidence > 0.5.
EvalResult score_multiple_choice(g2c::nn::Module& model, const g2c::sft::TokenEncoder& tokenizer,
                                 const MultipleChoiceExample& example,
                                 bool length_normalize = false);

/// How run_multiple_choice_eval scores and reports. Builder style:
/// MultipleChoiceEvalOptions().length_normalize(true).task_name("speakers").
struct MultipleChoiceEvalOptions {
  /// Decide by the mean log-probability per token instead of the sum.
  TORCH_ARG(bool, length_normalize) = false;
  /// The report's label.
  TORCH_ARG(std::string, task_name) = "multiple_choice";
  /// Compute the report's ECE from the results' confidences (off: ece is none).
  TORCH_ARG(bool, compute_ece) = true;
  /// Bins of that ECE.
  TORCH_ARG(std::int64_t, ece_n_bins) = 10;
};

/// score_multiple_choice over every example, in order, and the aggregate: n, accuracy, the mean
/// confidence and (with compute_ece, when every result has a confidence) the ECE. The model is put
/// in eval mode for the run (no dropout in a measurement) and its mode restored afterwards.
/// ValueError for no examples.
EvalReport run_multiple_choice_eval(g2c::nn::Module& model, const g2c::sft::TokenEncoder& tokenizer,
                                    const std::vector<MultipleChoiceExample>& examples,
                                    const MultipleChoiceEvalOptions& options = {});

}  // namespace g2c::eval
