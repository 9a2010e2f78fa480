// Module 15 — reference: scoring one multiple-choice question.
#include "g2c/eval/multiple_choice.h"

#include <algorithm>
#include <cmath>

#include "g2c/eval/logprob.h"

namespace g2c::eval {

EvalResult score_multiple_choice(g2c::nn::Module& model, const g2c::sft::TokenEncoder& tokenizer,
                                 const MultipleChoiceExample& example, bool length_normalize) {
  std::vector<double> logps;
  std::vector<std::int64_t> lengths;
  std::vector<double> scores;
  for (const auto& choice : example.choices()) {
    const auto [logprob, n_tokens] =
        continuation_logprob(model, tokenizer, example.prompt(), choice);
    logps.push_back(logprob);
    lengths.push_back(n_tokens);
    // Per TOKEN when normalised: characters would favour options with long tokens.
    scores.push_back(length_normalize
                         ? logprob / static_cast<double>(std::max<std::int64_t>(n_tokens, 1))
                         : logprob);
  }
  // max_element returns the first of equal maxima, so a tie picks the earlier option.
  const auto best = std::max_element(scores.begin(), scores.end());
  const auto idx = static_cast<std::int64_t>(best - scores.begin());
  double total = 0.0;
  for (const double s : scores) total += std::exp(s - *best);  // softmax, shifted by the max

  EvalResult result;
  result.prediction = example.choices()[idx];
  result.choice_idx = idx;
  result.correct = idx == example.answer_idx();
  result.confidence = 1.0 / total;  // exp(best - best) / Σ exp(s - best)
  result.metadata = {{"option_logps", logps},
                     {"option_lengths", lengths},
                     {"option_scores", scores},
                     {"gold_idx", example.answer_idx()}};
  return result;
}

}  // namespace g2c::eval
