// Beyond module specdec — the speculative decoding loop: draft, verify in one pass, keep the
// prefix.
//
// Dimension legend: T tokens so far, k draft length, V vocab_size, M the target's max_seq_len.
// Module 11 pays one target pass per token. This loop pays one drafter pass per drafted token and
// one target pass per block:
//   k_step = min(k, budget left)
//   draft  = draft_greedy(drafter, ids, k_step)                (k_step)   the cheap model's chain
//   ctx    = the last M − k_step ids; seq = ctx ++ draft       (1, T_ctx + k_step)
//   rows   = target(seq)[0, −(k_step + 1):]                    (k_step + 1, V)   one pass
//   {n, next} = greedy_verify(draft, rows)
//   emit draft[:n] ++ next, capped to the budget, cut after the first EOS (kept)
// plain greedy: N tokens in N target passes; speculative: about N / (E[accepted] + 1). SpecStats
// keeps that account; "tokens per target pass" is the number the exercises sweep. The wall clock is
// another question (each verify pass here recomputes the whole context, as module 11's generate
// does): measure both. speculative_generate_cached (cached.h) is the fast path with KV caches.
//
// The target must score every position (a ScoringModel); the drafter only needs its last row (any
// LogitsModel). Both must share the tokenizer: a draft id means nothing to a model whose
// vocabulary numbers tokens differently, so check_speculative_arguments refuses a drafter of
// another vocabulary size.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "g2c/core/torch.h"
#include "g2c/sampling/logits_model.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::specdec {

/// The account of one speculative run: one record() per target pass.
struct SpecStats {
  std::int64_t target_passes = 0;  // verification passes through the target
  std::int64_t drafted = 0;        // draft tokens proposed
  std::int64_t accepted = 0;       // draft tokens the target accepted
  std::int64_t generated = 0;      // tokens emitted (accepted + corrections + bonuses, after the
                                   // budget and EOS cuts)

  /// Adds one pass: target_passes += 1 and the three counts.
  void record(std::int64_t drafted_now, std::int64_t accepted_now, std::int64_t generated_now);
  /// Adds another run's counts: the account of several runs (prompts) together.
  SpecStats& operator+=(const SpecStats& other);
  /// accepted / drafted; 0 before anything was drafted.
  double acceptance_rate() const;
  /// generated / target_passes, the headline number (plain decoding scores 1); 0 before any pass.
  double tokens_per_pass() const;
};
std::ostream& operator<<(std::ostream& stream, const SpecStats& stats);

/// The ids (prompt then continuation, a 1-D int64 CPU tensor) and the account of the run.
struct SpeculativeResult {
  torch::Tensor ids;
  SpecStats stats;
};

/// k greedy steps of the drafter: each feeds the last max_seq_len() ids of ctx_ids (T) ++ what it
/// has drafted so far and takes the argmax of the last row. Returns (k) int64 on the CPU. No
/// autograd. Example: a drafter whose argmax after 3 is 5 and after 5 is 1, ctx [3], k 2 -> [5, 1].
torch::Tensor draft_greedy(g2c::sampling::LogitsModel& drafter, const torch::Tensor& ctx_ids,
                           std::int64_t k);

/// What speculative_generate checks before any pass, ValueError otherwise: the prompt 1-D,
/// non-empty, of integer ids in [0, V); k >= 1 and k < the target's max_seq_len (the context needs
/// a position beside the draft); max_new_tokens >= 0; eos_id in [0, V); the drafter's vocabulary
/// size equal to the target's.
void check_speculative_arguments(const g2c::sampling::ScoringModel& target,
                                 const g2c::sampling::LogitsModel& drafter,
                                 const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                                 std::int64_t k, std::optional<std::int64_t> eos_id);

/// Greedy speculative decoding: the drafter proposes, the target verifies (the loop above).
/// prompt_ids (T) -> {prompt ++ up to max_new_tokens ids, stats}. Inside the target's window the
/// ids equal module 11's generate(target, prompt, max_new_tokens, temperature 0), token for token,
/// whatever the drafter. No autograd.
SpeculativeResult speculative_generate(g2c::sampling::ScoringModel& target,
                                       g2c::sampling::LogitsModel& drafter,
                                       const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                                       std::int64_t k = 4,
                                       std::optional<std::int64_t> eos_id = std::nullopt);

/// The same for two of module 09's TransformerLMs.
inline SpeculativeResult speculative_generate(g2c::transformer::TransformerLM& target,
                                              g2c::transformer::TransformerLM& drafter,
                                              const torch::Tensor& prompt_ids,
                                              std::int64_t max_new_tokens, std::int64_t k = 4,
                                              std::optional<std::int64_t> eos_id = std::nullopt) {
  g2c::sampling::TransformerLogitsModel target_model(*target), drafter_model(*drafter);
  return speculative_generate(target_model, drafter_model, prompt_ids, max_new_tokens, k, eos_id);
}

}  // namespace g2c::specdec
