// Module 10 — model artifacts: a trained TransformerLM saved under a name and loaded back by it,
// in the Python edition's layout, so that a model trained in either edition loads in the other.
//
// clang-format off
//   artifacts/models/<name>/
//     model.pt        an archive (g2c/core/archive.h; what torch.save writes) of the dict
//                       {"vocab_size": V,
//                        "model_config": {embedding_dim, num_layers, num_heads, max_seq_len,
//                                         hidden_dim},   the Python TransformerLM's keywords;
//                                                        hidden_dim the real width (4·D by default)
//                        "params": [tensors in the Python TransformerLM.parameters() order]}
//                     Python: torch.load(path, weights_only=True) reads it (the Python edition's
//                     loader passes weights_only=False, which reads it too)
//     config.json     {"model_config": {...the same...}, "training_config": {...}}
//     manifest.json   name, module, source, tokenizer_artifact (by name), vocab_size, model_config,
//                     training_config, seed, git_commit, created_at (UTC), steps_completed,
//                     final_train_loss, final_val_loss, notes, base_artifact (the artifact a
//                     derived -SFT / -DPO model was tuned from; null for a base model),
//                     parameter_count
// clang-format on
// The parameter order, block by block: token_embed.weight (V, D), pos_embed.weight
// (max_seq_len, D); per block ln1 gamma, beta, attn q_proj W, b, k_proj W, b, v_proj W, b,
// out_proj W, b, ln2 gamma, beta, ffn fc1 W, b, fc2 W, b; then ln_final gamma, beta and the head's
// bias (V). Linear weights are W (in, out) in both editions. The model is rebuilt from model.pt
// itself, the one authority on it: config.json's and manifest.json's copies of its description,
// when present, must agree with it.
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

#include <nlohmann/json.hpp>
#include "g2c/core/torch.h"

#include "g2c/pretraining/artifact_names.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::pretraining {

inline constexpr std::string_view kShakespeareLM = "ShakespeareLM-1M";

/// A tier's alias to its name (artifact_names.h): "ShakespeareLM" -> "ShakespeareLM-1M",
/// "StoryLM-Small" -> "StoryLM-5M", "StoryLM" -> "StoryLM-30M", "TinyLLM" -> "TinyLLM-30M"; any
/// other name is returned unchanged.
std::string canonical_model_name(std::string_view name);

/// Where model artifacts live: $G2C_ARTIFACTS_DIR/models if set, else <project>/artifacts/models.
std::filesystem::path models_root();
/// models_root()/<canonical name>.
std::filesystem::path model_artifact_dir(std::string_view name);

/// The Python TransformerLM's keyword arguments: {"embedding_dim", "num_layers", "num_heads",
/// "max_seq_len", "hidden_dim"}, hidden_dim the real width (4·D when options.hidden_dim() is 0).
/// vocab_size is not among them: the Python edition keeps it beside model_config.
/// Example: (V 264, D 128, L 4, H 4, T 128) -> {"embedding_dim": 128, "num_layers": 4,
/// "num_heads": 4, "max_seq_len": 128, "hidden_dim": 512}.
nlohmann::json model_config_json(const g2c::transformer::TransformerLMOptions& options);
/// The inverse, with the vocabulary size beside it. hidden_dim may be missing or null (4·D, as in
/// the Python constructor). ValueError naming a missing, malformed or unknown key.
g2c::transformer::TransformerLMOptions model_config_from_json(std::int64_t vocab_size,
                                                              const nlohmann::json& config);

/// The model's parameters in the Python TransformerLM.parameters() order (see above), looked up
/// by name. Example: a model with L = 2 -> 37 tensors, token_embed.weight first, head.bias last.
std::vector<torch::Tensor> python_ordered_parameters(
    const g2c::transformer::TransformerLMImpl& model);

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
  /// The artifact a derived model was tuned from (e.g. "StoryLM-30M" for "StoryLM-30M-SFT");
  /// unset for a base model, written as null.
  std::optional<std::string> base_artifact = std::nullopt;
};

/// Writes model.pt, config.json and manifest.json into `dir` (default model_artifact_dir(name)),
/// each atomically, and returns the folder. The model may live on any device; tensors are saved
/// from the CPU. ValueError for an empty name.
/// Example: save_model_artifact({.name = "ShakespeareLM-1M", .tokenizer_artifact =
///          "ShakespeareTokenizer"}, model);
std::filesystem::path save_model_artifact(const ModelArtifactInfo& info,
                                          const g2c::transformer::TransformerLM& model,
                                          std::optional<std::filesystem::path> dir = std::nullopt);

/// The manifest's fields the course's programs show or follow, read once when an artifact loads.
/// save_model_artifact writes the final losses as null when no evaluation ran and base_artifact as
/// null for a base model: here they are empty optionals, never an exception.
struct ManifestSummary {
  std::string name;                // the folder's name when the manifest has none
  std::string module;              // the lesson that made it, e.g. "module-13"
  std::string tokenizer_artifact;  // empty: the model was trained on characters
  std::int64_t steps_completed = 0;
  std::optional<double> final_train_loss;    // unset: not recorded
  std::optional<double> final_val_loss;      // unset: no evaluation ran
  std::optional<std::string> base_artifact;  // the artifact a derived model was tuned from
};

/// Reads a manifest.json's contents (`file` names it in messages). A missing or null field takes
/// the default above; a field of the wrong type (a string where a number belongs) is a ValueError
/// naming the file, the key and what it holds.
ManifestSummary read_manifest_summary(const nlohmann::json& manifest,
                                      const std::filesystem::path& file);

/// A loaded artifact.
struct ModelArtifact {
  std::filesystem::path dir;
  g2c::transformer::TransformerLM model{nullptr};  // rebuilt from model.pt, in eval mode
  nlohmann::json manifest;
  ManifestSummary summary;  // the fields of `manifest` programs read
  nlohmann::json config;    // config.json ({"model_config": ...} from model.pt when there is none)
};

/// Loads an artifact by name (or alias) or by folder path, written by this edition or the Python
/// one: rebuilds the TransformerLM from model.pt's vocab_size and model_config and copies the
/// saved parameters into it on `device`. ValueError when the artifact does not exist (saying which
/// command makes it), model.pt cannot be read, config.json disagrees with model.pt, or the saved
/// parameters do not fit the config (count, shape or dtype, naming both).
ModelArtifact load_model_artifact(const std::string& name_or_dir,
                                  torch::Device device = torch::Device(torch::kCPU));

/// The line a program prints about the model it loaded. Examples:
///   "ShakespeareLM-1M: 843784 parameters, trained 1000 steps, validation loss 2.013"
///   "ShakespeareLM-1M-SFT: 843784 parameters, trained 30 steps, not evaluated"
std::string describe_model_artifact(const ModelArtifact& artifact);

}  // namespace g2c::pretraining
