// Module 15 — reference: the log-probability of a continuation.
#include "g2c/eval/logprob.h"

namespace g2c::eval {

ContinuationLogprob continuation_logprob(g2c::nn::Module& model,
                                         const g2c::sft::TokenEncoder& tokenizer,
                                         std::string_view prompt, std::string_view continuation) {
  const auto prompt_ids = tokenizer.encode(prompt);
  const auto cont_ids = tokenizer.encode(continuation);
  check_continuation_ids(prompt_ids, cont_ids);

  std::vector<std::int64_t> full_ids = prompt_ids;
  full_ids.insert(full_ids.end(), cont_ids.begin(), cont_ids.end());
  const auto P = static_cast<std::int64_t>(prompt_ids.size());
  const auto C = static_cast<std::int64_t>(cont_ids.size());
  const auto T = P + C;

  torch::NoGradGuard no_grad;
  const auto full =
      torch::tensor(full_ids, torch::kLong).to(model.device()).unsqueeze(0);    // (1, T)
  const auto x = full.narrow(1, 0, T - 1);                                      // (1, T-1)
  const auto y = full.narrow(1, 1, T - 1);                                      // (1, T-1)
  const auto log_probs = torch::log_softmax(model(x).to(torch::kFloat64), -1);  // (1, T-1, V)
  const auto target = log_probs.gather(-1, y.unsqueeze(-1)).squeeze(-1);        // (1, T-1)
  // Row t predicts y[t] = full[t + 1]; the continuation's targets are rows P-1 … T-2.
  const auto logprob = target.narrow(1, P - 1, C).sum().item<double>();
  return {logprob, C};
}

}  // namespace g2c::eval
