// What the module 11 programs share: the short training run that gives them a real next-token
// distribution to decode from, through module 10's Trainer (never a loop of their own).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "exercises/common/cli.h"
#include "exercises/common/corpus.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::exercises {

/// The Trainer's settings of a short run.
struct ShortTraining {
  std::int64_t batch_size = 16;
  std::int64_t context_length = 64;  // the window length, at most the model's max_seq_len
  double lr = 3e-3;                  // AdamW's peak; a short run needs a brisk rate
  double weight_decay = 0.01;
  std::int64_t log_every = 50;  // also how often the validation loss is measured
};

/// Trains `model` for options.steps steps through module 10's Trainer: AdamW, a warmup of a tenth
/// of the run (at most 30 steps) then a cosine from lr to a tenth of it, clipping at 1.0, random
/// next-token windows of the corpus's training ids, the validation loss every log_every steps,
/// with a progress line. Throws TrainingDiverged at a non-finite loss. Returns the logged curves
/// ({steps, train_loss, lr, val_loss (the last), val_steps, val_curve, warmup_steps, seconds}).
nlohmann::json train_briefly(g2c::transformer::TransformerLM& model, const Corpus& corpus,
                             const ShortTraining& settings, const CommonOptions& options,
                             const torch::Device& device);

/// A tensor of ids (any shape, any device) as a flat vector.
std::vector<std::int64_t> ids_vector(const torch::Tensor& ids);

}  // namespace g2c::exercises
