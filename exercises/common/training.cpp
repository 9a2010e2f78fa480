#include "exercises/common/training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/progress.h"

namespace g2c::exercises {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The first parameter holding a NaN or an infinity, by name ("" when all are finite), and the
/// largest magnitude of any weight.
std::pair<std::string, double> inspect_parameters(g2c::nn::Module& model) {
  torch::NoGradGuard no_grad;
  std::string broken;
  double largest = 0.0;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) {
    if (broken.empty() && !torch::isfinite(item.value()).all().item<bool>()) broken = item.key();
    if (item.value().numel() > 0) {
      largest = std::max(largest, item.value().abs().max().item<double>());
    }
  }
  return {broken, largest};
}

/// Why the loss of `batch` is not finite, found by looking at the weights and the logits.
std::string diagnose(g2c::nn::Module& model, const TokenBatch& batch, std::int64_t step) {
  const auto [broken, largest] = inspect_parameters(model);
  const std::string too_high =
      "most likely the learning rate is too high (try a smaller --lr), or a gradient was NaN";
  if (!broken.empty()) {
    return fmt::format(
        "the weights themselves are broken: parameter '{}' holds NaN or inf after "
        "{} updates; {}.",
        broken, step, too_high);
  }
  torch::NoGradGuard no_grad;
  const auto logits = model.forward(batch.inputs.to(model.device()));
  const auto bad = (~torch::isfinite(logits)).sum().item<std::int64_t>();
  if (bad > 0 && step > 0) {
    return fmt::format(
        "the updates grew the weights (largest |weight| {:.3g}) until the forward "
        "pass overflows: {} of the {} logits are NaN or inf; {}.",
        largest, bad, logits.numel(), too_high);
  }
  if (bad > 0) {
    return fmt::format(
        "every weight is finite but {} of the {} logits are NaN or inf before any update, so the "
        "forward pass produced them. The usual cause is a fully masked attention row: when a mask "
        "blocks every key of a query (for example one that also blocks the diagonal), softmax "
        "divides 0 by 0. Check the mask's polarity (true = blocked, strictly above the diagonal) "
        "and that it fills the scores with -inf before the softmax.",
        bad, logits.numel());
  }
  return "the logits are finite but their cross-entropy is not: the loss overflows or takes log 0. "
         "Subtract each row's max before exp, and take log-sum-exp minus the target's logit "
         "(module 03).";
}

[[noreturn]] void stop_diverged(g2c::nn::Module& model, const TokenBatch& batch, double loss,
                                std::int64_t step, const TrainLanguageModelOptions& options) {
  std::string message =
      fmt::format("{}: the training loss is {} at step {} ({}). Training stopped here.\n  Why: {}",
                  options.label(), std::isnan(loss) ? "NaN" : "infinite", step,
                  step == 0 ? "before any update"
                            : fmt::format("after {} update{}", step, step == 1 ? "" : "s"),
                  diagnose(model, batch, step));
  if (!options.files_to_check().empty()) {
    message += "\n  Check: ";
    for (std::size_t i = 0; i < options.files_to_check().size(); ++i) {
      message += (i ? ", " : "") + options.files_to_check()[i];
    }
  }
  throw TrainingDiverged(message);
}

}  // namespace

double mean_loss(g2c::nn::Module& model, const std::vector<TokenBatch>& batches, bool fused) {
  if (batches.empty()) throw ValueError("mean_loss needs at least one batch");
  torch::NoGradGuard no_grad;
  model.eval();
  const auto device = model.device();
  double total = 0.0;
  for (const auto& batch : batches) {
    total +=
        next_token_loss(model.forward(batch.inputs.to(device)), batch.targets.to(device), fused)
            .item<double>();
  }
  return total / static_cast<double>(batches.size());
}

TrainResult train_language_model(g2c::nn::Module& model, g2c::nn::Optimizer& optimizer,
                                 WindowSampler& batches, const std::vector<TokenBatch>& validation,
                                 const TrainLanguageModelOptions& options) {
  if (options.steps() < 1 || options.log_every() < 1) {
    throw ValueError(fmt::format("training needs steps >= 1 and log_every >= 1, got {} and {}",
                                 options.steps(), options.log_every()));
  }
  // Confident models push most probabilities towards 0; their gradients then fill with denormal
  // floats, which the CPU handles up to a hundred times slower. Flushing them to zero changes
  // nothing a loss of this size can show.
  at::globalContext().setFlushDenormal(true);

  std::optional<g2c::Progress> own_progress;
  ProgressSink progress;
  if (options.progress()) {
    progress = *options.progress();
  } else {
    own_progress.emplace(options.label(), options.steps(), options.show_progress());
    progress.update = [&](std::int64_t done, const std::string& metrics) {
      own_progress->update(done, metrics);
    };
    progress.finish = [&](const std::string& metrics) { own_progress->finish(metrics); };
  }

  const auto device = model.device();
  TrainResult result;
  std::string val_text;
  const auto start = Clock::now();
  for (std::int64_t step = 0; step < options.steps(); ++step) {
    model.train();
    const auto batch = batches.next();
    const auto inputs = batch.inputs.to(device), targets = batch.targets.to(device);
    const auto loss = next_token_loss(model.forward(inputs), targets, options.fused_kernels());
    const double value = loss.item<double>();
    if (!std::isfinite(value)) stop_diverged(model, batch, value, step, options);

    if (step % options.log_every() == 0 || step == options.steps() - 1) {
      result.steps.push_back(step);
      result.train_loss.push_back(value);
      if (!validation.empty()) {
        const auto eval_start = Clock::now();
        const double val = mean_loss(model, validation, options.fused_kernels());
        result.eval_seconds += seconds_since(eval_start);
        model.train();
        if (!std::isfinite(val)) stop_diverged(model, validation[0], val, step, options);
        result.val_loss.push_back(val);
        val_text = fmt::format("  val {:.3f}", val);
      }
    }
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    progress.update(step + 1, fmt::format("loss {:.3f}{}", value, val_text));
  }
  result.wall_seconds = seconds_since(start);
  result.train_seconds = result.wall_seconds - result.eval_seconds;
  result.tokens = options.steps() * batches.tokens_per_batch();
  result.final_train_loss = result.train_loss.back();
  if (!result.val_loss.empty()) result.final_val_loss = result.val_loss.back();
  model.eval();
  progress.finish(fmt::format("loss {:.3f}{}", result.final_train_loss, val_text));
  return result;
}

}  // namespace g2c::exercises
