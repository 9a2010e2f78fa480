// Beyond module specdec — your work: the MTP head's forward and its loss.
#include "g2c/specdec/mtp.h"
#include "g2c/core/errors.h"

namespace g2c::specdec {

torch::Tensor MTPHeadImpl::forward(const torch::Tensor& hidden, const torch::Tensor& next_ids) {
  // TODO: predict two ahead. check_inputs(hidden, next_ids) first.
  //   e = base->token_embed(next_ids)                          (B, T', D)
  //   h = combine(torch::cat({hidden, e}, -1))                 (B, T', 2D) -> (B, T', D)
  //   h = ln(block(h))                                         (B, T', D)
  //   return h · base->token_embed->weightᵀ + head_bias        (B, T', V)  the tied unembedding
  // Hints, one step at a time: scripts/hint.sh specdec MTPHead::forward
  throw g2c::todo("MTPHead::forward", "g2c/specdec/mtp.cpp", "specdec");
}

torch::Tensor mtp_loss(const torch::Tensor& mtp_logits, const torch::Tensor& ids) {
  // TODO: the two-ahead cross-entropy. check_mtp_loss_inputs(mtp_logits, ids) first.
  //   logits  = mtp_logits[:, :-1, :]      (B, T−2, V)   the last row has no target
  //   targets = ids[:, 2:]                 (B, T−2)      row t predicts ids[:, t + 2]
  //   loss    = mean over the B·(T−2) positions of −log softmax(logits)[target]
  // Written out with log_softmax and gather, as module 06 wrote the cross-entropy.
  // Hints, one step at a time: scripts/hint.sh specdec mtp_loss
  throw g2c::todo("mtp_loss", "g2c/specdec/mtp.cpp", "specdec");
}

}  // namespace g2c::specdec
