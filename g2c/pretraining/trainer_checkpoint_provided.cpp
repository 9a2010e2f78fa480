// Trainer checkpoints: one archive (g2c/core/archive.h, the torch.save format) holding the tensors
// (model parameters, AdamW moments, generator state, history series) and one JSON string for
// everything else. The file is read back key by key, and anything unexpected is a ValueError.
//
// Layout (version 2):
//   "format", "version"  "g2c-trainer-checkpoint", 2
//   "meta"               JSON: {trainer: {step, trainer_options_json's keys},
//                        optimizer: {name, lr, weight_decay[, beta1, beta2, eps, step_count]
//                        [, muon: {momentum, ns_steps, step_count, weight_decay, adamw_lr}]},
//                        history_extras: {extra: [names], val_extra: [names]}, extra}
//   "model_params"       the model's parameters, on the CPU, in parameters() order
//   "adamw_m", "adamw_v" AdamW's moments, one per parameter (AdamW; for Muon, its AdamW side's)
//   "muon_momentum"      Muon's momentum buffers, one per matrix (Muon only)
//   "generator_state"    the batch generator's state (when the trainer has its own generator)
//   "history"            {step, train_loss, lr, grad_norm, val_step, val_loss, extra/<name>,
//                        val_extra/<name>}: int64 / float64 tensors (NaN survives)
// Version 1 files (LibTorch archives of param_<i>) are not read: start the run again.
#include <optional>
#include <type_traits>

#include <fmt/format.h>

#include "g2c/core/archive.h"
#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/muon/optimizer.h"
#include "g2c/pretraining/trainer.h"

namespace g2c::pretraining {

namespace fs = std::filesystem;

namespace {

/// Rolling: each save keeps the previous checkpoint as .bak, and a damaged one is read from it.
const ArchiveKind kCheckpointFile{.what = "checkpoint",
                                  .format = "g2c-trainer-checkpoint",
                                  .version = 2,
                                  .remedy = "start the run again",
                                  .keeps_backup = true};
constexpr const char* kOtherModel =
    "it was written for another model configuration, or it is damaged";

torch::Tensor to_tensor(const std::vector<std::int64_t>& values) {
  return torch::tensor(values, torch::kLong).reshape({static_cast<std::int64_t>(values.size())});
}
torch::Tensor to_tensor(const std::vector<double>& values) {
  return torch::tensor(values, torch::kDouble).reshape({static_cast<std::int64_t>(values.size())});
}
template <typename T>
std::vector<T> from_tensor(const ArchiveView& history, const std::string& key) {
  const auto tensor = history.tensor(key);
  if (tensor.scalar_type() != c10::CppTypeToScalarType<T>::value || tensor.dim() != 1) {
    throw ValueError(fmt::format(
        "checkpoint {}: 'history/{}' should be a 1-D {} tensor, found a {} tensor of shape {}",
        history.path().string(), key, c10::toString(c10::CppTypeToScalarType<T>::value),
        c10::toString(tensor.scalar_type()), describe_shape(tensor)));
  }
  const auto flat = tensor.contiguous();
  return {flat.data_ptr<T>(), flat.data_ptr<T>() + flat.numel()};
}

/// meta[pointer] as a T, or a ValueError naming the field.
template <typename T>
T field(const nlohmann::json& meta, const char* pointer, const fs::path& path) {
  const nlohmann::json::json_pointer at(pointer);
  if (meta.contains(at)) {
    const auto& value = meta.at(at);
    const bool fits = std::is_same_v<T, std::string>    ? value.is_string()
                      : std::is_same_v<T, std::int64_t> ? value.is_number_integer()
                                                        : value.is_number();
    if (fits) return value.get<T>();
  }
  throw ValueError(fmt::format(
      "checkpoint {}: its meta record has no valid '{}' (found {}); the "
      "file is damaged or not a g2c trainer checkpoint",
      path.string(), pointer, meta.contains(at) ? meta.at(at).dump() : std::string("nothing")));
}

/// A checkpoint read whole: its archive, its meta record and what it holds besides the tensors.
struct CheckpointFile {
  ArchiveView archive;
  nlohmann::json meta;
  Checkpoint checkpoint;
};

CheckpointFile open_checkpoint(const fs::path& requested) {
  auto archive = read_archive(requested, kCheckpointFile);
  const fs::path& path = archive.path();
  auto meta = nlohmann::json::parse(archive.string("meta"), nullptr, /*allow_exceptions=*/false);
  if (!meta.is_object()) {
    throw ValueError(
        fmt::format("checkpoint {}: its meta record is not a JSON object; the file is "
                    "damaged or not a g2c trainer checkpoint",
                    path.string()));
  }
  Checkpoint checkpoint;
  checkpoint.version = kCheckpointFile.version;
  checkpoint.path = path;
  checkpoint.note = archive.fallback_note;
  checkpoint.trainer = meta.value("trainer", nlohmann::json());
  field<std::int64_t>(meta, "/trainer/step", path);
  checkpoint.extra = meta.value("extra", nlohmann::json::object());
  const auto history = archive.dict("history");
  auto& h = checkpoint.history;
  h.step = from_tensor<std::int64_t>(history, "step");
  h.train_loss = from_tensor<double>(history, "train_loss");
  h.lr = from_tensor<double>(history, "lr");
  h.grad_norm = from_tensor<double>(history, "grad_norm");
  h.val_step = from_tensor<std::int64_t>(history, "val_step");
  h.val_loss = from_tensor<double>(history, "val_loss");
  const auto extras = meta.value("history_extras", nlohmann::json::object());
  for (const auto& [kind, series] :
       {std::pair{"extra", &h.extra}, std::pair{"val_extra", &h.val_extra}}) {
    for (const auto& name : extras.value(kind, nlohmann::json::array())) {
      if (!name.is_string()) {
        throw ValueError(
            fmt::format("checkpoint {}: history_extras/{} holds {}, not a name; the "
                        "file is damaged",
                        path.string(), kind, name.dump()));
      }
      (*series)[name.get<std::string>()] =
          from_tensor<double>(history, fmt::format("{}/{}", kind, name.get<std::string>()));
    }
  }
  return {std::move(archive), std::move(meta), std::move(checkpoint)};
}

}  // namespace

void Trainer::save_checkpoint(const fs::path& path, const TrainingHistory& history,
                              const nlohmann::json& extra) const {
  auto trainer_json = trainer_options_json(options);
  trainer_json["step"] = step;
  nlohmann::json optimizer_json = {{"name", optimizer_name}, {"lr", optimizer->lr}};

  auto archive = archive_dict();
  archive.insert("model_params", archive_tensors(model->parameters()));
  // Muon's AdamW side is saved as AdamW's state is, beside Muon's own.
  const auto* muon = dynamic_cast<const g2c::muon::Muon*>(optimizer.get());
  const auto* adamw = muon ? &muon->adamw : dynamic_cast<const g2c::nn::AdamW*>(optimizer.get());
  if (muon) {
    optimizer_json["muon"] = {{"momentum", muon->momentum},
                              {"ns_steps", muon->ns_steps},
                              {"step_count", muon->step_count},
                              {"weight_decay", muon->weight_decay},
                              {"adamw_lr", muon->adamw.lr}};
    archive.insert("muon_momentum", archive_tensors(muon->momentum_buffers));
  }
  if (const auto* sgd = dynamic_cast<const g2c::nn::SGD*>(optimizer.get())) {
    optimizer_json["weight_decay"] = sgd->weight_decay;
  } else if (adamw) {
    optimizer_json.update({{"weight_decay", adamw->weight_decay},
                           {"beta1", adamw->beta1},
                           {"beta2", adamw->beta2},
                           {"eps", adamw->eps},
                           {"step_count", adamw->step_count}});
    archive.insert("adamw_m", archive_tensors(adamw->m));
    archive.insert("adamw_v", archive_tensors(adamw->v));
  }
  if (options.generator()) {
    auto generator = *options.generator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    archive.insert("generator_state", generator.get_state());
  }
  auto series = archive_dict();
  series.insert("step", to_tensor(history.step));
  series.insert("train_loss", to_tensor(history.train_loss));
  series.insert("lr", to_tensor(history.lr));
  series.insert("grad_norm", to_tensor(history.grad_norm));
  series.insert("val_step", to_tensor(history.val_step));
  series.insert("val_loss", to_tensor(history.val_loss));
  // The extras' series under "extra/<name>" and "val_extra/<name>", their names in the meta
  // record (so the reader knows what to look for).
  auto extra_names = nlohmann::json::object(
      {{"extra", nlohmann::json::array()}, {"val_extra", nlohmann::json::array()}});
  for (const auto& [kind, extras] :
       {std::pair{"extra", &history.extra}, std::pair{"val_extra", &history.val_extra}}) {
    for (const auto& [name, values] : *extras) {
      series.insert(fmt::format("{}/{}", kind, name), to_tensor(values));
      extra_names[kind].push_back(name);
    }
  }
  archive.insert("history", series);
  const nlohmann::json meta = {{"trainer", trainer_json},
                               {"optimizer", optimizer_json},
                               {"history_extras", extra_names},
                               {"extra", extra.is_null() ? nlohmann::json::object() : extra}};
  archive.insert("meta", meta.dump());
  write_archive(path, archive, kCheckpointFile);
}

Checkpoint read_checkpoint(const fs::path& path) {
  return open_checkpoint(path).checkpoint;
}

Checkpoint Trainer::load_checkpoint(const fs::path& path) {
  auto [archive, meta, checkpoint] = open_checkpoint(path);
  const fs::path& read = archive.path();

  // 1. Read and check everything; nothing of the trainer changes until all of it has passed, so
  //    a rejected checkpoint leaves the trainer as it was.
  const auto saved_name = field<std::string>(meta, "/optimizer/name", read);
  if (saved_name != optimizer_name) {
    throw ValueError(
        fmt::format("checkpoint {} was written with optimizer '{}', but this trainer "
                    "uses '{}'; build the trainer with .optimizer(\"{}\")",
                    read.string(), saved_name, optimizer_name, saved_name));
  }
  const auto params = model->parameters();
  const auto saved_params = archive.tensors("model_params");
  check_fit(saved_params, params, "model parameter", archive, kOtherModel);
  const auto lr = field<double>(meta, "/optimizer/lr", read);
  const auto weight_decay = field<double>(meta, "/optimizer/weight_decay", read);
  auto* muon = dynamic_cast<g2c::muon::Muon*>(optimizer.get());
  auto* adamw = muon ? &muon->adamw : dynamic_cast<g2c::nn::AdamW*>(optimizer.get());
  std::vector<torch::Tensor> saved_m, saved_v, saved_momentum;
  nlohmann::json muon_state;
  if (muon) {
    saved_momentum = archive.tensors("muon_momentum");
    check_fit(saved_momentum, muon->momentum_buffers, "Muon momentum", archive, kOtherModel);
    muon_state = {{"momentum", field<double>(meta, "/optimizer/muon/momentum", read)},
                  {"ns_steps", field<std::int64_t>(meta, "/optimizer/muon/ns_steps", read)},
                  {"step_count", field<std::int64_t>(meta, "/optimizer/muon/step_count", read)},
                  {"weight_decay", field<double>(meta, "/optimizer/muon/weight_decay", read)},
                  {"adamw_lr", field<double>(meta, "/optimizer/muon/adamw_lr", read)}};
  }
  double beta1 = 0.0, beta2 = 0.0, eps = 0.0;
  std::int64_t step_count = 0;
  if (adamw) {
    saved_m = archive.tensors("adamw_m");
    saved_v = archive.tensors("adamw_v");
    check_fit(saved_m, adamw->m, "AdamW m", archive, kOtherModel);
    check_fit(saved_v, adamw->v, "AdamW v", archive, kOtherModel);
    beta1 = field<double>(meta, "/optimizer/beta1", read);
    beta2 = field<double>(meta, "/optimizer/beta2", read);
    eps = field<double>(meta, "/optimizer/eps", read);
    step_count = field<std::int64_t>(meta, "/optimizer/step_count", read);
  }
  std::optional<torch::Tensor> generator_state;
  if (options.generator() && archive.contains("generator_state")) {
    generator_state = archive.tensor("generator_state");
    try {  // on a copy: the trainer's own generator is set below, once everything has passed
      options.generator()->clone().set_state(*generator_state);
    } catch (const c10::Error& error) {
      throw ValueError(
          fmt::format("checkpoint {}: its generator state does not fit this "
                      "trainer's generator ({}); the file is damaged",
                      read.string(), error.what_without_backtrace()));
    }
  }

  // 2. Restore: nothing below can fail.
  copy_into(saved_params, params);
  optimizer->lr = lr;
  if (auto* sgd = dynamic_cast<g2c::nn::SGD*>(optimizer.get())) {
    sgd->weight_decay = weight_decay;
  } else if (adamw) {
    copy_into(saved_m, adamw->m);
    copy_into(saved_v, adamw->v);
    adamw->weight_decay = weight_decay;
    adamw->beta1 = beta1;
    adamw->beta2 = beta2;
    adamw->eps = eps;
    adamw->step_count = step_count;
  }
  if (muon) {
    copy_into(saved_momentum, muon->momentum_buffers);
    muon->momentum = muon_state["momentum"].get<double>();
    muon->ns_steps = muon_state["ns_steps"].get<std::int64_t>();
    muon->step_count = muon_state["step_count"].get<std::int64_t>();
    muon->weight_decay = muon_state["weight_decay"].get<double>();
    muon->adamw.lr = muon_state["adamw_lr"].get<double>();
  }
  if (generator_state) {
    auto generator = *options.generator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(*generator_state);
  }
  step = checkpoint.trainer.at("step").get<std::int64_t>();
  return checkpoint;
}

}  // namespace g2c::pretraining
