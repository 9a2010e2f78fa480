// Beyond module multimodal — the provided half of patches.h: the checks and the construction.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/multimodal/patches.h"

namespace g2c::multimodal {

void check_patchable(const torch::Tensor& images, std::int64_t patch_size) {
  if (!images.defined() || images.dim() != 3) {
    throw ValueError(
        fmt::format("patchify expects images of shape (B, H, W); got {}",
                    images.defined() ? describe_shape(images) : "an undefined tensor"));
  }
  if (!images.is_floating_point()) {
    throw ValueError(fmt::format(
        "patchify expects floating-point pixels (build_caption_batch scales uint8 to [0, 1]); "
        "got {}",
        c10::toString(images.scalar_type())));
  }
  if (patch_size <= 0) {
    throw ValueError(fmt::format("patch_size must be > 0, got {}", patch_size));
  }
  const auto height = images.size(1), width = images.size(2);
  if (height % patch_size != 0 || width % patch_size != 0) {
    throw ValueError(fmt::format(
        "patch_size {} does not divide the {} × {} images: pick a patch size that divides both "
        "sides (the patches must tile the image exactly)",
        patch_size, height, width));
  }
}

PatchEmbeddingImpl::PatchEmbeddingImpl(std::int64_t patch_size_, std::int64_t embedding_dim_)
    : patch_size(patch_size_), embedding_dim(embedding_dim_) {
  if (patch_size <= 0 || embedding_dim <= 0) {
    throw ValueError(
        fmt::format("PatchEmbedding needs patch_size > 0 and embedding_dim > 0, got "
                    "{} and {}",
                    patch_size, embedding_dim));
  }
  register_layer("proj", proj, g2c::nn::Linear(patch_size * patch_size, embedding_dim));
}

std::int64_t PatchEmbeddingImpl::num_patches(std::int64_t height, std::int64_t width) const {
  return (height / patch_size) * (width / patch_size);
}

}  // namespace g2c::multimodal
