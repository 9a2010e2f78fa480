// Module 11 — your work: scoring a sequence, and best-of-n.
#include "g2c/sampling/best_of_n.h"

#include <algorithm>

#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"

namespace g2c::sampling {

double sequence_log_prob(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& token_ids,
                         std::int64_t prompt_len) {
  // TODO: The model's total log-probability of a finished sequence (T), by teacher forcing:
  // one forward pass of the whole sequence as a batch of one on the model's device,
  // (1, T) -> (1, T, V), then log_softmax over V, (T, V). Row t predicts token t + 1 (the
  // alignment of the LM loss), so score = Σ log_probs[t, ids[t + 1]] over
  // t = max(prompt_len - 1, 0) … T - 2: the last row has nothing after it, and the prompt's tokens
  // stay out. A double; autograd off; check the arguments first (check_sequence_log_prob).
  // Operations: log_softmax, narrow, gather, sum.
  // Hints, one step at a time: scripts/hint.sh 11 sequence_log_prob
  throw g2c::todo("sequence_log_prob", "g2c/sampling/best_of_n.cpp", "11");
}

BestOfNResult best_of_n(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& prompt_ids,
                        std::int64_t max_new_tokens, const BestOfNOptions& options,
                        const GenerateOptions& generate_options) {
  // TODO: options.n() candidates, each a call of your generate with generate_options — the same
  // generator every time, so each call draws new numbers and the candidates differ. Score each by
  // sequence_log_prob with prompt_len = P, the prompt's length (only the continuation counts); with
  // options.length_normalize() divide by its number of new tokens, T - P (at least 1). Return the
  // pool {ids, score} in drawing order and the ids of the highest score (the first on a tie). Check
  // the arguments first (check_best_of_n). Operations: a loop, std::max_element.
  // Hints, one step at a time: scripts/hint.sh 11 best_of_n
  throw g2c::todo("best_of_n", "g2c/sampling/best_of_n.cpp", "11");
}

}  // namespace g2c::sampling
