// Beyond module multimodal — MultimodalLM: patch vectors spliced into module 09's TransformerLM,
// unmodified.
//
// The transformer needs no change to read images: it reads vectors. The token sequence holds one
// placeholder id (<image_patch>) per patch, between <img> and </img>; the embedding rows at the
// placeholders are overwritten with the patch vectors, and the model's own pipeline runs on:
//
//   ids (B, T), images (B, H, W) or (B, N, H, W)
//   patches = patch_embed(every image, in order)     (B, N·num_patches, D)
//   tok     = lm->token_embed(ids)                   (B, T, D)
//   tok[ids == <image_patch>] = patches, row-major   the splice: same length, same positions
//   x = tok + lm->pos_embed(T); the blocks; ln_final; tied head + head_bias   -> (B, T, V)
//
// Because every image costs exactly num_patches placeholders, no length changes and no position
// or loss mask moves: the splice is a one-to-one masked overwrite. The loss mask makes the image
// positions inputs only (build_caption_batch). MultimodalLM::forward is yours
// (g2c/multimodal/model.cpp); the rest is provided.
#pragma once

#include <cstdint>
#include <optional>

#include "g2c/core/torch.h"
#include "g2c/multimodal/patches.h"
#include "g2c/multimodal/vocab.h"
#include "g2c/nn/module.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::multimodal {

class MultimodalLMImpl : public g2c::nn::Module {
 public:
  /// `lm` unmodified (its vocabulary must hold `patch_token_id`) and a PatchEmbedding(patch_size,
  /// lm->embedding_dim). Parameters: lm's, then the projection's. ValueError for a patch_token_id
  /// outside lm's vocabulary.
  MultimodalLMImpl(g2c::transformer::TransformerLM lm, std::int64_t patch_size,
                   std::int64_t patch_token_id = IMAGE_PATCH_ID);

  std::int64_t max_seq_len() const { return lm->max_seq_len; }

  /// The checks forward starts with: ids a 2-D (B, T) integer tensor of the vocabulary's ids,
  /// T <= max_seq_len; images (B, H, W) or (B, N, H, W) floating point with ids' B. ValueError
  /// naming the shapes. (The placeholder count per row is forward's own check.)
  void check_input(const torch::Tensor& ids, const torch::Tensor& images) const;

  /// Your work: ids (B, T) and images (B, H, W) or (B, N, H, W) -> logits (B, T, V). Every row
  /// must hold exactly N·num_patches placeholders, checked row by row (ValueError naming the
  /// rows): a batch-wide total lets one row's missing placeholder be filled by another's extra.
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& images);
  torch::Tensor operator()(const torch::Tensor& ids, const torch::Tensor& images) {
    return forward(ids, images);
  }

  g2c::transformer::TransformerLM lm{nullptr};
  PatchEmbedding patch_embed{nullptr};
  std::int64_t patch_token_id;
};
TORCH_MODULE(MultimodalLM);

/// One captioning batch, module 13's shift and mask applied.
struct CaptionBatch {
  torch::Tensor x;          // (B, T-1) int64: the ids without the last
  torch::Tensor images;     // (B, H, W) float32 in [0, 1] for uint8 input
  torch::Tensor y;          // (B, T-1) int64: the ids without the first
  torch::Tensor loss_mask;  // (B, T-1) int64: 1 exactly where y is a caption token
};

/// Per image: [<img>] + [<image_patch>] × (H/p)(W/p) + [</img>] + caption_ids(label), padded with
/// <pad> (mask 0) to `pad_to` or the natural length; then x = ids[:, :-1], y = ids[:, 1:],
/// loss_mask = mask[:, 1:] (the six caption targets of a row). uint8 images are scaled by 1/255
/// here, the one place pixels are scaled; float images are taken as they are (as float32).
/// ValueError for images that are not (B, H, W), labels not (B) of digits, a patch size that does
/// not tile the images, or a row longer than pad_to.
CaptionBatch build_caption_batch(const torch::Tensor& images, const torch::Tensor& labels,
                                 std::int64_t patch_size,
                                 std::optional<std::int64_t> pad_to = std::nullopt);

}  // namespace g2c::multimodal
