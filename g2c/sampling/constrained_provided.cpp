// Module 18, implemented for you — what constrained decoding needs around your two functions: the
// vocabulary as pieces and the argument check (the models' interface: logits_model.h).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "g2c/core/shapes.h"
#include "g2c/sampling/constrained.h"
#include "g2c/tokenizer/text_tokenizer.h"

namespace g2c::sampling {

std::vector<std::string> vocab_pieces(const g2c::tokenizer::TextTokenizer& tokenizer,
                                      std::int64_t vocab_size) {
  if (vocab_size < 0 || vocab_size > tokenizer.size()) {
    throw ValueError(fmt::format(
        "vocab_pieces: vocab_size must be 0..{} (the ids of {}); got {}. Pass the model's "
        "vocab_size, which the tokenizer must cover",
        tokenizer.size(), tokenizer.description(), vocab_size));
  }
  std::vector<std::string> pieces;
  pieces.reserve(static_cast<std::size_t>(vocab_size));
  for (std::int64_t id = 0; id < vocab_size; ++id) {
    const auto token = static_cast<g2c::tokenizer::TokenId>(id);
    if (const auto* bpe = tokenizer.bpe()) {
      pieces.push_back(bpe->is_special(token) ? std::string() : bpe->token_bytes(token));
    } else {
      pieces.push_back(tokenizer.chars()->symbols()[token]);
    }
  }
  return pieces;
}

GenerateOptions GenerateJsonOptions::sampling() const {
  return GenerateOptions()
      .temperature(temperature())
      .top_k(top_k())
      .top_p(top_p())
      .generator(generator());
}

void check_generate_json_arguments(const LogitsModel& model, const torch::Tensor& prompt_ids,
                                   const std::vector<std::string>& pieces,
                                   const GenerateJsonOptions& options) {
  const auto vocab = model.vocab_size();
  if (static_cast<std::int64_t>(pieces.size()) != vocab) {
    throw ValueError(fmt::format(
        "generate_json: the model has V = {} logits per position but {} pieces were given; pass "
        "vocab_pieces(tokenizer, {}) of the tokenizer this model was trained with (one piece per "
        "logit)",
        vocab, pieces.size(), vocab));
  }
  if (!prompt_ids.defined() || prompt_ids.dim() != 1 || prompt_ids.numel() == 0 ||
      at::isFloatingType(prompt_ids.scalar_type()) || prompt_ids.scalar_type() == torch::kBool) {
    throw ValueError(
        fmt::format("generate_json: prompt_ids must be a non-empty 1-D integer tensor (T); got {}",
                    prompt_ids.defined() ? g2c::describe_shape(prompt_ids, {"T"}) + " " +
                                               std::string(c10::toString(prompt_ids.scalar_type()))
                                         : std::string("an undefined tensor")));
  }
  const auto low = prompt_ids.min().item<std::int64_t>();
  const auto high = prompt_ids.max().item<std::int64_t>();
  if (low < 0 || high >= vocab) {
    throw ValueError(fmt::format(
        "generate_json: prompt_ids contain token ids outside the model vocab [0, {}): min {}, max "
        "{}",
        vocab, low, high));
  }
  if (options.max_new_tokens() < 0) {
    throw ValueError(fmt::format("generate_json: max_new_tokens must be >= 0; got {}",
                                 options.max_new_tokens()));
  }
  if (!std::isfinite(options.temperature()) || options.temperature() < 0) {
    throw ValueError(
        fmt::format("generate_json: temperature must be finite and >= 0 (0 is greedy); got {}",
                    options.temperature()));
  }
  if (options.top_k() && *options.top_k() <= 0) {
    throw ValueError(fmt::format("generate_json: top_k must be >= 1; got {}", *options.top_k()));
  }
  if (options.top_p() && !(*options.top_p() > 0 && *options.top_p() <= 1)) {
    throw ValueError(
        fmt::format("generate_json: top_p must be in (0, 1]; got {}", *options.top_p()));
  }
}

}  // namespace g2c::sampling
