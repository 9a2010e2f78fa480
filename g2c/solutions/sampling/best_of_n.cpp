// Module 11 — reference solution for g2c/sampling/best_of_n.cpp.
#include "g2c/sampling/best_of_n.h"

#include <algorithm>

#include "g2c/sampling/checks.h"

namespace g2c::sampling {

double sequence_log_prob(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& token_ids,
                         std::int64_t prompt_len) {
  check_sequence_log_prob(model, token_ids, prompt_len);
  torch::NoGradGuard no_grad;
  const auto ids = token_ids.to(model.device(), torch::kLong);  // (T)
  const auto length = ids.size(0);
  // (1, T) -> (1, T, V) -> (T, V): row t holds log p(next token | ids[0..t]).
  const auto log_probs = torch::log_softmax(model.forward(ids.unsqueeze(0))[0], /*dim=*/-1);
  const auto start = std::max<std::int64_t>(prompt_len - 1, 0);
  const auto scored = length - 1 - start;  // S rows: start … T - 2 (the last row predicts nothing)
  const auto predictions = log_probs.narrow(/*dim=*/0, start, scored);  // (S, V)
  const auto targets = ids.narrow(/*dim=*/0, start + 1, scored);        // (S): what came next
  return predictions.gather(/*dim=*/1, targets.unsqueeze(1)).sum().item<double>();
}

BestOfNResult best_of_n(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& prompt_ids,
                        std::int64_t max_new_tokens, const BestOfNOptions& options,
                        const GenerateOptions& generate_options) {
  check_best_of_n(model, prompt_ids, max_new_tokens, options.n(), generate_options);
  const auto prompt_len = prompt_ids.numel();
  BestOfNResult result;
  for (std::int64_t i = 0; i < options.n(); ++i) {
    // The same options each time: one generator, which each call advances.
    const auto ids = generate(model, prompt_ids, max_new_tokens, generate_options);  // (P + new)
    double score = sequence_log_prob(model, ids, prompt_len);
    if (options.length_normalize()) {
      score /= static_cast<double>(std::max<std::int64_t>(ids.numel() - prompt_len, 1));
    }
    result.scored.push_back({ids, score});
  }
  const auto best = std::max_element(
      result.scored.begin(), result.scored.end(),
      [](const ScoredSequence& a, const ScoredSequence& b) { return a.score < b.score; });
  result.best_ids = best->ids;
  return result;
}

}  // namespace g2c::sampling
