// Beyond module multimodal — your work: cutting images into patches, and embedding them.
#include "g2c/multimodal/patches.h"
#include "g2c/core/errors.h"

namespace g2c::multimodal {

torch::Tensor patchify(const torch::Tensor& images, std::int64_t patch_size) {
  // clang-format off
  // TODO: pure index arithmetic — no loops, no copies you did not ask for.
  //   check_patchable(images, patch_size)
  //   B, H, W = images' sizes;  p = patch_size;  gh = H / p;  gw = W / p
  //   x = images.reshape({B, gh, p, gw, p})     (batch, patch row, pixel row, patch col, pixel col)
  //   x = x.permute({0, 1, 3, 2, 4})            (batch, patch row, patch col, pixel row, pixel col)
  //   return x.reshape({B, gh * gw, p * p})     (B, N, p²)
  // Without the permute the reshape runs along pixel rows across patches: the shapes come out
  // right and every patch is wrong.
  // clang-format on
  // Hints, one step at a time: scripts/hint.sh multimodal patchify
  throw g2c::todo("patchify", "g2c/multimodal/patches.cpp", "multimodal");
}

torch::Tensor PatchEmbeddingImpl::forward(const torch::Tensor& images) {
  // TODO: (B, H, W) -> (B, N, D): patchify(images, patch_size), then proj. Nothing else: the
  // pixels arrive scaled already (scaling them again is the lesson's "normalise once" pitfall).
  // Hints, one step at a time: scripts/hint.sh multimodal PatchEmbedding::forward
  throw g2c::todo("PatchEmbedding::forward", "g2c/multimodal/patches.cpp", "multimodal");
}

}  // namespace g2c::multimodal
