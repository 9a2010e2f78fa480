// Beyond module specdec, implemented for you — the named fast path: speculative decoding with KV
// caches.
//
// The lesson's loop (generate.h) recomputes the whole context in every target pass and every
// drafter step, as module 11's generate does. Here target and drafter each keep a KV cache:
//   draft    the drafter's cache takes what it lacks of ids (the prompt at first, afterwards the
//            last emitted tokens) in one pass, then one drafted token per step
//   verify   the target's cache takes what it lacks of ids and the k draft tokens in ONE pass ->
//            the k + 1 rows, verified by greedy_verify's rule on their argmaxes (read in one copy)
//   rollback both caches truncate to the positions that stayed true (KVCache::truncate): the
//            accepted prefix survives; rejected draft tokens leave no trace
// The ids are the lesson's, token for token (tests/framework/specdec_checks.cpp proves it, and
// equality with module 11's greedy generate); only the cost changes. A cache has no rolling window:
// prompt and continuation must fit both models' max_seq_len. The drafter may also be any Drafter
// (drafter.h), prompt lookup for one: it proposes up to k ids, and a pass with no proposal is a
// plain greedy step.
#pragma once

#include <cstdint>
#include <optional>

#include "g2c/core/torch.h"
#include "g2c/sampling/logits_model.h"
#include "g2c/specdec/drafter.h"
#include "g2c/specdec/generate.h"

namespace g2c::specdec {

/// speculative_generate with both models' caches: the same arguments, ids and stats (greedy).
/// ValueError, beyond check_speculative_arguments', when the prompt plus max_new_tokens would pass
/// either model's max_seq_len (use speculative_generate, which crops, for longer runs).
SpeculativeResult speculative_generate_cached(g2c::sampling::CachedScoringModel& target,
                                              g2c::sampling::CachedScoringModel& drafter,
                                              const torch::Tensor& prompt_ids,
                                              std::int64_t max_new_tokens, std::int64_t k = 4,
                                              std::optional<std::int64_t> eos_id = std::nullopt);

/// The same with a Drafter: each pass verifies what drafter.propose(ids, k) returned (up to k ids;
/// none makes it a plain step), then rolls the drafter back with the target. Stats count the ids
/// proposed. ValueError as above for the arguments and the target's window.
SpeculativeResult speculative_generate_cached(g2c::sampling::CachedScoringModel& target,
                                              Drafter& drafter, const torch::Tensor& prompt_ids,
                                              std::int64_t max_new_tokens, std::int64_t k = 4,
                                              std::optional<std::int64_t> eos_id = std::nullopt);

/// Plain greedy decoding through the same cache and kernels, one target pass per token: the
/// baseline the fast path is timed against (like with like). prompt_ids (T) -> prompt ++ up to
/// max_new_tokens ids (cut after eos_id, kept); the ids of module 11's greedy generate inside the
/// window. ValueError as speculative_generate_cached for a run past the window.
torch::Tensor greedy_generate_cached(g2c::sampling::CachedScoringModel& model,
                                     const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                                     std::optional<std::int64_t> eos_id = std::nullopt);

/// The same for two of module 09's TransformerLMs.
inline SpeculativeResult speculative_generate_cached(
    g2c::transformer::TransformerLM& target, g2c::transformer::TransformerLM& drafter,
    const torch::Tensor& prompt_ids, std::int64_t max_new_tokens, std::int64_t k = 4,
    std::optional<std::int64_t> eos_id = std::nullopt) {
  g2c::sampling::TransformerLogitsModel target_model(*target), drafter_model(*drafter);
  return speculative_generate_cached(target_model, drafter_model, prompt_ids, max_new_tokens, k,
                                     eos_id);
}

}  // namespace g2c::specdec
