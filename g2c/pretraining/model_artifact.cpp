#include "g2c/pretraining/model_artifact.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <sstream>

#include <fmt/format.h>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/pretraining/build_info.h"

namespace g2c::pretraining {

namespace fs = std::filesystem;

namespace {

constexpr const char* kModelFile = "model.pt";
constexpr const char* kConfigFile = "config.json";
constexpr const char* kManifestFile = "manifest.json";

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return stamp;
}

nlohmann::json last_or_null(const std::vector<double>& values) {
  return values.empty() || !std::isfinite(values.back()) ? nlohmann::json(nullptr)
                                                         : nlohmann::json(values.back());
}

nlohmann::json read_json(const fs::path& path) {
  auto value = nlohmann::json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object()) {
    throw ValueError(fmt::format("{} is not a JSON object; the artifact is damaged, save it again",
                                 path.string()));
  }
  return value;
}

}  // namespace

std::string canonical_model_name(std::string_view name) {
  if (name == "ShakespeareLM") return std::string(kShakespeareLM);
  if (name == "StoryLM-Small") return "StoryLM-5M";
  if (name == "StoryLM") return "StoryLM-30M";
  return std::string(name);
}

fs::path models_root() {
  if (const char* root = std::getenv("G2C_ARTIFACTS_DIR"); root && *root) {
    return fs::path(root) / "models";
  }
  return fs::path(source_dir()) / "artifacts" / "models";
}

fs::path model_artifact_dir(std::string_view name) {
  return models_root() / canonical_model_name(name);
}

nlohmann::json model_config_json(const g2c::transformer::TransformerLMOptions& options) {
  return {{"vocab_size", options.vocab_size()},   {"embedding_dim", options.embedding_dim()},
          {"num_layers", options.num_layers()},   {"num_heads", options.num_heads()},
          {"max_seq_len", options.max_seq_len()}, {"hidden_dim", options.hidden_dim()}};
}

g2c::transformer::TransformerLMOptions model_config_from_json(const nlohmann::json& config) {
  const auto get = [&](const char* key) -> std::int64_t {
    if (!config.is_object() || !config.contains(key) || !config.at(key).is_number_integer()) {
      throw ValueError(fmt::format("model_config needs an integer '{}', got {}", key,
                                   config.is_object() && config.contains(key)
                                       ? config.at(key).dump()
                                       : std::string("nothing")));
    }
    return config.at(key).get<std::int64_t>();
  };
  return g2c::transformer::TransformerLMOptions(get("vocab_size"), get("embedding_dim"),
                                                get("num_layers"), get("num_heads"),
                                                get("max_seq_len"))
      .hidden_dim(config.contains("hidden_dim") ? get("hidden_dim") : 0);
}

fs::path save_model_artifact(const ModelArtifactInfo& info,
                             const g2c::transformer::TransformerLM& model,
                             std::optional<fs::path> dir) {
  if (info.name.empty())
    throw ValueError("save_model_artifact needs a name, e.g. ShakespeareLM-1M");
  const fs::path folder = dir ? *dir : model_artifact_dir(info.name);
  const auto params = model->parameters();

  torch::serialize::OutputArchive archive;
  archive.write("vocab_size", c10::IValue(model->vocab_size));
  archive.write("num_params", c10::IValue(static_cast<std::int64_t>(params.size())));
  for (std::size_t i = 0; i < params.size(); ++i) {
    archive.write("param_" + std::to_string(i), params[i].detach().cpu().clone());
  }
  std::ostringstream bytes;
  archive.save_to(bytes);

  const auto model_config = model_config_json(model->options);
  const nlohmann::json config = {{"model_config", model_config},
                                 {"training_config", info.training_config}};
  const auto& h = info.history;
  const nlohmann::json manifest = {
      {"name", info.name},
      {"module", info.module},
      {"source", info.source},
      {"tokenizer_artifact", info.tokenizer_artifact},
      {"vocab_size", model->vocab_size},
      {"model_config", model_config},
      {"training_config", info.training_config},
      {"seed", info.seed ? nlohmann::json(*info.seed) : nlohmann::json(nullptr)},
      {"git_commit", source_commit()},
      {"created_at", utc_now()},
      {"steps_completed", h.step.empty() ? 0 : h.step.back() + 1},
      {"final_train_loss", last_or_null(h.train_loss)},
      {"final_val_loss", last_or_null(h.val_loss)},
      {"parameter_count", g2c::transformer::parameter_count(model->options)},
      {"notes", info.notes}};
  // The manifest last: a folder with a manifest has its model and config complete.
  write_file_atomic(folder / kModelFile, bytes.str());
  write_json_atomic(folder / kConfigFile, config);
  write_json_atomic(folder / kManifestFile, manifest);
  return folder;
}

ModelArtifact load_model_artifact(const std::string& name_or_dir, torch::Device device) {
  const fs::path as_path(name_or_dir);
  const fs::path folder = fs::is_directory(as_path) ? as_path : model_artifact_dir(name_or_dir);
  if (!fs::is_regular_file(folder / kManifestFile) || !fs::is_regular_file(folder / kModelFile)) {
    throw ValueError(fmt::format(
        "no model artifact '{}' at {} (manifest.json and model.pt are needed). Train and save one "
        "with `scripts/run.sh 10_pretrain` (ShakespeareLM-1M), or pass the folder of a saved "
        "artifact",
        name_or_dir, folder.string()));
  }
  ModelArtifact artifact;
  artifact.dir = folder;
  artifact.manifest = read_json(folder / kManifestFile);
  artifact.config = fs::is_regular_file(folder / kConfigFile)
                        ? read_json(folder / kConfigFile)
                        : nlohmann::json{{"model_config", artifact.manifest.value(
                                                              "model_config", nlohmann::json())}};
  const auto options =
      model_config_from_json(artifact.config.value("model_config", nlohmann::json()));

  torch::serialize::InputArchive archive;
  try {
    archive.load_from((folder / kModelFile).string(), torch::Device(torch::kCPU));
  } catch (const c10::Error& error) {
    throw ValueError(fmt::format("cannot read {}: {}", (folder / kModelFile).string(),
                                 error.what_without_backtrace()));
  }
  c10::IValue count_value;
  if (!archive.try_read("num_params", count_value) || !count_value.isInt()) {
    throw ValueError(fmt::format("{} has no parameter count: not a g2c model artifact",
                                 (folder / kModelFile).string()));
  }
  artifact.model = g2c::transformer::TransformerLM(options);
  auto params = artifact.model->parameters();
  const auto saved_count = count_value.toInt();
  if (saved_count != static_cast<std::int64_t>(params.size())) {
    throw ValueError(
        fmt::format("{} holds {} parameter tensors, but the model its config.json "
                    "describes has {}; the files do not belong together",
                    folder.string(), saved_count, params.size()));
  }
  {
    torch::NoGradGuard no_grad;
    for (std::size_t i = 0; i < params.size(); ++i) {
      c10::IValue value;
      const auto key = "param_" + std::to_string(i);
      if (!archive.try_read(key, value) || !value.isTensor()) {
        throw ValueError(fmt::format("{} has no tensor '{}'", (folder / kModelFile).string(), key));
      }
      const auto saved = value.toTensor();
      if (saved.sizes() != params[i].sizes()) {
        throw ValueError(fmt::format("{} parameter {} has shape {}, but the config's model has {}",
                                     folder.string(), i, describe_shape(saved),
                                     describe_shape(params[i])));
      }
      params[i].copy_(saved);
    }
  }
  artifact.model->to(device);
  artifact.model->eval();
  return artifact;
}

}  // namespace g2c::pretraining
