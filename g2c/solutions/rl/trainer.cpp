// Reference solution for g2c/rl/trainer.cpp: one GRPO step.
#include <limits>
#include <vector>

#include "g2c/rl/grpo.h"
#include "g2c/rl/trainer.h"

namespace g2c::rl {

GRPOStepMetrics GRPOTrainer::train_step() {
  const Task& task = next_task();
  const auto group = sample_group(model, *tokenizer, task.prompt, options.group_size(),
                                  SampleGroupOptions()
                                      .max_new_tokens(options.max_new_tokens())
                                      .temperature(options.temperature())
                                      .eos_id(options.eos_id())
                                      .generator(generator));
  std::vector<double> scores;
  for (const auto& text : group.texts) scores.push_back(verifier(task, text));
  const auto rewards = torch::tensor(scores, torch::kFloat);  // (K)
  const double mean_reward = rewards.mean().item<double>();

  // A degenerate group carries no signal; a group with an empty completion has a row with
  // nothing to score. Either way: no update, and no rescoring passes to pay for.
  auto advantages = group_advantages(rewards);  // (K)
  bool any_empty = false;
  for (const auto& completion : group.completions) any_empty = any_empty || completion.numel() == 0;
  if (!advantages.ne(0).any().item<bool>() || any_empty) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {0.0, mean_reward, nan, nan, 1.0};
  }

  // One row at a time: prompt ++ completion, (1, P + n_k).
  const std::int64_t prompt_len = group.prompt_ids.numel();
  std::vector<torch::Tensor> rows;
  for (const auto& completion : group.completions) {
    rows.push_back(torch::cat({group.prompt_ids, completion}).unsqueeze(0));
  }
  std::vector<torch::Tensor> policy, reference;
  for (const auto& row : rows) {
    policy.push_back(completion_log_prob(model, row.to(model->device()), prompt_len));
  }
  {
    torch::NoGradGuard no_grad;  // the reference is a fixed point: no graph through it
    for (const auto& row : rows) {
      reference.push_back(completion_log_prob(ref_model, row.to(ref_model->device()), prompt_len));
    }
  }
  const auto logp = torch::cat(policy);                           // (K), with autograd
  const auto ref_logp = torch::cat(reference).to(logp.device());  // (K), constant
  advantages = advantages.to(logp.device());

  // Diagnostics, off the graph: the leash's distance and the sampled tokens' surprise.
  const auto d = ref_logp - logp.detach();
  const auto kl = (d.exp() - d - 1.0).mean();
  std::vector<double> lengths;
  for (const auto& completion : group.completions) {
    lengths.push_back(static_cast<double>(completion.numel()));
  }
  const auto n = torch::tensor(lengths).to(logp.device(), logp.scalar_type());  // (K)
  const auto sample_entropy = (-logp.detach() / n).mean();

  const auto loss = grpo_loss(logp, ref_logp, advantages, options.kl_coef());
  optimizer->zero_grad();
  loss.backward();
  optimizer->step();
  step_count += 1;
  return {loss.item<double>(), mean_reward, kl.item<double>(), sample_entropy.item<double>(), 0.0};
}

}  // namespace g2c::rl
