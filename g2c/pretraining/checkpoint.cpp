// Trainer checkpoints: one LibTorch archive holding the tensors (model parameters, AdamW moments,
// generator state, history series) and one JSON string for everything else. No pickle: the file
// is read back field by field, and anything unexpected is a ValueError.
//
// Layout (version 1):
//   "meta"             JSON: {format, version, trainer: {step, hyper-parameters, optimizer_name},
//                      optimizer: {name, lr, weight_decay[, beta1, beta2, eps, step_count]},
//                      num_params, has_generator_state, extra}
//   "param_<i>"        model parameter i, on the CPU, in parameters() order
//   "adamw_m_<i>", "adamw_v_<i>"   AdamW moments (AdamW only)
//   "generator_state"  the batch generator's state (when the trainer has its own generator)
//   "history_<series>" the six history series as int64 / float64 tensors (NaN survives)
#include <sstream>

#include <fmt/format.h>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/pretraining/trainer.h"

namespace g2c::pretraining {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "g2c-trainer-checkpoint";
constexpr std::int64_t kVersion = 1;

torch::Tensor to_tensor(const std::vector<std::int64_t>& values) {
  return torch::tensor(values, torch::kLong).reshape({static_cast<std::int64_t>(values.size())});
}
torch::Tensor to_tensor(const std::vector<double>& values) {
  return torch::tensor(values, torch::kDouble).reshape({static_cast<std::int64_t>(values.size())});
}
template <typename T>
std::vector<T> from_tensor(const torch::Tensor& t) {
  const auto flat = t.contiguous();
  return {flat.data_ptr<T>(), flat.data_ptr<T>() + flat.numel()};
}

torch::Tensor read_tensor(torch::serialize::InputArchive& archive, const std::string& key,
                          const fs::path& path) {
  c10::IValue value;
  if (!archive.try_read(key, value) || !value.isTensor()) {
    throw ValueError(
        fmt::format("checkpoint {} has no tensor '{}': not a complete g2c trainer "
                    "checkpoint",
                    path.string(), key));
  }
  return value.toTensor();
}

/// The archive and its meta JSON, from `path`, or `<path>.bak` when `path` is missing.
std::pair<std::shared_ptr<torch::serialize::InputArchive>, nlohmann::json> open_checkpoint(
    const fs::path& requested) {
  fs::path path = requested;
  if (!fs::exists(path)) {
    const fs::path backup = fs::path(requested.string() + ".bak");
    if (!fs::exists(backup)) {
      throw ValueError(
          fmt::format("no checkpoint at {} (nor {}); train with a checkpoint_path "
                      "first, or check the path",
                      requested.string(), backup.string()));
    }
    path = backup;
  }
  auto archive = std::make_shared<torch::serialize::InputArchive>();
  try {
    archive->load_from(path.string(), torch::Device(torch::kCPU));
  } catch (const c10::Error& error) {
    throw ValueError(fmt::format("cannot read checkpoint {}: {}", path.string(),
                                 error.what_without_backtrace()));
  }
  c10::IValue meta_value;
  if (!archive->try_read("meta", meta_value) || !meta_value.isString()) {
    throw ValueError(
        fmt::format("{} is not a g2c trainer checkpoint (no meta record)", path.string()));
  }
  auto meta = nlohmann::json::parse(meta_value.toStringRef(), nullptr, /*allow_exceptions=*/false);
  if (meta.is_discarded() || meta.value("format", "") != kFormat) {
    throw ValueError(fmt::format("{} is not a g2c trainer checkpoint", path.string()));
  }
  if (meta.value("version", std::int64_t{-1}) != kVersion) {
    throw ValueError(fmt::format("checkpoint {} has version {}, this build reads version {}",
                                 path.string(), meta.value("version", std::int64_t{-1}), kVersion));
  }
  return {archive, meta};
}

Checkpoint read_common(torch::serialize::InputArchive& archive, const nlohmann::json& meta,
                       const fs::path& path) {
  Checkpoint checkpoint;
  checkpoint.version = meta.at("version").get<std::int64_t>();
  checkpoint.trainer = meta.at("trainer");
  checkpoint.extra = meta.value("extra", nlohmann::json::object());
  auto& h = checkpoint.history;
  h.step = from_tensor<std::int64_t>(read_tensor(archive, "history_step", path));
  h.train_loss = from_tensor<double>(read_tensor(archive, "history_train_loss", path));
  h.lr = from_tensor<double>(read_tensor(archive, "history_lr", path));
  h.grad_norm = from_tensor<double>(read_tensor(archive, "history_grad_norm", path));
  h.val_step = from_tensor<std::int64_t>(read_tensor(archive, "history_val_step", path));
  h.val_loss = from_tensor<double>(read_tensor(archive, "history_val_loss", path));
  return checkpoint;
}

/// Copies saved tensors into `targets` in place, after checking count and shapes.
void copy_into(const std::vector<torch::Tensor>& targets, torch::serialize::InputArchive& archive,
               const std::string& prefix, const std::string& what, std::int64_t saved_count,
               const fs::path& path) {
  if (saved_count != static_cast<std::int64_t>(targets.size())) {
    throw ValueError(fmt::format("checkpoint {} has {} {} tensors, but this trainer's model has {}",
                                 path.string(), saved_count, what, targets.size()));
  }
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const auto saved = read_tensor(archive, prefix + std::to_string(i), path);
    if (saved.sizes() != targets[i].sizes()) {
      throw ValueError(
          fmt::format("checkpoint {} {} {} has shape {}, but this trainer's has shape {}",
                      path.string(), what, i, describe_shape(saved), describe_shape(targets[i])));
    }
  }
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const auto saved = read_tensor(archive, prefix + std::to_string(i), path);
    targets[i].copy_(saved.to(targets[i].device(), targets[i].scalar_type()));
  }
}

}  // namespace

void Trainer::save_checkpoint(const fs::path& path, const TrainingHistory& history,
                              const nlohmann::json& extra) const {
  nlohmann::json trainer_json = {
      {"step", step},
      {"batch_size", options.batch_size()},
      {"context_length", options.context_length()},
      {"max_steps", options.max_steps()},
      {"max_lr", options.max_lr()},
      {"min_lr", options.min_lr()},
      {"warmup_steps", options.warmup_steps()},
      {"weight_decay", options.weight_decay()},
      {"grad_clip", options.grad_clip() ? nlohmann::json(*options.grad_clip()) : nullptr},
      {"eval_every", options.eval_every()},
      {"eval_iters", options.eval_iters()},
      {"log_every", options.log_every()},
      {"optimizer_name", optimizer_name}};
  nlohmann::json optimizer_json = {{"name", optimizer_name}, {"lr", optimizer->lr}};

  torch::serialize::OutputArchive archive;
  const auto params = model->parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    archive.write("param_" + std::to_string(i), params[i].detach().cpu().clone());
  }
  if (const auto* sgd = dynamic_cast<const g2c::nn::SGD*>(optimizer.get())) {
    optimizer_json["weight_decay"] = sgd->weight_decay;
  } else if (const auto* adamw = dynamic_cast<const g2c::nn::AdamW*>(optimizer.get())) {
    optimizer_json.update({{"weight_decay", adamw->weight_decay},
                           {"beta1", adamw->beta1},
                           {"beta2", adamw->beta2},
                           {"eps", adamw->eps},
                           {"step_count", adamw->step_count},
                           {"num_moments", adamw->m.size()}});
    for (std::size_t i = 0; i < adamw->m.size(); ++i) {
      archive.write("adamw_m_" + std::to_string(i), adamw->m[i].detach().cpu().clone());
      archive.write("adamw_v_" + std::to_string(i), adamw->v[i].detach().cpu().clone());
    }
  }
  const bool has_generator = options.generator().has_value();
  if (has_generator) {
    auto generator = *options.generator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    archive.write("generator_state", generator.get_state());
  }
  archive.write("history_step", to_tensor(history.step));
  archive.write("history_train_loss", to_tensor(history.train_loss));
  archive.write("history_lr", to_tensor(history.lr));
  archive.write("history_grad_norm", to_tensor(history.grad_norm));
  archive.write("history_val_step", to_tensor(history.val_step));
  archive.write("history_val_loss", to_tensor(history.val_loss));

  const nlohmann::json meta = {{"format", kFormat},
                               {"version", kVersion},
                               {"trainer", trainer_json},
                               {"optimizer", optimizer_json},
                               {"num_params", params.size()},
                               {"has_generator_state", has_generator},
                               {"extra", extra.is_null() ? nlohmann::json::object() : extra}};
  archive.write("meta", c10::IValue(meta.dump()));

  std::ostringstream bytes;
  archive.save_to(bytes);
  // Keep the previous checkpoint as .bak (copied, so `path` itself is never missing), then replace
  // `path` in one rename: a crash at any point leaves a complete file at `path` or at `.bak`.
  if (fs::exists(path)) {
    const fs::path backup = fs::path(path.string() + ".bak");
    write_file_atomic(backup, read_file(path));
  }
  write_file_atomic(path, bytes.str());
}

Checkpoint read_checkpoint(const fs::path& path) {
  auto [archive, meta] = open_checkpoint(path);
  return read_common(*archive, meta, path);
}

Checkpoint Trainer::load_checkpoint(const fs::path& path) {
  auto [archive, meta] = open_checkpoint(path);
  Checkpoint checkpoint = read_common(*archive, meta, path);
  const auto& saved_optimizer = meta.at("optimizer");
  const auto saved_name = saved_optimizer.at("name").get<std::string>();
  if (saved_name != optimizer_name) {
    throw ValueError(
        fmt::format("checkpoint {} was written with optimizer '{}', but this trainer "
                    "uses '{}'; build the trainer with .optimizer(\"{}\")",
                    path.string(), saved_name, optimizer_name, saved_name));
  }
  // Everything is checked before anything is changed, so a rejected checkpoint leaves the trainer
  // as it was.
  auto* adamw = dynamic_cast<g2c::nn::AdamW*>(optimizer.get());
  const auto params = model->parameters();
  const auto num_params = meta.at("num_params").get<std::int64_t>();
  if (num_params != static_cast<std::int64_t>(params.size())) {
    throw ValueError(
        fmt::format("checkpoint {} has {} model parameter tensors, but this model has "
                    "{}: it was written for another model configuration",
                    path.string(), num_params, params.size()));
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto saved = read_tensor(*archive, "param_" + std::to_string(i), path);
    if (saved.sizes() != params[i].sizes()) {
      throw ValueError(
          fmt::format("checkpoint {} model parameter {} has shape {}, but this model's "
                      "has shape {}: it was written for another model configuration",
                      path.string(), i, describe_shape(saved), describe_shape(params[i])));
    }
  }
  copy_into(params, *archive, "param_", "model parameter", num_params, path);
  optimizer->lr = saved_optimizer.at("lr").get<double>();
  if (auto* sgd = dynamic_cast<g2c::nn::SGD*>(optimizer.get())) {
    sgd->weight_decay = saved_optimizer.at("weight_decay").get<double>();
  } else if (adamw) {
    const auto moments = saved_optimizer.at("num_moments").get<std::int64_t>();
    copy_into(adamw->m, *archive, "adamw_m_", "AdamW m", moments, path);
    copy_into(adamw->v, *archive, "adamw_v_", "AdamW v", moments, path);
    adamw->weight_decay = saved_optimizer.at("weight_decay").get<double>();
    adamw->beta1 = saved_optimizer.at("beta1").get<double>();
    adamw->beta2 = saved_optimizer.at("beta2").get<double>();
    adamw->eps = saved_optimizer.at("eps").get<double>();
    adamw->step_count = saved_optimizer.at("step_count").get<std::int64_t>();
  }
  if (meta.value("has_generator_state", false) && options.generator()) {
    auto generator = *options.generator();
    const auto state = read_tensor(*archive, "generator_state", path);
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
  }
  step = checkpoint.trainer.at("step").get<std::int64_t>();
  return checkpoint;
}

}  // namespace g2c::pretraining
