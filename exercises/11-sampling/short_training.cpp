#include "exercises/11-sampling/short_training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/pretraining/trainer.h"

namespace g2c::exercises {

nlohmann::json train_briefly(g2c::transformer::TransformerLM& model, const Corpus& corpus,
                             const ShortTraining& settings, const CommonOptions& options,
                             const torch::Device& device) {
  using g2c::pretraining::TrainerOptions;
  const auto warmup = std::min<std::int64_t>(30, options.steps / 10);
  g2c::pretraining::Trainer trainer(
      model,
      TrainerOptions(settings.batch_size, settings.context_length, options.steps, settings.lr)
          .min_lr(settings.lr / 10)
          .warmup_steps(warmup)
          .weight_decay(settings.weight_decay)
          .grad_clip(1.0)
          .eval_every(settings.log_every)
          .eval_iters(10)
          .log_every(settings.log_every)
          .generator(at::make_generator<at::CPUGeneratorImpl>(options.seed + 1))
          .device(device.str())
          .optimizer("adamw"));
  std::fflush(stdout);  // the lines above before the progress line, in a log file too
  g2c::Progress progress("training", options.steps, !options.quiet);
  const auto start = std::chrono::steady_clock::now();
  const auto history = trainer.train(
      corpus.train,
      g2c::pretraining::RunOptions()
          .val_ids(corpus.val)
          .on_log([&](const g2c::pretraining::LogEvent& event) {
            if (!std::isfinite(event.train_loss)) {
              throw g2c::TrainingDiverged(fmt::format(
                  "the training loss stopped being finite at step {} (lr {:.2e}, grad norm {}); "
                  "check g2c/pretraining/trainer.cpp and g2c/transformer/, or lower the rate",
                  event.step, event.lr, event.grad_norm));
            }
            std::string metrics = fmt::format("loss {:.3f}", event.train_loss);
            if (event.val_loss) metrics += fmt::format(" val {:.3f}", *event.val_loss);
            progress.update(event.step + 1, metrics);
          }));
  progress.finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double val_loss = history.val_loss.empty() ? NAN : history.val_loss.back();
  return {{"steps", history.step},
          {"train_loss", history.train_loss},
          {"lr", history.lr},
          {"val_loss", val_loss},
          {"val_steps", history.val_step},
          {"val_curve", history.val_loss},
          {"warmup_steps", warmup},
          {"seconds", seconds}};
}

std::vector<std::int64_t> ids_vector(const torch::Tensor& ids) {
  const auto flat = ids.to(torch::kCPU, torch::kLong).contiguous();
  return {flat.data_ptr<std::int64_t>(), flat.data_ptr<std::int64_t>() + flat.numel()};
}

}  // namespace g2c::exercises
