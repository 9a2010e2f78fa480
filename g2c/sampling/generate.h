// Module 11 — generating text with a TransformerLM, one token at a time.
//
// Dimension legend: T tokens so far, V vocab_size, M the model's max_seq_len.
// Each step of generate():
//   context = the last min(T, M) ids                     (1, T_ctx)   on the model's device
//   logits  = model(context)[:, -1, :]                   (1, V)       moved to the CPU
//   next    = sample_next_token(logits, ids, options)    (1)          argmax, or warp + draw
//   ids     = ids ++ next                                (T + 1)      stop after eos_id
// generate_cached() gives the same tokens without recomputing the prefix: it feeds the prompt
// through model.forward_cached() one token at a time, then one new token per step, reading every
// earlier key and value from the KV cache. Both share sample_next_token(), so they sample exactly
// alike.
//
// Devices. The model runs wherever its parameters are (CPU, CUDA or MPS); the running ids and the
// draw stay on the CPU, with `generator` a CPU generator (at::make_generator<at::CPUGeneratorImpl>
// (seed)). The same seed therefore gives the same random numbers on every device, and the same
// text wherever the devices' logits agree (float rounding can differ between devices by ~1e-6,
// enough in rare cases to move a draw that falls on a boundary between two tokens).
//
// Example (ids from a tokenizer whose vocabulary fits the model):
//   auto generator = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/1);
//   const auto prompt = torch::tensor(tokenizer.encode("KING:"), torch::kLong);       // (T)
//   const auto options =
//       g2c::sampling::GenerateOptions().temperature(0.8).top_k(20).generator(generator);
//   const auto ids = g2c::sampling::generate(model, prompt, /*max_new_tokens=*/300, options);
//   const auto* first = ids.data_ptr<std::int64_t>();  // a contiguous CPU int64 tensor (T')
//   std::cout << tokenizer.decode({first, first + ids.numel()});
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "g2c/core/torch.h"

#include "g2c/sampling/warpers.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::sampling {

/// How generate() picks each token. Builder style:
/// GenerateOptions().temperature(0.5).top_k(20).top_p(0.9).eos_id(0).generator(gen).
struct GenerateOptions {
  /// Softmax temperature: 1 is the model's own distribution, < 1 sharper, > 1 flatter;
  /// 0 is greedy decoding (argmax, deterministic, no warper and no draw).
  TORCH_ARG(double, temperature) = 1.0;
  /// Keep only the k most likely tokens (nullopt: no top-k).
  TORCH_ARG(std::optional<std::int64_t>, top_k) = std::nullopt;
  /// Keep the smallest set of most likely tokens holding probability p (nullopt: no top-p).
  TORCH_ARG(std::optional<double>, top_p) = std::nullopt;
  /// CTRL penalty on every id already in the sequence (prompt included); 1 = none.
  TORCH_ARG(double, repetition_penalty) = 1.0;
  /// Stop right after this id is generated (it is kept in the output).
  TORCH_ARG(std::optional<std::int64_t>, eos_id) = std::nullopt;
  /// A CPU generator for the draws (nullopt: LibTorch's default CPU generator). Shared, not
  /// copied: successive calls with the same options continue its stream.
  TORCH_ARG(std::optional<at::Generator>, generator) = std::nullopt;
};

/// One decoding step. logits (B, V) on the CPU (the last position's logits); history (T) or
/// (B, T), the ids so far, for the repetition penalty. temperature == 0: argmax of each row, no
/// warper. Otherwise repetition penalty -> temperature -> top-k -> top-p -> softmax -> one
/// multinomial draw per row with options.generator(). Returns (B) int64 ids.
/// Example: logits [[0, 9, 1]] with temperature 0 -> [1].
torch::Tensor sample_next_token(const torch::Tensor& logits, const torch::Tensor& history,
                                const GenerateOptions& options);

/// prompt_ids (T) int64 (on any device) followed by up to max_new_tokens generated ids: a 1-D
/// int64 CPU tensor, shorter only when options.eos_id() was generated (and kept). Each step feeds
/// the last max_seq_len ids (a longer sequence is cropped, never refused). No autograd: no graph
/// is built and no parameter gets a .grad. ValueError (before any forward) for the arguments
/// check_generate_arguments() refuses, e.g. "prompt_ids contain token ids outside the model vocab".
torch::Tensor generate(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& prompt_ids,
                       std::int64_t max_new_tokens,
                       const GenerateOptions& options = GenerateOptions());

/// generate() with the KV cache: the same arguments and the same tokens (greedy, or seeded with
/// the same generator state), at a cost per new token that grows linearly with the sequence
/// instead of quadratically. The cache has no rolling window: generation also stops when the
/// sequence reaches max_seq_len. ValueError, in addition to generate()'s, for max_new_tokens <= 0
/// and for a prompt of max_seq_len tokens or more (no free position left).
/// Example: prompt arange(10), 20 new tokens, max_seq_len 16 -> 16 ids.
/// `on_token`, when given, is called with each new id as soon as it is drawn, before the next
/// forward pass: a caller can show text while it is being generated.
torch::Tensor generate_cached(g2c::transformer::TransformerLMImpl& model,
                              const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                              const GenerateOptions& options = GenerateOptions(),
                              const std::function<void(std::int64_t)>& on_token = {});

class CachedScoringModel;  // g2c/sampling/logits_model.h

/// generate_cached() through any CachedScoringModel's own KV cache (SmolLM2, SmolLM2 with LoRA
/// adapters): the prompt in one pass, then one cached pass per new token, each drawn by
/// sample_next_token() with `options`. Stops after eos_id (kept) or when the sequence reaches the
/// model's max_seq_len. No autograd. ValueError as generate_cached()'s.
torch::Tensor generate_cached(CachedScoringModel& model, const torch::Tensor& prompt_ids,
                              std::int64_t max_new_tokens,
                              const GenerateOptions& options = GenerateOptions());

/// The same on the module holder: generate(model, ...) for a TransformerLM model.
inline torch::Tensor generate(g2c::transformer::TransformerLM& model,
                              const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                              const GenerateOptions& options = GenerateOptions()) {
  return generate(*model, prompt_ids, max_new_tokens, options);
}

inline torch::Tensor generate_cached(g2c::transformer::TransformerLM& model,
                                     const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                                     const GenerateOptions& options = GenerateOptions(),
                                     const std::function<void(std::int64_t)>& on_token = {}) {
  return generate_cached(*model, prompt_ids, max_new_tokens, options, on_token);
}

}  // namespace g2c::sampling
