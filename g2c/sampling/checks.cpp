#include "g2c/sampling/checks.h"

#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::sampling {

namespace {

void check_logits(const torch::Tensor& logits, const char* function) {
  if (!logits.defined()) {
    throw ValueError(fmt::format("{} needs logits (…, V); got an undefined tensor", function));
  }
  if (!logits.is_floating_point()) {
    throw ValueError(
        fmt::format("{} needs floating-point logits (…, V); got dtype {} with shape {}", function,
                    c10::toString(logits.scalar_type()), describe_shape(logits)));
  }
  if (logits.dim() < 1 || logits.size(-1) < 1) {
    throw ValueError(fmt::format(
        "{} needs logits with a vocabulary dimension (…, V) of at least one entry; got shape {}",
        function, describe_shape(logits)));
  }
}

void check_temperature_value(double temperature, bool allow_zero) {
  const bool ok = std::isfinite(temperature) && (allow_zero ? temperature >= 0 : temperature > 0);
  if (ok) return;
  if (allow_zero) {
    throw ValueError(
        fmt::format("temperature must be finite and >= 0 (0 = greedy decoding, 1 = the model's own "
                    "distribution); got {}",
                    temperature));
  }
  throw ValueError(fmt::format(
      "apply_temperature needs a finite temperature > 0 (it divides the logits by it); got {}. "
      "Temperature 0 means greedy decoding: sample_next_token takes the argmax for it before "
      "any warper runs, so apply_temperature never sees it",
      temperature));
}

void check_top_k_value(std::int64_t k) {
  if (k < 1) {
    throw ValueError(fmt::format(
        "top_k must be >= 1 (the number of most likely tokens to keep); got {}. To switch top-k "
        "off, leave it unset",
        k));
  }
}

void check_top_p_value(double p) {
  if (!(p > 0.0 && p <= 1.0)) {
    throw ValueError(fmt::format(
        "top_p must be in (0, 1] (the probability mass to keep; 1 keeps everything); got {}", p));
  }
}

void check_penalty_value(double penalty) {
  if (!(std::isfinite(penalty) && penalty > 0.0)) {
    throw ValueError(fmt::format(
        "repetition_penalty must be finite and > 0 (1 = no penalty, > 1 discourages repeats); "
        "got {}",
        penalty));
  }
}

}  // namespace

void check_temperature(const torch::Tensor& logits, double temperature) {
  check_logits(logits, "apply_temperature");
  check_temperature_value(temperature, /*allow_zero=*/false);
}

void check_top_k(const torch::Tensor& logits, std::int64_t k) {
  check_logits(logits, "top_k_filter");
  check_top_k_value(k);
}

void check_top_p(const torch::Tensor& logits, double p) {
  check_logits(logits, "top_p_filter");
  check_top_p_value(p);
}

void check_repetition_penalty(const torch::Tensor& logits, const torch::Tensor& previous_ids,
                              double penalty) {
  check_logits(logits, "apply_repetition_penalty");
  check_penalty_value(penalty);
  if (logits.dim() != 2) {
    throw ValueError(fmt::format(
        "apply_repetition_penalty needs logits of shape (B, V), one row per sequence; got {}",
        describe_shape(logits)));
  }
  if (!previous_ids.defined()) {
    throw ValueError(
        "apply_repetition_penalty needs previous_ids (T) or (B, T); got an undefined "
        "tensor");
  }
  if (!c10::isIntegralType(previous_ids.scalar_type(), /*includeBool=*/false)) {
    throw ValueError(fmt::format(
        "previous_ids must be integer token ids (torch::kLong); got dtype {} with shape {}",
        c10::toString(previous_ids.scalar_type()), describe_shape(previous_ids)));
  }
  const bool shared = previous_ids.dim() == 1;
  const bool per_row = previous_ids.dim() == 2 && previous_ids.size(0) == logits.size(0);
  if (!shared && !per_row) {
    throw ValueError(fmt::format(
        "previous_ids must be (T), one history for every row, or (B, T) with one row of ids per "
        "row of logits; got previous_ids {} for logits {}",
        describe_shape(previous_ids), describe_shape(logits, {"B", "V"})));
  }
  if (previous_ids.numel() == 0) return;
  const auto low = previous_ids.min().item<std::int64_t>();
  const auto high = previous_ids.max().item<std::int64_t>();
  if (low < 0 || high >= logits.size(1)) {
    throw ValueError(
        fmt::format("previous_ids hold ids from {} to {}, outside [0, V={}) of the logits", low,
                    high, logits.size(1)));
  }
}

void check_prompt_ids(const torch::Tensor& prompt_ids, std::int64_t vocab_size) {
  if (!prompt_ids.defined() || prompt_ids.dim() != 1) {
    throw ValueError(
        fmt::format("prompt_ids must be a 1-D tensor of token ids (T); got {}",
                    prompt_ids.defined() ? describe_shape(prompt_ids) : "an undefined tensor"));
  }
  if (prompt_ids.numel() == 0) {
    throw ValueError(
        "prompt_ids is empty: generation needs at least one token to predict the next one (a "
        "tokenizer's start or newline token will do)");
  }
  if (!c10::isIntegralType(prompt_ids.scalar_type(), /*includeBool=*/false)) {
    throw ValueError(
        fmt::format("prompt_ids must be integer token ids (torch::kLong); got dtype {}",
                    c10::toString(prompt_ids.scalar_type())));
  }
  const auto low = prompt_ids.min().item<std::int64_t>();
  const auto high = prompt_ids.max().item<std::int64_t>();
  if (low < 0 || high >= vocab_size) {
    throw ValueError(fmt::format(
        "prompt_ids contain token ids outside the model vocab: min={}, max={}, "
        "vocab_size={}. Encode prompts with a tokenizer whose vocabulary fits the model "
        "(capped at vocab_size {})",
        low, high, vocab_size, vocab_size));
  }
}

void check_generate_arguments(std::int64_t vocab_size, const torch::Tensor& prompt_ids,
                              std::int64_t max_new_tokens, const GenerateOptions& options) {
  check_prompt_ids(prompt_ids, vocab_size);
  if (max_new_tokens < 0) {
    throw ValueError(fmt::format("max_new_tokens must be >= 0; got {}", max_new_tokens));
  }
  check_temperature_value(options.temperature(), /*allow_zero=*/true);
  if (options.top_k()) check_top_k_value(*options.top_k());
  if (options.top_p()) check_top_p_value(*options.top_p());
  check_penalty_value(options.repetition_penalty());
  if (options.eos_id() && (*options.eos_id() < 0 || *options.eos_id() >= vocab_size)) {
    throw ValueError(
        fmt::format("eos_id {} is outside the model vocab [0, {}): it could never be generated",
                    *options.eos_id(), vocab_size));
  }
  if (options.generator() && options.generator()->device().type() != torch::kCPU) {
    throw ValueError(fmt::format(
        "the sampling generator must be a CPU generator (the draws happen on the CPU, so a seed "
        "gives the same text on every device); got a {} generator. Use "
        "at::make_generator<at::CPUGeneratorImpl>(seed)",
        options.generator()->device().str()));
  }
}

void check_generate_arguments(const g2c::transformer::TransformerLMImpl& model,
                              const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                              const GenerateOptions& options) {
  check_generate_arguments(model.vocab_size, prompt_ids, max_new_tokens, options);
}

void check_sequence_log_prob(const g2c::transformer::TransformerLMImpl& model,
                             const torch::Tensor& token_ids, std::int64_t prompt_len) {
  if (!token_ids.defined() || token_ids.dim() != 1) {
    throw ValueError(
        fmt::format("sequence_log_prob needs token_ids as a 1-D tensor (T), one sequence; got {}",
                    token_ids.defined() ? describe_shape(token_ids) : "an undefined tensor"));
  }
  if (!c10::isIntegralType(token_ids.scalar_type(), /*includeBool=*/false)) {
    throw ValueError(fmt::format("token_ids must be integer token ids (torch::kLong); got dtype {}",
                                 c10::toString(token_ids.scalar_type())));
  }
  const auto length = token_ids.size(0);
  if (length < 2) {
    throw ValueError(fmt::format(
        "sequence_log_prob needs at least 2 tokens: the first has no context, so it is never "
        "scored; got T={}",
        length));
  }
  if (length > model.max_seq_len) {
    throw ValueError(fmt::format(
        "token_ids has T={} tokens, more than the model's max_seq_len={}: one forward pass scores "
        "the whole sequence, so keep prompt + new tokens within max_seq_len",
        length, model.max_seq_len));
  }
  const auto low = token_ids.min().item<std::int64_t>();
  const auto high = token_ids.max().item<std::int64_t>();
  if (low < 0 || high >= model.vocab_size) {
    throw ValueError(
        fmt::format("token_ids contain token ids outside the model vocab: min={}, max={}, "
                    "model.vocab_size={}",
                    low, high, model.vocab_size));
  }
  if (prompt_len < 0) {
    throw ValueError(fmt::format("prompt_len must be >= 0; got {}", prompt_len));
  }
  if (prompt_len >= length) {
    throw ValueError(
        fmt::format("prompt_len {} leaves nothing to score in a {}-token sequence: the scored "
                    "tokens are those after the prompt",
                    prompt_len, length));
  }
}

void check_best_of_n(const g2c::transformer::TransformerLMImpl& model,
                     const torch::Tensor& prompt_ids, std::int64_t max_new_tokens, std::int64_t n,
                     const GenerateOptions& options) {
  if (n < 1) {
    throw ValueError(fmt::format("best_of_n needs n >= 1 candidates to choose from; got n={}", n));
  }
  if (max_new_tokens < 1) {
    throw ValueError(fmt::format(
        "best_of_n needs max_new_tokens >= 1: a candidate without a new token has nothing to "
        "score; got {}",
        max_new_tokens));
  }
  check_generate_arguments(model, prompt_ids, max_new_tokens, options);
}

}  // namespace g2c::sampling
