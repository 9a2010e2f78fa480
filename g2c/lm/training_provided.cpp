#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/lm/batching.h"
#include "g2c/lm/training.h"

namespace g2c::lm {

void check_training_arguments(const LanguageModelImpl& model, const torch::Tensor& train_ids,
                              const std::optional<torch::Tensor>& val_ids,
                              const TrainLMOptions& options) {
  if (!model.trainable()) {
    throw ValueError(
        fmt::format("{} has no trainable parameters; a counts model is trained with "
                    "fit(ids), not train_lm",
                    model.name()));
  }
  if (options.batch_size() < 1 || options.num_steps() < 1 || options.log_every() < 1 ||
      options.eval_batch_size() < 1) {
    throw ValueError(fmt::format(
        "train_lm needs batch_size, num_steps, log_every and "
        "eval_batch_size >= 1, got {}, {}, {} and {}",
        options.batch_size(), options.num_steps(), options.log_every(), options.eval_batch_size()));
  }
  if (!(options.lr() > 0.0) || !(options.weight_decay() >= 0.0)) {
    throw ValueError(fmt::format("train_lm needs lr > 0 and weight_decay >= 0, got {} and {}",
                                 options.lr(), options.weight_decay()));
  }
  check_stream(train_ids, model.context_length, "train_ids");
  if (val_ids) {
    check_stream(*val_ids, model.context_length, "val_ids");
  }
}

}  // namespace g2c::lm
