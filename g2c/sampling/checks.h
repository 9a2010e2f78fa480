// Module 11 — the entry checks of the warpers, of generation and of best-of-n, implemented for
// you. Each throws g2c::ValueError saying what was expected and what was received; your functions
// call them first.
#pragma once

#include <cstdint>

#include "g2c/core/torch.h"

#include "g2c/sampling/generate.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::sampling {

/// ValueError unless logits is a defined floating-point tensor (…, V) with V >= 1 and
/// temperature is finite and > 0.
void check_temperature(const torch::Tensor& logits, double temperature);

/// ValueError unless logits is a floating-point (…, V) tensor and k >= 1.
void check_top_k(const torch::Tensor& logits, std::int64_t k);

/// ValueError unless logits is a floating-point (…, V) tensor and 0 < p <= 1.
void check_top_p(const torch::Tensor& logits, double p);

/// ValueError unless logits is (B, V) floating point, previous_ids is an integer (T) or (B, T)
/// tensor with every id in [0, V), and penalty is finite and > 0.
/// Example: logits (B=2, V=5) with previous_ids (B=3, T=4) -> "… one row of ids per row of logits".
void check_repetition_penalty(const torch::Tensor& logits, const torch::Tensor& previous_ids,
                              double penalty);

/// ValueError unless prompt_ids is a non-empty 1-D integer tensor (T) of ids in [0, vocab_size)
/// ("prompt_ids contain token ids outside the model vocab …"): the prompt check of every decoding
/// loop (generate, speculative decoding).
void check_prompt_ids(const torch::Tensor& prompt_ids, std::int64_t vocab_size);

/// Everything generate() and generate_cached() refuse, before any forward pass: a prompt that is
/// not a non-empty 1-D integer tensor, ids outside [0, V) ("outside the model vocab"),
/// max_new_tokens < 0, a temperature < 0 or not finite, top_k <= 0, top_p outside (0, 1],
/// repetition_penalty <= 0, an eos_id outside [0, V).
void check_generate_arguments(const g2c::transformer::TransformerLMImpl& model,
                              const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                              const GenerateOptions& options);
/// The same for a model of `vocab_size` ids (a ScoringModel: SmolLM2, a test's fake).
void check_generate_arguments(std::int64_t vocab_size, const torch::Tensor& prompt_ids,
                              std::int64_t max_new_tokens, const GenerateOptions& options);

/// What sequence_log_prob() refuses: token_ids that are not a 1-D integer tensor (T) of at least
/// 2 ids (the first token has no context, so a single one leaves nothing to score), ids outside
/// [0, V), more than max_seq_len ids (one forward pass sees them all), and a prompt_len < 0 or
/// >= T. Example: ids (T=3) with prompt_len 3 -> "prompt_len 3 leaves nothing to score …".
void check_sequence_log_prob(const g2c::transformer::TransformerLMImpl& model,
                             const torch::Tensor& token_ids, std::int64_t prompt_len);

/// What best_of_n() refuses before it generates anything: n < 1, max_new_tokens < 1 (a candidate
/// without a new token has nothing to score), and whatever check_generate_arguments() refuses.
void check_best_of_n(const g2c::transformer::TransformerLMImpl& model,
                     const torch::Tensor& prompt_ids, std::int64_t max_new_tokens, std::int64_t n,
                     const GenerateOptions& options);

}  // namespace g2c::sampling
