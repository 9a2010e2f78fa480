// Module 16 — a Backend over a saved course model: the base model of module 10, its -SFT
// (module 13) and -DPO (module 14) descendants, the scaling ladder's rungs. Where
// LocalTransformerBackend takes any model and tokenizer, ArtifactBackend takes an artifact and
// fills in what the artifact knows: the tokenizer its manifest names (kept inside the model's
// vocabulary), the end token the chat lessons trained ("<|end|>"), and where the model came from
// in info().extra. Provided, not scaffolded: complete() is the LocalTransformerBackend one you
// wrote.
//
//   auto backend = load_artifact_backend();               // the strongest model you have saved
//   auto backend = load_artifact_backend("StoryLM-5M");   // that name exactly
//   resolve_preferred_artifact_name("ShakespeareLM-1M")   // "ShakespeareLM-1M-DPO" if you made
//                                                         // one, else -SFT, else the base model
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include "g2c/core/torch.h"

#include "g2c/inference/local.h"
#include "g2c/pretraining/model_artifact.h"

namespace g2c::inference {

/// A saved model with its tokenizer, ready to generate. The Python edition's
/// g2c.artifacts.LoadedModelArtifact.
struct LoadedModelArtifact {
  std::string name;            // the folder's name, e.g. "StoryLM-5M-DPO"
  std::string canonical_name;  // the tier's name with the stage, e.g. "StoryLM-5M-DPO"
  std::string display_name;    // e.g. "StoryLM 5M-DPO"
  int rank = 0;                // artifact_names.h: larger is stronger; 0 outside the tiers
  std::filesystem::path dir;
  std::shared_ptr<g2c::nn::Module> model;      // in eval mode once a backend holds it
  std::int64_t vocab_size = 0;                 // ids the model's embedding and head have
  std::shared_ptr<const TextCodec> tokenizer;  // the one named by the manifest
  nlohmann::json manifest = nlohmann::json::object();
  nlohmann::json training_config = nlohmann::json::object();
};

/// Where artifacts are looked for and where a loaded model goes.
struct ArtifactLoadOptions {
  std::filesystem::path models_dir = g2c::pretraining::models_root();
  std::string device = "auto";  // g2c::nn::resolve_device's names: "auto", "cpu", "cuda", "mps"
  bool required = true;         // false: nullptr instead of FileNotFoundError when none exists

  ArtifactLoadOptions& with_models_dir(std::filesystem::path value) {
    models_dir = std::move(value);
    return *this;
  }
  ArtifactLoadOptions& with_device(std::string value) {
    device = std::move(value);
    return *this;
  }
  ArtifactLoadOptions& with_required(bool value) {
    required = value;
    return *this;
  }
};

/// Loads `name` (resolved by pretraining::resolve_artifact_name: a tier or alias means its base
/// model) and the tokenizer artifact its manifest names. FileNotFoundError when nothing of that
/// name is saved; ValueError for a broken artifact or a manifest without a tokenizer.
LoadedModelArtifact load_model_artifact_with_tokenizer(const std::string& name,
                                                       const ArtifactLoadOptions& options = {});

struct ArtifactBackendOptions {
  std::optional<std::int64_t> eos_id;  // unset: the tokenizer's "<|end|>", else "<|endoftext|>"
  std::string name = "artifact";
  nlohmann::json extra = nlohmann::json::object();  // merged over the artifact's provenance
  GenerateFunction generate = generate_with_transformer;

  ArtifactBackendOptions& with_eos_id(std::optional<std::int64_t> value) {
    eos_id = value;
    return *this;
  }
  ArtifactBackendOptions& with_name(std::string value) {
    name = std::move(value);
    return *this;
  }
  ArtifactBackendOptions& with_extra(nlohmann::json value) {
    extra = std::move(value);
    return *this;
  }
  ArtifactBackendOptions& with_generate(GenerateFunction value) {
    generate = std::move(value);
    return *this;
  }
};

class ArtifactBackend : public LocalTransformerBackend {
 public:
  /// info(): name "artifact", model_id the artifact's name, extra {"artifact_name",
  /// "canonical_name", "source" and "kind" (from the manifest), …options.extra}. Prompts are
  /// encoded with the tokenizer's encode_with_vocab_size(prompt, artifact.vocab_size). ValueError
  /// for an artifact without a model or a tokenizer.
  explicit ArtifactBackend(LoadedModelArtifact artifact, ArtifactBackendOptions options = {});

  const LoadedModelArtifact& artifact() const { return artifact_; }
  /// The artifact's tokenizer itself, before the vocabulary guard this backend encodes through.
  const std::shared_ptr<const TextCodec>& raw_tokenizer() const { return artifact_.tokenizer; }

 private:
  LoadedModelArtifact artifact_;
};

/// The artifact `selection` means, strongest stage first:
///   "course"           the strongest course-trained model: the best -DPO tier, else the best
///                      -SFT tier, else the best base tier (BaseLM, a fine-tuned pretrained
///                      model, never counts as course-trained)
///   "StoryLM-5M"       "StoryLM-5M-DPO", else "StoryLM-5M-SFT", else the base model
///   "StoryLM-5M-SFT"   exactly that (a name that already ends in -DPO or -SFT)
/// ValueError for an empty selection; FileNotFoundError saying what was tried.
std::string resolve_preferred_artifact_name(
    std::string_view selection,
    const std::filesystem::path& models_dir = g2c::pretraining::models_root());

/// An ArtifactBackend over `name`, or, without a name, over the strongest saved model: the best
/// -DPO, else -SFT, else base tier, else BaseLM. nullptr when nothing is saved and
/// options.required is false; FileNotFoundError (with the command that trains one) when it is true.
std::unique_ptr<ArtifactBackend> load_artifact_backend(
    const std::optional<std::string>& name = std::nullopt, const ArtifactLoadOptions& options = {});

}  // namespace g2c::inference
