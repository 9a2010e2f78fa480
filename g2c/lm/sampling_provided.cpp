#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/lm/sampling.h"

namespace g2c::lm {

void check_sample_arguments(const LanguageModelImpl& model,
                            const std::vector<std::int64_t>& prompt_ids, std::int64_t num_tokens,
                            double temperature) {
  if (static_cast<std::int64_t>(prompt_ids.size()) < model.context_length) {
    throw ValueError(
        fmt::format("{} reads {} token(s) of context, but the prompt has {}; give a "
                    "prompt of at least {} ids",
                    model.name(), model.context_length, prompt_ids.size(), model.context_length));
  }
  if (!(temperature > 0.0)) {
    throw ValueError(fmt::format("temperature must be > 0, got {}", temperature));
  }
  if (num_tokens < 0) {
    throw ValueError(fmt::format("num_tokens must be >= 0, got {}", num_tokens));
  }
  for (const auto id : prompt_ids) {
    if (id < 0 || id >= model.vocab_size) {
      throw ValueError(
          fmt::format("prompt id {} is outside [0, {}) of {}", id, model.vocab_size, model.name()));
    }
  }
}

}  // namespace g2c::lm
