// What the module 10 framework checks share: a tiny TransformerLM, trainer options that exercise
// everything a checkpoint restores, and a temporary folder per check.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <torch/torch.h>
#include <unistd.h>

#include "g2c/pretraining/trainer.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::testing {

/// TransformerLM(V 12, D embedding_dim, L 1, H 2, T 16) with weights drawn from `seed`.
inline g2c::transformer::TransformerLM model_with_seed(std::uint64_t seed,
                                                       std::int64_t embedding_dim = 8) {
  torch::manual_seed(seed);
  return g2c::transformer::TransformerLM(g2c::transformer::TransformerLMOptions(
      /*vocab_size=*/12, embedding_dim, /*num_layers=*/1, /*num_heads=*/2, /*max_seq_len=*/16));
}

/// AdamW with warmup, cosine, clipping and its own batch generator: everything a resume restores.
inline g2c::pretraining::TrainerOptions resumable_options(std::int64_t max_steps) {
  return g2c::pretraining::TrainerOptions(/*batch_size=*/4, /*context_length=*/6, max_steps,
                                          /*max_lr=*/3e-2)
      .min_lr(1e-3)
      .warmup_steps(3)
      .weight_decay(0.01)
      .grad_clip(0.5)
      .eval_every(4)
      .eval_iters(2)
      .log_every(1)
      .optimizer("adamw")
      .device("cpu")
      .generator(at::make_generator<at::CPUGeneratorImpl>(7));
}

/// An empty folder of its own under the system's temporary folder.
inline std::filesystem::path temporary_folder(const std::string& name) {
  const auto folder = std::filesystem::temp_directory_path() /
                      ("g2c-framework-pretraining-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

}  // namespace g2c::testing
