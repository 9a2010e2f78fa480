// Module 06 — your work: the training loop.
#include "g2c/lm/training.h"

#include "g2c/core/errors.h"
#include "g2c/nn/losses.h"  // module 03's CrossEntropyLoss
#include "g2c/nn/optim.h"   // module 03's SGD

namespace g2c::lm {

TrainingRecord train_lm(LanguageModelImpl& model, const torch::Tensor& train_ids,
                        const std::optional<torch::Tensor>& val_ids,
                        const TrainLMOptions& options) {
  // TODO: check_training_arguments(...); move the model to resolve_device(options.device()); module
  // 03's g2c::nn::SGD over model.parameters(). Each step: get_batch, module 03's CrossEntropyLoss
  // of the logits, zero_grad, backward, step. When step % log_every == 0 or it is the last step,
  // record the step, the loss and (with val_ids) perplexity(model, *val_ids); call options.on_log()
  // if set.
  throw g2c::todo("train_lm", "g2c/lm/training.cpp", "06");
}

}  // namespace g2c::lm
