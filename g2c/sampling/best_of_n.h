// Module 11 — best-of-n: spend compute at inference time. Draw n continuations of one prompt,
// score each by the model's own log-probability, keep the best.
//
// Dimension legend: T tokens of a sequence, P of them the prompt, V vocab_size.
// A language model scores text as well as it writes it: one forward pass over a finished
// sequence gives log p(token | prefix) for every token that actually came next (teacher forcing,
// the loss of modules 09b and 10 with the sign flipped and summed instead of averaged):
//   log_probs = log_softmax(model(ids)[0])          (T, V)   row t predicts token t + 1
//   score     = Σ_t log_probs[t, ids[t + 1]]         over the rows t = max(P - 1, 0) … T - 2
// so only the continuation counts: the prompt's own log-probability is the same for every
// candidate and would only add noise to the ranking.
// best_of_n() calls generate() n times with one generator, which each call advances (so the
// candidates differ), scores each, and returns the highest-scoring sequence with the whole pool.
// A raw sum favours short sequences (every token adds a negative term); length_normalize ranks by
// the mean log-probability per new token instead, the usual first fix (not a complete one).
//
// What is deliberately left out: batching the n candidates through one padded forward pass (the
// fast way, whose padding and masks would hide the idea), reward models, voting, beam search.
//
// Example:
//   auto generator = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/1);
//   const auto [best, pool] = g2c::sampling::best_of_n(
//       model, prompt, /*max_new_tokens=*/40, g2c::sampling::BestOfNOptions().n(8),
//       g2c::sampling::GenerateOptions().temperature(0.8).generator(generator));
//   pool[i].ids, pool[i].score   // each candidate (prompt included) and its log-probability
#pragma once

#include <cstdint>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/sampling/generate.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::sampling {

/// How best_of_n() picks. Builder style: BestOfNOptions().n(8).length_normalize(true). How each
/// candidate is drawn (temperature, top-k, top-p, penalty, EOS, the generator) is generate()'s
/// GenerateOptions, passed beside it.
struct BestOfNOptions {
  /// How many candidates to draw; >= 1.
  TORCH_ARG(std::int64_t, n) = 8;
  /// Rank by the mean log-probability per new token instead of the sum.
  TORCH_ARG(bool, length_normalize) = false;
};

/// One candidate of the pool: the whole sequence and its score.
struct ScoredSequence {
  torch::Tensor ids;   // (P + new) int64 on the CPU, the prompt included
  double score = 0.0;  // sequence_log_prob of the continuation (per new token when normalised)
};

/// What best_of_n() returns: `auto [best_ids, scored] = best_of_n(...)`.
struct BestOfNResult {
  torch::Tensor best_ids;              // the highest-scoring candidate's ids (the first on a tie)
  std::vector<ScoredSequence> scored;  // every candidate, in the order they were drawn
};

/// The total log-probability the model gives a finished sequence token_ids (T), int64, prompt
/// included: the sum of log_softmax(logits)[t, token_ids[t + 1]] over t = max(prompt_len - 1, 0)
/// … T - 2, i.e. the tokens at positions max(prompt_len, 1) … T - 1 (the first token has no
/// context, so it is never scored). Always <= 0; closer to 0 is more predictable. One forward
/// pass on the model's device, without autograd. ValueError (check_sequence_log_prob) for ids
/// that are not a 1-D integer tensor of at least 2 ids in [0, V) and at most max_seq_len of them,
/// and for a prompt_len < 0 or >= T (nothing left to score).
/// Example: ids [1, 4, 7, 2, 9], prompt_len 3 -> log p(2 | 1 4 7) + log p(9 | 1 4 7 2).
/// (Three modules score text this way, under the Python edition's three names, kept so a student
/// can read either edition: sequence_log_prob here, one token sequence through a model;
/// g2c::dpo::sequence_logprob, a masked batch of logits; g2c::eval::continuation_logprob, text.)
double sequence_log_prob(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& token_ids,
                         std::int64_t prompt_len = 0);

/// Draws options.n() continuations of prompt_ids (P) with generate(model, prompt_ids,
/// max_new_tokens, generate_options) — the same options, so the same generator, each call going
/// on from where the last one left it — scores each with sequence_log_prob(model, ids, P),
/// divided by the number of new tokens (at least 1) when options.length_normalize(), and returns
/// the best with the pool. Sampling must be random for this to mean anything: at temperature 0
/// every candidate is the same greedy text. ValueError (check_best_of_n, before anything is
/// generated) for n < 1, max_new_tokens < 1, and whatever generate() refuses.
/// Example: n 8 at temperature 1 -> 8 (ids, score) pairs and the ids of the largest score.
BestOfNResult best_of_n(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& prompt_ids,
                        std::int64_t max_new_tokens,
                        const BestOfNOptions& options = BestOfNOptions(),
                        const GenerateOptions& generate_options = GenerateOptions());

/// The same on the module holder.
inline double sequence_log_prob(g2c::transformer::TransformerLM& model,
                                const torch::Tensor& token_ids, std::int64_t prompt_len = 0) {
  return sequence_log_prob(*model, token_ids, prompt_len);
}

inline BestOfNResult best_of_n(g2c::transformer::TransformerLM& model,
                               const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                               const BestOfNOptions& options = BestOfNOptions(),
                               const GenerateOptions& generate_options = GenerateOptions()) {
  return best_of_n(*model, prompt_ids, max_new_tokens, options, generate_options);
}

}  // namespace g2c::sampling
