// Beyond module rl, implemented for you: sampling a group of completions.
#include "g2c/rl/sample.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/sampling/generate.h"

namespace g2c::rl {

namespace {

/// What sample_group refuses before the model or the tokenizer is touched.
void check_group_arguments(std::int64_t k, const SampleGroupOptions& options) {
  if (k < 2) {
    throw ValueError(fmt::format(
        "sample_group: a group needs k >= 2 completions (the group is its own baseline: one "
        "attempt has nothing to be compared with); got k = {}",
        k));
  }
  if (!(options.temperature() > 0.0)) {
    throw ValueError(fmt::format(
        "sample_group: temperature must be > 0; got {}. Greedy decoding (0) writes the same "
        "completion K times, so every group is degenerate and nothing is learned",
        options.temperature()));
  }
}

}  // namespace

GroupSample sample_group(g2c::transformer::TransformerLM& model,
                         const g2c::inference::TextCodec& tokenizer, const std::string& prompt,
                         std::int64_t k, const SampleGroupOptions& options) {
  check_group_arguments(k, options);
  if (model.is_empty()) {
    throw ValueError("sample_group: the model is an empty TransformerLM holder; pass the policy");
  }
  return sample_group(transformer_policy(model), tokenizer, prompt, k, options);
}

GroupSample sample_group(const std::shared_ptr<Policy>& policy,
                         const g2c::inference::TextCodec& tokenizer, const std::string& prompt,
                         std::int64_t k, const SampleGroupOptions& options) {
  check_group_arguments(k, options);
  if (!policy) throw ValueError("sample_group: the policy is empty (a null pointer)");
  const auto encoded = tokenizer.encode(prompt);
  const auto prompt_ids = torch::tensor(encoded, torch::kLong);  // (P)
  const auto generate_options = g2c::sampling::GenerateOptions()
                                    .temperature(options.temperature())
                                    .top_k(options.top_k())
                                    .top_p(options.top_p())
                                    .eos_id(options.eos_id())
                                    .generator(options.generator());
  GroupSample group{prompt, prompt_ids, {}, {}};
  for (std::int64_t i = 0; i < k; ++i) {
    const auto full = policy->generate(prompt_ids, options.max_new_tokens(), generate_options);
    const auto completion = full.narrow(0, prompt_ids.numel(), full.numel() - prompt_ids.numel());
    const auto* first = completion.data_ptr<std::int64_t>();
    group.texts.push_back(tokenizer.decode({first, first + completion.numel()}));
    group.completions.push_back(completion.clone());
  }
  return group;
}

}  // namespace g2c::rl
