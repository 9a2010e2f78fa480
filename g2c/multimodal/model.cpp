// Beyond module multimodal — your work: the splice.
#include "g2c/multimodal/model.h"
#include "g2c/core/errors.h"

namespace g2c::multimodal {

torch::Tensor MultimodalLMImpl::forward(const torch::Tensor& ids, const torch::Tensor& images) {
  // clang-format off
  // TODO: embed, splice, and run the wrapped model's own pipeline.
  //   check_input(ids, images)
  //   all = images.dim() == 3 ? images.unsqueeze(1) : images     (B, N, H, W)
  //   patches = patch_embed(all.reshape({B * N, H, W}))           (B·N, P, D)
  //             .reshape({B, -1, D})                               (B, N·P, D): images in order
  //   tok  = lm->token_embed(ids)                                  (B, T, D)
  //   mask = ids == patch_token_id                                 (B, T) bool
  //   counts = mask.sum(1)                                         (B): check EVERY row equals
  //            patches.size(1) — throw g2c::ValueError naming the rows that do not
  //   tok = tok.clone(); tok.index_put_({mask}, patches.reshape({-1, D}))   the splice, row-major
  //   x = tok + lm->pos_embed(T); each of lm->blocks; then
  //   return g2c::transformer::tied_logits(x, lm->ln_final, lm->token_embed, lm->head_bias)  (B, T, V)
  // clang-format on
  // Hints, one step at a time: scripts/hint.sh multimodal MultimodalLM::forward
  throw g2c::todo("MultimodalLM::forward", "g2c/multimodal/model.cpp", "multimodal");
}

}  // namespace g2c::multimodal
