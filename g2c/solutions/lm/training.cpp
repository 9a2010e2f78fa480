// Module 06 — reference solution for g2c/lm/training.cpp.
#include "g2c/lm/training.h"

#include "g2c/lm/batching.h"
#include "g2c/lm/evaluation.h"
#include "g2c/nn/device.h"
#include "g2c/nn/losses.h"
#include "g2c/nn/optim.h"

namespace g2c::lm {

TrainingRecord train_lm(LanguageModelImpl& model, const torch::Tensor& train_ids,
                        const std::optional<torch::Tensor>& val_ids,
                        const TrainLMOptions& options) {
  check_training_arguments(model, train_ids, val_ids, options);
  const auto device = g2c::nn::resolve_device(options.device());
  model.to(device);
  const auto train = train_ids.to(device, torch::kLong);
  // Module 03's optimizer and loss: the loop is the same one that trained the MLP there.
  g2c::nn::SGD optimizer(model.parameters(), options.lr(), options.weight_decay());
  const g2c::nn::CrossEntropyLoss cross_entropy;

  TrainingRecord record;
  for (std::int64_t step = 0; step < options.num_steps(); ++step) {
    model.train();
    const auto batch =
        get_batch(train, model.context_length, options.batch_size(), options.generator());
    const auto loss = cross_entropy(model.logits(batch.x), batch.y);  // (b, V) -> scalar
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();

    if (step % options.log_every() == 0 || step == options.num_steps() - 1) {
      TrainLogEntry entry{step, loss.item<double>(), std::nullopt};
      if (val_ids) {
        model.eval();
        entry.val_perplexity =
            perplexity(model, *val_ids, options.eval_batch_size(), g2c::nn::device_name(device));
        record.val_perplexities.push_back(*entry.val_perplexity);
      }
      record.steps.push_back(step);
      record.train_losses.push_back(entry.train_loss);
      if (options.on_log()) {
        options.on_log()(entry);
      }
    }
  }
  return record;
}

}  // namespace g2c::lm
