// Module 10 — model artifacts: a trained TransformerLM saved under a name and loaded back by it.
//
// clang-format off
//   artifacts/models/<name>/
//     model.pt        LibTorch archive: "vocab_size", "num_params", "param_<i>" in parameters() order
//     config.json     {"model_config": {...}, "training_config": {...}}
//     manifest.json   name, module, source, tokenizer_artifact (by name), vocab_size, model_config,
//                     training_config, seed, git_commit, created_at (UTC), steps_completed,
//                     final_train_loss, final_val_loss, notes
// clang-format on
// Each file is written atomically. A generator loads the model and its manifest, then the tokenizer
// artifact the manifest names:
//   auto artifact = load_model_artifact("ShakespeareLM-1M");
//   auto tokenizer = g2c::tokenizer::load_tokenizer_artifact(
//       artifact.manifest["tokenizer_artifact"].get<std::string>()).tokenizer;
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "g2c/pretraining/trainer.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::pretraining {

inline constexpr std::string_view kShakespeareLM = "ShakespeareLM-1M";

/// The course's model tiers by alias: "ShakespeareLM" -> "ShakespeareLM-1M", "StoryLM-Small" ->
/// "StoryLM-5M", "StoryLM" -> "StoryLM-30M"; any other name is returned unchanged.
std::string canonical_model_name(std::string_view name);

/// Where model artifacts live: $G2C_ARTIFACTS_DIR/models if set, else <project>/artifacts/models.
std::filesystem::path models_root();
/// models_root()/<canonical name>.
std::filesystem::path model_artifact_dir(std::string_view name);

/// {"vocab_size", "embedding_dim", "num_layers", "num_heads", "max_seq_len", "hidden_dim"}.
nlohmann::json model_config_json(const g2c::transformer::TransformerLMOptions& options);
/// The inverse; ValueError naming the missing or malformed key.
g2c::transformer::TransformerLMOptions model_config_from_json(const nlohmann::json& config);

/// What the manifest records besides the model itself.
struct ModelArtifactInfo {
  std::string name;                  // e.g. "ShakespeareLM-1M"
  std::string module = "module-10";  // the lesson that made it
  std::string source;                // the corpus, e.g. "tinyshakespeare.txt"
  std::string tokenizer_artifact;    // by name, e.g. "ShakespeareTokenizer"
  nlohmann::json training_config = nlohmann::json::object();
  std::optional<std::uint64_t> seed;
  TrainingHistory history;  // final losses and steps come from here
  std::string notes;
};

/// Writes model.pt, config.json and manifest.json into `dir` (default model_artifact_dir(name)),
/// each atomically, and returns the folder. The model may live on any device; tensors are saved
/// from the CPU. ValueError for an empty name.
/// Example: save_model_artifact({.name = "ShakespeareLM-1M", .tokenizer_artifact =
///          "ShakespeareTokenizer"}, model);
std::filesystem::path save_model_artifact(const ModelArtifactInfo& info,
                                          const g2c::transformer::TransformerLM& model,
                                          std::optional<std::filesystem::path> dir = std::nullopt);

/// A loaded artifact.
struct ModelArtifact {
  std::filesystem::path dir;
  g2c::transformer::TransformerLM model{nullptr};  // rebuilt from config.json, in eval mode
  nlohmann::json manifest;
  nlohmann::json config;  // config.json
};

/// Loads an artifact by name (or alias) or by folder path: rebuilds the TransformerLM from
/// config.json and copies the saved parameters into it on `device`. ValueError when the artifact
/// does not exist (saying which command makes it) or the saved parameters do not fit the config
/// (count or shape, naming both).
ModelArtifact load_model_artifact(const std::string& name_or_dir,
                                  torch::Device device = torch::Device(torch::kCPU));

}  // namespace g2c::pretraining
