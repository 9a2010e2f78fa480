// Reference solution for g2c/multimodal/model.cpp: the splice.
#include <string>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/multimodal/model.h"

namespace g2c::multimodal {

torch::Tensor MultimodalLMImpl::forward(const torch::Tensor& ids, const torch::Tensor& images) {
  check_input(ids, images);
  const auto all = images.dim() == 3 ? images.unsqueeze(1) : images;  // (B, N, H, W)
  const auto B = all.size(0), N = all.size(1), H = all.size(2), W = all.size(3);
  const auto D = lm->embedding_dim;
  const auto patches = patch_embed(all.reshape({B * N, H, W})).reshape({B, -1, D});  // (B, N·P, D)

  auto tok = lm->token_embed(ids);          // (B, T, D)
  const auto mask = ids == patch_token_id;  // (B, T)
  // Row by row: a batch-wide total would let one row borrow another's placeholders.
  const auto counts = mask.sum(1);  // (B)
  const auto wrong = (counts != patches.size(1)).nonzero().flatten();
  if (wrong.numel() > 0) {
    const auto row = wrong[0].item<std::int64_t>();
    throw g2c::ValueError(fmt::format(
        "row {} holds {} <image_patch> placeholders but its {} image(s) give {} patches ({} row(s) "
        "wrong): every row needs exactly one placeholder per patch",
        row, counts[row].item<std::int64_t>(), N, patches.size(1), wrong.numel()));
  }
  tok = tok.clone();  // the splice writes into a copy: autograd keeps both paths
  tok.index_put_({mask}, patches.reshape({-1, D}));  // row-major: row 0's placeholders first

  auto x = tok + lm->pos_embed(ids.size(1));  // (B, T, D)
  for (auto& block : lm->blocks) x = block(x);
  return g2c::transformer::tied_logits(x, lm->ln_final, lm->token_embed, lm->head_bias);  // (B,T,V)
}

}  // namespace g2c::multimodal
