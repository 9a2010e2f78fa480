// Beyond module specdec — verification, the half of speculative decoding that makes it lossless.
//
// Dimension legend: k draft length, V vocab_size.
// Module 11 pays one target pass per token because each token depends on the one before. A cheap
// drafter guesses k tokens ahead; the target scores all of them in ONE pass (teacher forcing gives
// every position's logits at once, module 06's fact, cashed in at decode time). Row i of that
// pass predicts draft position i; row k predicts the token after the whole block (the bonus).
//   greedy_verify       accept while draft[i] == argmax(row i); then take argmax(row n): the
//                       correction at the first disagreement, or the bonus after a full block.
//                       Emits exactly what greedy decoding emits, in fewer target passes.
//   speculative_verify  accept draft[i] with probability min(1, p_t(x) / p_d(x)); at the first
//                       rejection draw from the leftover mass (p_t − p_d)⁺, normalised. Each
//                       emitted token is then distributed exactly as the target's p_t, however bad
//                       the drafter: its quality changes the speed, never the distribution.
// Both advance by n_accepted + 1 tokens per target pass.
#pragma once

#include <cstdint>
#include <optional>

#include "g2c/core/torch.h"

namespace g2c::specdec {

/// The floor under the drafter's probability in the acceptance ratio: a draft token the drafter
/// gave ~0 cannot make the ratio infinite.
inline constexpr double EPS = 1e-10;

/// What a verification returns: the accepted prefix's length n in [0, k] and the one token the
/// target adds after it (the correction, or the bonus when n == k).
struct Verdict {
  std::int64_t n_accepted = 0;
  std::int64_t next_token = 0;
  bool operator==(const Verdict&) const = default;
};

/// ValueError unless draft is 1-D and non-empty (k) and target_rows has k + 1 rows (the (k + 1, V)
/// contract; `what` names the target's tensor in the message). With draft_probs: it must be (k, V)
/// with the target's V.
void check_draft_block(const torch::Tensor& draft, const torch::Tensor& target_rows,
                       const char* what, const std::optional<torch::Tensor>& draft_probs = {});

/// Deterministic verification. draft (k) int64, target_logits (k + 1, V) -> {n, argmax of row n}.
/// Example: draft [2, 4, 6, 3] against rows whose argmaxes are [2, 4, 5, 3, 0] -> {2, 5}.
Verdict greedy_verify(const torch::Tensor& draft, const torch::Tensor& target_logits);

/// Stochastic verification. draft (k) int64 sampled by the drafter from draft_probs (k, V);
/// target_probs (k + 1, V) the target's probability rows (after any warping). One uniform draw per
/// position and one multinomial draw at the end, from `generator` (a CPU generator; nullopt:
/// LibTorch's default one).
Verdict speculative_verify(const torch::Tensor& draft, const torch::Tensor& target_probs,
                           const torch::Tensor& draft_probs,
                           std::optional<at::Generator> generator = std::nullopt);

}  // namespace g2c::specdec
