#include "exercises/common/run_log.h"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::exercises {

RunLog::RunLog(RunLogOptions options) : options_(std::move(options)) {}

std::function<void(const g2c::pretraining::LogEvent&)> RunLog::callback() {
  return [this](const g2c::pretraining::LogEvent& event) { log(event); };
}

void RunLog::log(const g2c::pretraining::LogEvent& event) {
  if (!std::isfinite(event.train_loss) || (event.val_loss && !std::isfinite(*event.val_loss))) {
    throw g2c::TrainingDiverged(fmt::format(
        "{}: the loss stopped being finite at step {} (train {}{}, lr {:.2e}, grad norm {}). {}",
        options_.label, event.step, event.train_loss,
        event.val_loss ? fmt::format(", val {}", *event.val_loss) : std::string(), event.lr,
        event.grad_norm, options_.advice));
  }
  // The bar counts the steps itself (1-based): the metrics do not repeat them.
  std::string metrics = fmt::format("loss {:.3f} lr {:.2e}", event.train_loss, event.lr);
  if (options_.tokens_per_step > 0) {
    metrics += fmt::format(" {:.0f} tok/s",
                           event.steps_per_s * static_cast<double>(options_.tokens_per_step));
  }
  if (event.val_loss) metrics += fmt::format(" val {:.3f}", *event.val_loss);
  const std::int64_t done = event.step + 1 - options_.first_step;
  if (!progress_) {
    progress_.emplace(options_.label, options_.steps - options_.first_step, options_.show);
    progress_->update(done - 1, metrics);
  } else {
    progress_->update(done, metrics);
  }
}

void RunLog::finish() {
  if (progress_) progress_->finish();
}

}  // namespace g2c::exercises
