// Module 06 — your work: the training loop.
#include "g2c/lm/training.h"

#include "g2c/core/errors.h"
#include "g2c/lm/batching.h"
#include "g2c/lm/evaluation.h"
#include "g2c/nn/device.h"
#include "g2c/nn/losses.h"  // module 03's CrossEntropyLoss
#include "g2c/nn/optim.h"   // module 03's SGD

namespace g2c::lm {

TrainingRecord train_lm(LanguageModelImpl& model, const torch::Tensor& train_ids,
                        const std::optional<torch::Tensor>& val_ids,
                        const TrainLMOptions& options) {
  // TODO: Module 03's loop for language models: random windows of the training stream (get_batch),
  // module 03's cross-entropy and SGD (lr, weight_decay), on the resolved device. At every
  // log_every-th step and the last, record the step and loss and — with validation ids, evaluated
  // in eval mode — the validation perplexity, and call on_log if set; train mode again for the next
  // step. Check the arguments first (check_training_arguments).
  // Hints, one step at a time: scripts/hint.sh 06 train_lm
  throw g2c::todo("train_lm", "g2c/lm/training.cpp", "06");
}

}  // namespace g2c::lm
