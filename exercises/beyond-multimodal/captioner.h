// What the multimodal programs share: the captioner of the lesson (module 09's TransformerLM behind
// MultimodalLM) trained from scratch with module 13's masked cross-entropy, and scored on the
// captions it *generates* — greedy, batched, from the placeholders and the image alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exercises/common/digits.h"
#include "exercises/common/proportion.h"
#include "g2c/core/torch.h"
#include "g2c/multimodal/model.h"

namespace g2c::exercises::multimodal {

struct CaptionerConfig {
  std::int64_t patch_size = 2;
  std::int64_t embedding_dim = 128, num_layers = 4, num_heads = 4, hidden_dim = 512;
  std::int64_t steps = 600, batch_size = 64, eval_every = 50, warmup_steps = 30;
  double lr = 1e-3, weight_decay = 0.01;
  double min_lr_ratio = 0.1;  // module 03b's cosine with warmup ends at lr · min_lr_ratio
  std::uint64_t seed = 0;     // the initialisation and the batch order
  /// A fixed order of the patches (a permutation of 0 .. N-1) applied to every image, train and
  /// test alike; empty: the images as they are.
  torch::Tensor patch_order;
};

struct CaptionerRun {
  std::vector<std::int64_t> eval_steps;
  std::vector<double> train_loss;     // at each eval step: the mean of the steps since the last
  std::vector<double> held_out_loss;  // masked loss on the held-out digits
  Proportion test;                    // generated captions whose digit is right
  std::int64_t no_digit = 0;          // generated captions without any digit
  torch::Tensor confusion;            // (10, 10) over the captions that name a digit
  std::vector<std::string> examples;  // the first held-out captions, decoded
  std::int64_t parameters = 0;
  double train_seconds = 0;
  nlohmann::json to_json() const;
};

/// Every image's patches reordered by `order` and put back into an image of the same size: the
/// same pixels, the spatial layout scrambled in the same way for every image.
torch::Tensor permute_patches(const torch::Tensor& images, std::int64_t patch_size,
                              const torch::Tensor& order);

/// Greedy captions for (B, H, W) images: the prompt is <img>, the placeholders, </img>; `length`
/// ids are generated, every row in one forward a step. (B, length) int64.
torch::Tensor generate_captions(g2c::multimodal::MultimodalLM& model, const torch::Tensor& images,
                                std::int64_t length = 6);

/// The digit a generated caption names first, or -1.
std::int64_t first_digit(const torch::Tensor& caption);

CaptionerRun train_captioner(const DigitSplit& split, const CaptionerConfig& config,
                             torch::Device device, bool quiet);

}  // namespace g2c::exercises::multimodal
