// Module 06 — your work: sampling text from a model.
#include "g2c/lm/sampling.h"

#include "g2c/core/errors.h"
#include "g2c/nn/device.h"

namespace g2c::lm {

std::vector<std::int64_t> sample(LanguageModelImpl& model,
                                 const std::vector<std::int64_t>& prompt_ids,
                                 std::int64_t num_tokens, double temperature,
                                 std::optional<at::Generator> generator,
                                 const std::string& device) {
  // TODO: Generate num_tokens ids after the prompt: the logits of the last N ids, softmax(logits /
  // temperature), one id drawn on the CPU with the caller's generator (the same text for a seed on
  // every device), appended; autograd off. Check the arguments first (check_sample_arguments) and
  // move the model to the resolved device. Return the prompt followed by the new ids.
  // Hints, one step at a time: scripts/hint.sh 06 sample
  throw g2c::todo("sample", "g2c/lm/sampling.cpp", "06");
}

}  // namespace g2c::lm
