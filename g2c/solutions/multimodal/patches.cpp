// Reference solution for g2c/multimodal/patches.cpp: patchify and the patch embedding.
#include "g2c/multimodal/patches.h"

namespace g2c::multimodal {

torch::Tensor patchify(const torch::Tensor& images, std::int64_t patch_size) {
  check_patchable(images, patch_size);
  const auto B = images.size(0), p = patch_size;
  const auto gh = images.size(1) / p, gw = images.size(2) / p;
  return images
      .reshape({B, gh, p, gw, p})     // (B, patch row, pixel row, patch col, pixel col)
      .permute({0, 1, 3, 2, 4})       // (B, patch row, patch col, pixel row, pixel col)
      .reshape({B, gh * gw, p * p});  // (B, N, p²)
}

torch::Tensor PatchEmbeddingImpl::forward(const torch::Tensor& images) {
  return proj(patchify(images, patch_size));  // (B, N, p²) -> (B, N, D)
}

}  // namespace g2c::multimodal
