// Beyond module multimodal — the provided half of model.h: construction, checks, the batch.
#include <vector>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/multimodal/model.h"

namespace g2c::multimodal {

MultimodalLMImpl::MultimodalLMImpl(g2c::transformer::TransformerLM lm_, std::int64_t patch_size,
                                   std::int64_t patch_token_id_)
    : patch_token_id(patch_token_id_) {
  if (!lm_) throw ValueError("MultimodalLM needs a TransformerLM, got an empty handle");
  if (patch_token_id < 0 || patch_token_id >= lm_->vocab_size) {
    throw ValueError(fmt::format("patch_token_id {} is not in the model's vocabulary (0..{})",
                                 patch_token_id, lm_->vocab_size - 1));
  }
  lm = register_module("lm", lm_);
  register_layer("patch_embed", patch_embed, PatchEmbedding(patch_size, lm->embedding_dim));
}

void MultimodalLMImpl::check_input(const torch::Tensor& ids, const torch::Tensor& images) const {
  lm->check_input(ids);
  if (ids.size(1) > lm->max_seq_len) {
    throw ValueError(fmt::format("the sequence has {} positions, max_seq_len is {}", ids.size(1),
                                 lm->max_seq_len));
  }
  if (!images.defined() || (images.dim() != 3 && images.dim() != 4) ||
      !images.is_floating_point()) {
    throw ValueError(
        fmt::format("MultimodalLM expects float images of shape (B, H, W) or (B, N, H, W); got {}",
                    images.defined() ? describe_shape(images) : "an undefined tensor"));
  }
  if (images.size(0) != ids.size(0)) {
    throw ValueError(fmt::format("{} rows of ids but {} of images: one row of images per sequence",
                                 ids.size(0), images.size(0)));
  }
}

CaptionBatch build_caption_batch(const torch::Tensor& images, const torch::Tensor& labels,
                                 std::int64_t patch_size, std::optional<std::int64_t> pad_to) {
  if (!images.defined() || images.dim() != 3) {
    throw ValueError(
        fmt::format("build_caption_batch expects images (B, H, W); got {}",
                    images.defined() ? describe_shape(images) : "an undefined tensor"));
  }
  if (!labels.defined() || labels.dim() != 1 || labels.size(0) != images.size(0) ||
      labels.is_floating_point()) {
    throw ValueError(
        fmt::format("labels must be (B) integer digits with B = {}; got {}", images.size(0),
                    labels.defined() ? describe_shape(labels) : "an undefined tensor"));
  }
  const auto scaled = images.scalar_type() == torch::kUInt8 ? images.to(torch::kFloat32) / 255.0
                                                            : images.to(torch::kFloat32);
  check_patchable(scaled, patch_size);
  const auto num_patches = (scaled.size(1) / patch_size) * (scaled.size(2) / patch_size);

  std::vector<std::vector<std::int64_t>> rows, masks;
  const auto label_values = labels.to(torch::kCPU, torch::kLong).contiguous();
  for (std::int64_t b = 0; b < label_values.size(0); ++b) {
    std::vector<std::int64_t> ids = {IMAGE_START_ID};
    ids.insert(ids.end(), static_cast<std::size_t>(num_patches), IMAGE_PATCH_ID);
    ids.push_back(IMAGE_END_ID);
    std::vector<std::int64_t> mask(ids.size(), 0);
    for (const auto id : caption_ids(label_values[b].item<std::int64_t>())) {
      ids.push_back(id);
      mask.push_back(1);
    }
    rows.push_back(std::move(ids));
    masks.push_back(std::move(mask));
  }
  std::size_t natural = 0;
  for (const auto& row : rows) natural = std::max(natural, row.size());
  const auto length = pad_to ? static_cast<std::size_t>(*pad_to) : natural;
  if (pad_to && *pad_to < static_cast<std::int64_t>(natural)) {
    throw ValueError(fmt::format("a row holds {} ids, more than pad_to = {}", natural, *pad_to));
  }
  const auto B = static_cast<std::int64_t>(rows.size());
  auto ids = torch::full({B, static_cast<std::int64_t>(length)}, PAD_ID, torch::kLong);
  auto mask = torch::zeros({B, static_cast<std::int64_t>(length)}, torch::kLong);
  for (std::int64_t b = 0; b < B; ++b) {
    const auto n = static_cast<std::int64_t>(rows[b].size());
    ids[b].narrow(0, 0, n).copy_(torch::tensor(rows[b], torch::kLong));
    mask[b].narrow(0, 0, n).copy_(torch::tensor(masks[b], torch::kLong));
  }
  const auto T = static_cast<std::int64_t>(length);
  return {ids.narrow(1, 0, T - 1), scaled, ids.narrow(1, 1, T - 1), mask.narrow(1, 1, T - 1)};
}

}  // namespace g2c::multimodal
