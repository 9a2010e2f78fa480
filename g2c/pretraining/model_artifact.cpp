#include "g2c/pretraining/model_artifact.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/archive.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/clock.h"
#include "g2c/core/errors.h"
#include "g2c/pretraining/build_info.h"

namespace g2c::pretraining {

namespace fs = std::filesystem;

namespace {

constexpr const char* kModelFile = "model.pt";
/// The Python edition's layout, untagged. No .bak, as in the Python edition: model.pt, config.json
/// and manifest.json belong together, and a model.pt.bak would belong to none of them.
const g2c::ArchiveKind kModelFileKind{.what = "model file",
                                      .format = "",
                                      .version = 0,
                                      .remedy = "save the artifact again",
                                      .keeps_backup = false};
constexpr const char* kConfigFile = "config.json";
constexpr const char* kManifestFile = "manifest.json";
// The Python TransformerLM's keyword arguments besides vocab_size, in its constructor's order.
constexpr std::array<const char*, 5> kModelConfigKeys = {"embedding_dim", "num_layers", "num_heads",
                                                         "max_seq_len", "hidden_dim"};

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

ManifestSummary read_manifest_summary(const nlohmann::json& manifest, const fs::path& file) {
  // A missing or null field keeps its default; any other value must have the field's type.
  const auto field = [&](const char* key, auto is_type,
                         const char* expected) -> const nlohmann::json* {
    const auto found = manifest.find(key);
    if (found == manifest.end() || found->is_null()) return nullptr;
    if (!is_type(*found)) {
      throw ValueError(fmt::format("{}: '{}' should be {} or null, got {}; save the artifact again",
                                   file.string(), key, expected, found->dump()));
    }
    return &*found;
  };
  const auto is_string = [](const nlohmann::json& v) { return v.is_string(); };
  const auto is_number = [](const nlohmann::json& v) { return v.is_number(); };
  const auto is_integer = [](const nlohmann::json& v) { return v.is_number_integer(); };

  ManifestSummary summary;
  summary.name = file.parent_path().filename().string();
  if (const auto* v = field("name", is_string, "a string")) summary.name = v->get<std::string>();
  if (const auto* v = field("module", is_string, "a string"))
    summary.module = v->get<std::string>();
  if (const auto* v = field("tokenizer_artifact", is_string, "a string")) {
    summary.tokenizer_artifact = v->get<std::string>();
  }
  if (const auto* v = field("steps_completed", is_integer, "an integer")) {
    summary.steps_completed = v->get<std::int64_t>();
  }
  if (const auto* v = field("final_train_loss", is_number, "a number")) {
    summary.final_train_loss = v->get<double>();
  }
  if (const auto* v = field("final_val_loss", is_number, "a number")) {
    summary.final_val_loss = v->get<double>();
  }
  if (const auto* v = field("base_artifact", is_string, "a string")) {
    summary.base_artifact = v->get<std::string>();
  }
  return summary;
}

std::string describe_model_artifact(const ModelArtifact& artifact) {
  std::int64_t parameters = 0;
  for (const auto& p : artifact.model->parameters()) parameters += p.numel();
  const auto& s = artifact.summary;
  return fmt::format("{}: {} parameters, trained {} steps, {}", s.name, parameters,
                     s.steps_completed,
                     s.final_val_loss ? fmt::format("validation loss {:.3f}", *s.final_val_loss)
                                      : std::string("not evaluated"));
}

std::string canonical_model_name(std::string_view name) {
  for (const auto& tier : model_tiers()) {
    for (const auto& alias : tier.aliases) {
      if (alias == name) return tier.canonical_name;
    }
  }
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
  const auto hidden_dim =
      options.hidden_dim() == 0 ? 4 * options.embedding_dim() : options.hidden_dim();
  return {{"embedding_dim", options.embedding_dim()},
          {"num_layers", options.num_layers()},
          {"num_heads", options.num_heads()},
          {"max_seq_len", options.max_seq_len()},
          {"hidden_dim", hidden_dim}};
}

g2c::transformer::TransformerLMOptions model_config_from_json(std::int64_t vocab_size,
                                                              const nlohmann::json& config) {
  if (!config.is_object()) {
    throw ValueError(
        fmt::format("model_config should be a dict of the TransformerLM's keyword "
                    "arguments ({}), got {}",
                    fmt::join(kModelConfigKeys, ", "), config.dump()));
  }
  for (const auto& [key, value] : config.items()) {
    if (std::find_if(kModelConfigKeys.begin(), kModelConfigKeys.end(),
                     [&](const char* known) { return key == known; }) == kModelConfigKeys.end()) {
      throw ValueError(fmt::format(
          "model_config has an unknown key '{}' (the keys are {}){}", key,
          fmt::join(kModelConfigKeys, ", "),
          key == "vocab_size" ? "; vocab_size belongs beside model_config, not inside it (a file "
                                "from an older g2c build: save the model again)"
                              : ""));
    }
  }
  const auto get = [&](const char* key) -> std::int64_t {
    if (!config.contains(key) || !config.at(key).is_number_integer()) {
      throw ValueError(fmt::format("model_config needs an integer '{}', got {}", key,
                                   config.contains(key) ? config.at(key).dump() : "nothing"));
    }
    return config.at(key).get<std::int64_t>();
  };
  const bool default_width = !config.contains("hidden_dim") || config.at("hidden_dim").is_null();
  return g2c::transformer::TransformerLMOptions(vocab_size, get("embedding_dim"), get("num_layers"),
                                                get("num_heads"), get("max_seq_len"))
      .hidden_dim(default_width ? 0 : get("hidden_dim"));
}

std::vector<torch::Tensor> python_ordered_parameters(
    const g2c::transformer::TransformerLMImpl& model) {
  std::vector<std::string> names = {"token_embed.weight", "pos_embed.weight"};
  for (std::int64_t i = 0; i < model.num_layers; ++i) {
    const auto block = fmt::format("blocks.{}.", i);
    for (const char* name :
         {"ln1.gamma", "ln1.beta", "attn.q_proj.W", "attn.q_proj.b", "attn.k_proj.W",
          "attn.k_proj.b", "attn.v_proj.W", "attn.v_proj.b", "attn.out_proj.W", "attn.out_proj.b",
          "ln2.gamma", "ln2.beta", "ffn.fc1.W", "ffn.fc1.b", "ffn.fc2.W", "ffn.fc2.b"}) {
      names.push_back(block + name);
    }
  }
  names.insert(names.end(), {"ln_final.gamma", "ln_final.beta", "head.bias"});
  const auto named = model.named_parameters(/*recurse=*/true);
  std::vector<torch::Tensor> ordered;
  for (const auto& name : names) {
    const auto* found = named.find(name);
    if (!found) {
      throw ValueError(fmt::format(
          "the TransformerLM has no parameter '{}' (it has {}): its modules were renamed; update "
          "python_ordered_parameters in g2c/pretraining/model_artifact.cpp to match",
          name, fmt::join(named.keys(), ", ")));
    }
    ordered.push_back(*found);
  }
  if (ordered.size() != named.size()) {
    throw ValueError(
        fmt::format("the TransformerLM has {} parameters, the Python edition's {}: "
                    "update python_ordered_parameters in "
                    "g2c/pretraining/model_artifact.cpp to match",
                    named.size(), ordered.size()));
  }
  return ordered;
}

fs::path save_model_artifact(const ModelArtifactInfo& info,
                             const g2c::transformer::TransformerLM& model,
                             std::optional<fs::path> dir) {
  if (info.name.empty())
    throw ValueError("save_model_artifact needs a name, e.g. ShakespeareLM-1M");
  const fs::path folder = dir ? *dir : model_artifact_dir(info.name);
  const auto model_config = model_config_json(model->options);

  // Python: {"vocab_size": ..., "model_config": dict(model_config), "params": [...]}.
  auto weights = archive_dict();
  weights.insert("vocab_size", model->vocab_size);
  weights.insert("model_config", to_archive_value(model_config));
  weights.insert("params", archive_tensors(python_ordered_parameters(*model)));

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
      {"created_at", g2c::utc_timestamp()},
      {"steps_completed", h.step.empty() ? 0 : h.step.back() + 1},
      {"final_train_loss", last_or_null(h.train_loss)},
      {"final_val_loss", last_or_null(h.val_loss)},
      {"notes", info.notes},
      {"base_artifact",
       info.base_artifact ? nlohmann::json(*info.base_artifact) : nlohmann::json(nullptr)},
      {"parameter_count", g2c::transformer::parameter_count(model->options)}};
  // The manifest last: a folder with a manifest has its model and config complete. No .bak of
  // model.pt, as in the Python edition: the three files belong together.
  write_archive(folder / kModelFile, weights, kModelFileKind);
  write_json_atomic(folder / kConfigFile, config);
  write_json_atomic(folder / kManifestFile, manifest);
  return folder;
}

ModelArtifact load_model_artifact(const std::string& name_or_dir, torch::Device device) {
  const fs::path as_path(name_or_dir);
  const fs::path folder = fs::is_directory(as_path) ? as_path : model_artifact_dir(name_or_dir);
  const bool has_model = fs::exists(folder / kModelFile);
  if (!fs::is_regular_file(folder / kManifestFile) || !has_model) {
    throw ValueError(fmt::format(
        "no model artifact '{}' at {} (manifest.json and model.pt are needed). Train and save one "
        "with `scripts/run.sh 10_pretrain` (ShakespeareLM-1M), or pass the folder of a saved "
        "artifact",
        name_or_dir, folder.string()));
  }
  // The model is a new one, built from model.pt's own config and filled only once every saved
  // tensor has been checked against it.
  ModelArtifact artifact;
  artifact.dir = folder;
  artifact.manifest = read_json(folder / kManifestFile);
  artifact.summary = read_manifest_summary(artifact.manifest, folder / kManifestFile);
  const auto weights = read_archive(folder / kModelFile, kModelFileKind);
  const auto vocab_size = weights.integer("vocab_size");
  const auto model_config = weights.json("model_config");
  const auto options = model_config_from_json(vocab_size, model_config);
  // model.pt is the authority on the model. The copies of its description in config.json and
  // manifest.json, where present, must describe the same model: files that disagree do not belong
  // together, and a reader of either copy would be misled.
  const auto check_copy = [&](const fs::path& file, const nlohmann::json& record) {
    const auto described = record.value("model_config", nlohmann::json());
    const auto described_vocab = record.value("vocab_size", nlohmann::json(vocab_size));
    if (described.is_null()) return;
    const bool same_vocab =
        described_vocab.is_number_integer() && described_vocab.get<std::int64_t>() == vocab_size;
    if (!same_vocab || model_config_json(model_config_from_json(vocab_size, described)) !=
                           model_config_json(options)) {
      throw ValueError(fmt::format(
          "{} describes the model {} (vocab_size {}), but {} holds {} (vocab_size {}); the files "
          "do not belong together: save the artifact again",
          file.string(), described.dump(), described_vocab.dump(), weights.path().string(),
          model_config.dump(), vocab_size));
    }
  };
  check_copy(folder / kManifestFile, artifact.manifest);
  if (fs::is_regular_file(folder / kConfigFile)) {
    artifact.config = read_json(folder / kConfigFile);
    check_copy(folder / kConfigFile, artifact.config);
  } else {
    artifact.config = {{"model_config", model_config_json(options)}};
  }
  const auto saved = weights.tensors("params");
  g2c::transformer::TransformerLM model(options);
  const auto targets = python_ordered_parameters(*model);
  check_fit(saved, targets, "parameter", weights,
            fmt::format("the parameters do not fit the model its model_config describes ({}, "
                        "vocab_size {}): save the artifact again",
                        model_config.dump(), vocab_size));
  copy_into(saved, targets);
  model->to(device);
  model->eval();
  artifact.model = model;
  return artifact;
}

}  // namespace g2c::pretraining
