#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/strip.h"
#include "g2c/muon/partition.h"
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

/// Appends each named value to its series, which must then hold `length` values: a name that
/// appears or disappears mid-run would leave series that no longer line up with their steps.
void append_extras(std::map<std::string, std::vector<double>>& series, const NamedMetrics& values,
                   std::size_t length) {
  for (const auto& [name, value] : values) series[name].push_back(value);
  for (const auto& [name, values_so_far] : series) {
    if (values_so_far.size() != length) {
      throw ValueError(
          fmt::format("the metric '{}' has {} values for {} recorded steps: every step (and every "
                      "evaluation) must report the same extra metrics",
                      name, values_so_far.size(), length));
    }
  }
}

}  // namespace

nlohmann::json TrainingHistory::to_json() const {
  nlohmann::json out = {{"step", step},
                        {"train_loss", finite_or_null(train_loss)},
                        {"lr", finite_or_null(lr)},
                        {"grad_norm", finite_or_null(grad_norm)},
                        {"val_step", val_step},
                        {"val_loss", finite_or_null(val_loss)}};
  for (const auto& [name, series] : extra) out[name] = finite_or_null(series);
  for (const auto& [name, series] : val_extra) out["val_" + name] = finite_or_null(series);
  return out;
}

nlohmann::json trainer_options_json(const TrainerOptions& o) {
  nlohmann::json json = {
      {"batch_size", o.batch_size()},
      {"context_length", o.context_length()},
      {"max_steps", o.max_steps()},
      {"optimizer", g2c::ascii_lowercase(o.optimizer())},
      {"fused_kernels", o.fused_kernels()},
      {"max_lr", o.max_lr()},
      {"min_lr", o.min_lr()},
      {"warmup_steps", o.warmup_steps()},
      {"weight_decay", o.weight_decay()},
      {"grad_clip", o.grad_clip() ? nlohmann::json(*o.grad_clip()) : nlohmann::json(nullptr)},
      {"eval_every", o.eval_every()},
      {"eval_iters", o.eval_iters()},
      {"log_every", o.log_every()}};
  if (json["optimizer"] == "muon") json["adamw_lr"] = o.adamw_lr();
  return json;
}

EvalMetrics mean_over_batches(std::int64_t batches, const std::function<EvalMetrics()>& one_batch) {
  if (batches < 1) {
    throw ValueError(fmt::format("evaluate needs eval_iters >= 1, got {}", batches));
  }
  torch::NoGradGuard no_grad;
  EvalMetrics sum;
  for (std::int64_t i = 0; i < batches; ++i) {
    const auto metrics = one_batch();
    sum.loss += metrics.loss;
    for (const auto& [name, value] : metrics.extra) sum.extra[name] += value;
  }
  const auto n = static_cast<double>(batches);
  sum.loss /= n;
  for (auto& [name, value] : sum.extra) value /= n;
  return sum;
}

TrainingHistory empty_training_history() {
  return {};
}

Trainer::Trainer(std::shared_ptr<g2c::nn::Module> model_, TrainerOptions options_)
    : model(std::move(model_)),
      options(std::move(options_)),
      device(g2c::nn::resolve_device(options.device())),
      optimizer_name(g2c::ascii_lowercase(options.optimizer())) {
  if (!model) throw ValueError("Trainer needs a model, got a null pointer");
  if (optimizer_name != "sgd" && optimizer_name != "adamw" && optimizer_name != "muon") {
    throw ValueError(
        fmt::format("optimizer must be 'sgd', 'adamw' or 'muon', got '{}'", options.optimizer()));
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
  if (optimizer_name == "muon") {  // the partition needs the model's layers, not just tensors
    if (!(options.adamw_lr() >= 0)) {
      throw ValueError(fmt::format("adamw_lr must be >= 0, got {}", options.adamw_lr()));
    }
    optimizer = g2c::muon::scheduled_muon(*model, options.max_lr(), options.adamw_lr(),
                                          options.weight_decay());
    return;
  }
  optimizer = g2c::nn::make_optimizer(optimizer_name, std::move(trainable), options.max_lr(),
                                      options.weight_decay(), options.fused_kernels());
}

double Trainer::lr(std::int64_t at_step) const {
  return g2c::training::cosine_with_warmup(at_step, options.warmup_steps(), options.max_steps(),
                                           options.max_lr(), options.min_lr());
}

double Trainer::evaluate(const TokenSource& ids) {
  return mean_over_batches(
             options.eval_iters(),
             [&] {
               const auto batch = get_lm_batch(ids, options.batch_size(), options.context_length(),
                                               options.generator());
               const auto logits = model->forward(batch.x.to(device));
               return EvalMetrics{lm_cross_entropy(logits, batch.y.to(device)).item<double>()};
             })
      .loss;
}

TrainingHistory Trainer::train(const TokenSource& train_ids, const RunOptions& train_options) {
  TrainingHistory history;
  train(train_ids, history, train_options);
  return history;
}

TrainingHistory& Trainer::train(const TokenSource& train_ids, TrainingHistory& history,
                                const RunOptions& train_options) {
  std::function<EvalMetrics()> evaluate_held_out;
  if (train_options.val_ids()) {
    evaluate_held_out = [&] { return EvalMetrics{evaluate(*train_options.val_ids())}; };
  }
  return run_loop([&] { return train_step(train_ids); }, evaluate_held_out, history, train_options);
}

TrainingHistory& Trainer::run_loop(const std::function<StepMetrics()>& one_step,
                                   const std::function<EvalMetrics()>& evaluate_held_out,
                                   TrainingHistory& history, const RunOptions& train_options) {
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
      const auto step_event = [&] {
        LogEvent e;
        e.step = index;
        e.train_loss = metrics.loss;
        e.lr = metrics.lr;
        e.grad_norm = metrics.grad_norm;
        e.extra = metrics.extra;
        return e;
      };
      if (index % options.log_every() == 0 || done) {
        history.step.push_back(index);
        history.train_loss.push_back(metrics.loss);
        history.lr.push_back(metrics.lr);
        history.grad_norm.push_back(metrics.grad_norm);
        append_extras(history.extra, metrics.extra, history.step.size());
        event = step_event();
      }
      if (evaluate_held_out && (index % options.eval_every() == 0 || done)) {
        const auto val = evaluate_held_out();
        history.val_step.push_back(index);
        history.val_loss.push_back(val.loss);
        append_extras(history.val_extra, val.extra, history.val_step.size());
        if (!event) event = step_event();
        event->val_loss = val.loss;
        event->val_extra = val.extra;
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
