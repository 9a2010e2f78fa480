// Beyond module multimodal — patches: the tokenizer for images.
//
// Module 04 cut text into pieces a model can embed. The field's answer for images (ViT) is
// simpler: cut the pixel grid into p × p squares, flatten each square, and project it to the
// model's width with one learned Linear. The projection plays the embedding table's part, with one
// difference: there is no vocabulary. A patch is transformed, not looked up.
//
//   images (B, H, W) -> reshape (B, H/p, p, W/p, p)      patch row, pixel row, patch col, pixel col
//                    -> permute (0, 1, 3, 2, 4)          grid axes together, pixel axes together
//                    -> reshape (B, (H/p)(W/p), p²)      patch r·(W/p) + c, its pixels row-major
//   PatchEmbedding: patchify, then proj = Linear(p², D): (B, N, p²) -> (B, N, D)
//
// patchify and PatchEmbedding::forward are yours (g2c/multimodal/patches.cpp).
#pragma once

#include <cstdint>

#include "g2c/core/torch.h"
#include "g2c/nn/linear.h"
#include "g2c/nn/module.h"

namespace g2c::multimodal {

/// The checks patchify starts with: images a 3-D (B, H, W) floating-point tensor, p > 0, and p
/// dividing both H and W. ValueError saying which, with the shape.
void check_patchable(const torch::Tensor& images, std::int64_t patch_size);

/// Your work: images (B, H, W) -> (B, (H/p)·(W/p), p²). Patches row-major over the grid (the patch
/// at grid row r, column c is number r·(W/p) + c), pixels row-major within a patch. ValueError
/// (check_patchable) when p does not divide H and W. Example: a 4 × 4 image of 0..15 in 2 × 2
/// patches -> [0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15].
torch::Tensor patchify(const torch::Tensor& images, std::int64_t patch_size);

class PatchEmbeddingImpl : public g2c::nn::Module {
 public:
  /// ValueError for a non-positive patch_size or embedding_dim.
  PatchEmbeddingImpl(std::int64_t patch_size, std::int64_t embedding_dim);

  /// How many patches an image of height × width gives: (height / p) · (width / p).
  std::int64_t num_patches(std::int64_t height, std::int64_t width) const;

  /// Your work: images (B, H, W), already scaled to [0, 1] (build_caption_batch is the one place
  /// that scales) -> (B, N, D): patchify, then proj.
  torch::Tensor forward(const torch::Tensor& images) override;

  std::int64_t patch_size;
  std::int64_t embedding_dim;
  g2c::nn::Linear proj{nullptr};  // Linear(p², D): W (p², D), b (D)
};
TORCH_MODULE(PatchEmbedding);

}  // namespace g2c::multimodal
