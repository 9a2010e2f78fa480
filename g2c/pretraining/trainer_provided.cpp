#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/nn/device.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/loss.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/training/schedule.h"

namespace g2c::pretraining {

namespace {

nlohmann::json finite_or_null(const std::vector<double>& values) {
  auto out = nlohmann::json::array();
  for (const double value : values) {
    out.push_back(std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr));
  }
  return out;
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

nlohmann::json TrainingHistory::to_json() const {
  return {{"step", step},
          {"train_loss", finite_or_null(train_loss)},
          {"lr", finite_or_null(lr)},
          {"grad_norm", finite_or_null(grad_norm)},
          {"val_step", val_step},
          {"val_loss", finite_or_null(val_loss)}};
}

TrainingHistory empty_training_history() {
  return {};
}

Trainer::Trainer(std::shared_ptr<g2c::nn::Module> model_, TrainerOptions options_)
    : model(std::move(model_)),
      options(std::move(options_)),
      device(g2c::nn::resolve_device(options.device())),
      optimizer_name(lowercase(options.optimizer())) {
  if (!model) throw ValueError("Trainer needs a model, got a null pointer");
  if (optimizer_name != "sgd" && optimizer_name != "adamw") {
    throw ValueError(
        fmt::format("optimizer must be 'sgd' or 'adamw', got '{}'", options.optimizer()));
  }
  // Move first: the optimizer holds the parameter tensors themselves (and AdamW creates m and v
  // beside them), so it must see them where they will live. It gets only the parameters that
  // require gradients: a frozen one (LoRA's base weights, module 13b) is never updated, so AdamW
  // keeps no moments for it — that is where LoRA's optimizer memory saving comes from.
  model->to(device);
  std::vector<torch::Tensor> trainable;
  for (const auto& p : model->parameters()) {
    if (p.requires_grad()) trainable.push_back(p);
  }
  if (trainable.empty()) {
    throw ValueError(
        "Trainer has nothing to train: every parameter of the model has requires_grad false "
        "(freeze only part of it, e.g. with mark_only_lora_trainable after inject_lora)");
  }
  optimizer = g2c::nn::make_optimizer(optimizer_name, std::move(trainable), options.max_lr(),
                                      options.weight_decay(), options.fused_kernels());
}

double Trainer::lr(std::int64_t at_step) const {
  return g2c::training::cosine_with_warmup(at_step, options.warmup_steps(), options.max_steps(),
                                           options.max_lr(), options.min_lr());
}

double Trainer::evaluate(const torch::Tensor& ids) {
  if (options.eval_iters() < 1) {
    throw ValueError(fmt::format("evaluate needs eval_iters >= 1, got {}", options.eval_iters()));
  }
  torch::NoGradGuard no_grad;
  double total = 0.0;
  for (std::int64_t i = 0; i < options.eval_iters(); ++i) {
    const auto batch =
        get_lm_batch(ids, options.batch_size(), options.context_length(), options.generator());
    const auto logits = model->forward(batch.x.to(device));
    total += lm_cross_entropy(logits, batch.y.to(device)).item<double>();
  }
  return total / static_cast<double>(options.eval_iters());
}

TrainingHistory Trainer::train(const torch::Tensor& train_ids, const TrainOptions& train_options) {
  TrainingHistory history;
  train(train_ids, history, train_options);
  return history;
}

TrainingHistory& Trainer::train(const torch::Tensor& train_ids, TrainingHistory& history,
                                const TrainOptions& train_options) {
  std::function<double()> evaluate_held_out;
  if (train_options.val_ids()) {
    evaluate_held_out = [&] { return evaluate(*train_options.val_ids()); };
  }
  return run_loop([&] { return train_step(train_ids); }, evaluate_held_out, history, train_options);
}

TrainingHistory& Trainer::run_loop(const std::function<StepMetrics()>& one_step,
                                   const std::function<double()>& evaluate_held_out,
                                   TrainingHistory& history, const TrainOptions& train_options) {
  const auto& every = train_options.checkpoint_every();
  if (every && *every <= 0) {
    throw ValueError(fmt::format("checkpoint_every must be positive (or unset), got {}", *every));
  }
  if (options.log_every() < 1 || options.eval_every() < 1) {
    throw ValueError(fmt::format("log_every and eval_every must be >= 1, got {} and {}",
                                 options.log_every(), options.eval_every()));
  }
  const auto& path = train_options.checkpoint_path();
  const auto start_time = std::chrono::steady_clock::now();
  const auto start_step = step;
  try {
    while (step < options.max_steps()) {
      const auto metrics = one_step();
      // The step advanced the counter: these metrics belong to step `step - 1`.
      const auto index = step - 1;
      const bool done = step >= options.max_steps();
      std::optional<LogEvent> event;
      if (index % options.log_every() == 0 || done) {
        history.step.push_back(index);
        history.train_loss.push_back(metrics.loss);
        history.lr.push_back(metrics.lr);
        history.grad_norm.push_back(metrics.grad_norm);
        event = LogEvent{index, metrics.loss, std::nullopt, metrics.lr, metrics.grad_norm};
      }
      if (evaluate_held_out && (index % options.eval_every() == 0 || done)) {
        const double val_loss = evaluate_held_out();
        history.val_step.push_back(index);
        history.val_loss.push_back(val_loss);
        if (!event)
          event = LogEvent{index, metrics.loss, std::nullopt, metrics.lr, metrics.grad_norm};
        event->val_loss = val_loss;
      }
      if (train_options.on_log() && event) {
        event->elapsed_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
        event->steps_per_s = event->elapsed_s > 0.0
                                 ? static_cast<double>(step - start_step) / event->elapsed_s
                                 : 0.0;
        train_options.on_log()(*event);
      }
      if (path && every && (step % *every == 0 || done)) {
        save_checkpoint(*path, history, train_options.checkpoint_extra());
      }
    }
  } catch (...) {
    // Interrupted (a failing step, a callback that stops the run): keep what was done. The
    // checkpoint holds the last completed step, so a resumed run repeats nothing.
    if (path) {
      try {
        save_checkpoint(*path, history, train_options.checkpoint_extra());
      } catch (const std::exception&) {
        // The original error is the one to report; the previous checkpoint is still intact.
      }
    }
    throw;
  }
  return history;
}

}  // namespace g2c::pretraining
