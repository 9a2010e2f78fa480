// What module 13's SFTTrainer and module 14's DPOTrainer share. Both are built on module 10's
// Trainer and give it their recipe (a TrainerOptions) with a context of max_seq_len - 1 inputs:
// their examples are max_seq_len ids, shifted by one into inputs and targets. Both draw each batch
// as whole examples, uniformly with replacement.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/torch.h"
#include "g2c/pretraining/trainer.h"

namespace g2c::pretraining {

/// The held Trainer's recipe: `recipe` with context_length = max_seq_len - 1. ValueError (the
/// Python edition's checks) for batch_size <= 0, and for max_seq_len <= 1, which would leave
/// nothing after the shift by one.
inline TrainerOptions fine_tuning_recipe(TrainerOptions recipe, std::int64_t max_seq_len) {
  if (recipe.batch_size() <= 0) {
    throw ValueError(fmt::format("batch_size must be positive, got {}", recipe.batch_size()));
  }
  if (max_seq_len <= 1) {
    throw ValueError(fmt::format(
        "max_seq_len must be > 1 so that the shift by one leaves something, got {}", max_seq_len));
  }
  return recipe.context_length(max_seq_len - 1);
}

/// `count` examples of `from`, drawn uniformly with replacement by `generator` (LibTorch's global
/// generator when unset). ValueError when `from` is empty.
template <typename Example>
std::vector<Example> draw_examples(const std::vector<Example>& from, std::int64_t count,
                                   const std::optional<at::Generator>& generator) {
  if (from.empty()) throw ValueError("cannot draw a batch from an empty list of examples");
  const auto picks =
      torch::randint(static_cast<std::int64_t>(from.size()), {count}, generator, torch::kLong);
  const auto* index = picks.data_ptr<std::int64_t>();
  std::vector<Example> drawn;
  drawn.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    drawn.push_back(from[static_cast<std::size_t>(index[i])]);
  return drawn;
}

}  // namespace g2c::pretraining
