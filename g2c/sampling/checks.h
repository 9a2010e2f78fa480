// Module 11 — the entry checks of the warpers and of generation, implemented for you. Each throws
// g2c::ValueError saying what was expected and what was received; your functions call them first.
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

/// Everything generate() and generate_cached() refuse, before any forward pass: a prompt that is
/// not a non-empty 1-D integer tensor, ids outside [0, V) ("outside the model vocab"),
/// max_new_tokens < 0, a temperature < 0 or not finite, top_k <= 0, top_p outside (0, 1],
/// repetition_penalty <= 0, an eos_id outside [0, V).
void check_generate_arguments(const g2c::transformer::TransformerLMImpl& model,
                              const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                              const GenerateOptions& options);

}  // namespace g2c::sampling
