// Module 11 — your work: the decoding step and the generation loop.
#include "g2c/sampling/generate.h"

#include <algorithm>

#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"

namespace g2c::sampling {

torch::Tensor sample_next_token(const torch::Tensor& logits, const torch::Tensor& history,
                                const GenerateOptions& options) {
  // TODO: logits (B, V) are on the CPU. Greedy first, with no warper and no draw:
  // if (options.temperature() == 0.0) return logits.argmax(/*dim=*/-1);
  // Otherwise warp in the canonical order, each step on the previous result:
  // auto warped = apply_repetition_penalty(logits, history, options.repetition_penalty());
  // warped = apply_temperature(warped, options.temperature());
  // if (options.top_k()) warped = top_k_filter(warped, *options.top_k());
  // if (options.top_p()) warped = top_p_filter(warped, *options.top_p());
  // — temperature before the filters: top-p measures the mass of the distribution you sample.
  // const auto probs = torch::softmax(warped, /*dim=*/-1);  — (B, V)
  // return torch::multinomial(probs, /*num_samples=*/1, /*replacement=*/false,
  //                           options.generator()).squeeze(-1);  — (B), the caller's generator
  throw g2c::todo("sample_next_token", "g2c/sampling/generate.cpp", "11");
}

torch::Tensor generate(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& prompt_ids,
                       std::int64_t max_new_tokens, const GenerateOptions& options) {
  // TODO: check_generate_arguments(model, prompt_ids, max_new_tokens, options); then
  // torch::NoGradGuard no_grad;  — inference: no graph, no .grad, no memory held per step.
  // auto ids = prompt_ids.to(torch::kCPU, torch::kLong).clone();  — (T), the sequence so far
  // const auto device = model.device();  — where the parameters are
  // for (std::int64_t step = 0; step < max_new_tokens; ++step) {
  //   const auto start = std::max<std::int64_t>(0, ids.size(0) - model.max_seq_len);  — crop
  //   const auto context = ids.narrow(0, start, ids.size(0) - start).unsqueeze(0).to(device);
  //   const auto logits = model.forward(context).select(/*dim=*/1, -1).to(torch::kCPU);
  //   — (1, V): the last position only, brought to the CPU where the generator draws
  //   const auto next = sample_next_token(logits, ids, options);  — (1)
  //   ids = torch::cat({ids, next});
  //   if (options.eos_id() && next.item<std::int64_t>() == *options.eos_id()) break;  — kept
  // }
  // return ids;
  throw g2c::todo("generate", "g2c/sampling/generate.cpp", "11");
}

}  // namespace g2c::sampling
