// Module 06 — your work: sampling text from a model.
#include "g2c/lm/sampling.h"

#include "g2c/core/errors.h"

namespace g2c::lm {

std::vector<std::int64_t> sample(LanguageModelImpl& model,
                                 const std::vector<std::int64_t>& prompt_ids,
                                 std::int64_t num_tokens, double temperature,
                                 std::optional<at::Generator> generator,
                                 const std::string& device) {
  // TODO: check_sample_arguments(...); move the model to resolve_device(device); repeat
  // num_tokens times: logits of the last N ids, softmax(logits / temperature), draw one id with
  // torch::multinomial (on the CPU, with generator) and append it. Return prompt + new ids.
  throw g2c::todo("sample", "g2c/lm/sampling.cpp", "06");
}

}  // namespace g2c::lm
