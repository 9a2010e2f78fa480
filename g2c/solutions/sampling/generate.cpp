// Module 11 — reference solution for g2c/sampling/generate.cpp.
#include "g2c/sampling/generate.h"

#include <algorithm>

#include "g2c/sampling/checks.h"

namespace g2c::sampling {

torch::Tensor sample_next_token(const torch::Tensor& logits, const torch::Tensor& history,
                                const GenerateOptions& options) {
  if (options.temperature() == 0.0) return logits.argmax(/*dim=*/-1);  // (B): greedy, no warper
  auto warped = apply_repetition_penalty(logits, history, options.repetition_penalty());
  warped = apply_temperature(warped, options.temperature());
  if (options.top_k()) warped = top_k_filter(warped, *options.top_k());
  if (options.top_p()) warped = top_p_filter(warped, *options.top_p());
  const auto probs = torch::softmax(warped, /*dim=*/-1);  // (B, V)
  return torch::multinomial(probs, /*num_samples=*/1, /*replacement=*/false, options.generator())
      .squeeze(-1);  // (B)
}

torch::Tensor generate(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& prompt_ids,
                       std::int64_t max_new_tokens, const GenerateOptions& options) {
  check_generate_arguments(model, prompt_ids, max_new_tokens, options);
  torch::NoGradGuard no_grad;
  auto ids = prompt_ids.to(torch::kCPU, torch::kLong).clone();  // (T), the sequence so far
  const auto device = model.device();
  for (std::int64_t step = 0; step < max_new_tokens; ++step) {
    const auto start = std::max<std::int64_t>(0, ids.size(0) - model.max_seq_len);
    const auto context = ids.narrow(0, start, ids.size(0) - start).unsqueeze(0).to(device);
    // (1, T_ctx) -> (1, T_ctx, V) -> the last position (1, V), drawn from on the CPU.
    const auto logits = model.forward(context).select(/*dim=*/1, -1).to(torch::kCPU);
    const auto next = sample_next_token(logits, ids, options);  // (1)
    ids = torch::cat({ids, next});
    if (options.eos_id() && next.item<std::int64_t>() == *options.eos_id()) break;
  }
  return ids;
}

}  // namespace g2c::sampling
