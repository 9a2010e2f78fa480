// Beyond module specdec — your work: the two verification rules.
#include "g2c/specdec/verify.h"
#include "g2c/core/errors.h"

namespace g2c::specdec {

Verdict greedy_verify(const torch::Tensor& draft, const torch::Tensor& target_logits) {
  // TODO: the deterministic rule. check_draft_block(draft, target_logits, "target_logits") first.
  //   best = target_logits.argmax(-1)                 (k + 1)   the target's own choice per row
  //   n = 0; while n < k and draft[n] == best[n]: n += 1
  //   return {n, best[n]}    the correction at the first disagreement, or the bonus row k
  // Hints, one step at a time: scripts/hint.sh specdec greedy_verify
  throw g2c::todo("greedy_verify", "g2c/specdec/verify.cpp", "specdec");
}

Verdict speculative_verify(const torch::Tensor& draft, const torch::Tensor& target_probs,
                           const torch::Tensor& draft_probs,
                           std::optional<at::Generator> generator) {
  // TODO: the stochastic rule. check_draft_block(draft, target_probs, "target_probs", draft_probs).
  // For i in 0 .. k − 1, with x = draft[i]:
  //   ratio = p_t[i, x] / max(p_d[i, x], EPS);   u = one uniform draw in [0, 1) (torch::rand with
  //   the generator);  u < min(1, ratio): accepted, go on
  //   otherwise: residual = (p_t[i] − p_d[i]) clamped at 0   (V)   the mass the drafter
  //   under-served
  //              (all zero: use p_t[i] itself); return {i, one torch::multinomial draw from it}
  // Everything accepted: return {k, one multinomial draw from the bonus row p_t[k]}.
  // Hints, one step at a time: scripts/hint.sh specdec speculative_verify
  throw g2c::todo("speculative_verify", "g2c/specdec/verify.cpp", "specdec");
}

}  // namespace g2c::specdec
