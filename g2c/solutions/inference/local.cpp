// Module 16 — reference solution for g2c/inference/local.cpp.
#include <chrono>

#include "g2c/core/errors.h"
#include "g2c/inference/local.h"

namespace g2c::inference {

InferenceResult LocalTransformerBackend::complete(const std::string& prompt,
                                                  const CompletionOptions& options) {
  if (options.max_new_tokens <= 0) {
    throw ValueError("LocalTransformerBackend::complete: max_new_tokens must be > 0");
  }
  const auto prompt_ids = tokenizer_->encode(prompt);
  if (prompt_ids.empty()) {
    throw ValueError("LocalTransformerBackend::complete: the prompt encodes to 0 tokens");
  }
  const auto ids = torch::tensor(prompt_ids, torch::kLong).to(model_->device());  // (T)
  const auto sampling = g2c::sampling::GenerateOptions()
                            .temperature(options.temperature)
                            .top_k(options.top_k)
                            .top_p(options.top_p)
                            .eos_id(eos_id_);
  const auto start = std::chrono::steady_clock::now();
  const auto full = generate_(*model_, ids, options.max_new_tokens, sampling);  // (T + n)
  const double latency_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const auto tail =
      full.slice(0, static_cast<std::int64_t>(prompt_ids.size())).to(torch::kCPU).contiguous();
  const std::vector<std::int64_t> new_ids(tail.data_ptr<std::int64_t>(),
                                          tail.data_ptr<std::int64_t>() + tail.numel());
  return InferenceResult(prompt, tokenizer_->decode(new_ids),
                         static_cast<std::int64_t>(prompt_ids.size()),
                         static_cast<std::int64_t>(new_ids.size()), latency_ms, info_,
                         {{"sampling", options.to_json()},
                          {"eos_id", eos_id_ ? nlohmann::json(*eos_id_) : nlohmann::json()}});
}

}  // namespace g2c::inference
