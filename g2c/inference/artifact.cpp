#include "g2c/inference/artifact.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/nn/device.h"
#include "g2c/sampling/text_generation.h"

namespace fs = std::filesystem;

namespace g2c::inference {

namespace {

using g2c::pretraining::best_model_artifact;
using g2c::pretraining::best_model_artifact_with_suffix;
using g2c::pretraining::model_artifact_exists;
using g2c::pretraining::resolve_artifact_name;

/// The stages a preferred artifact is looked for in, strongest first ("" is the base model).
const std::vector<std::string>& stage_preference() {
  static const std::vector<std::string> stages{"-DPO", "-SFT", ""};
  return stages;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

/// A tokenizer that only hands the model ids it has: encode() is the artifact tokenizer's
/// encode_with_vocab_size at the model's vocabulary size.
class VocabularyGuard : public TextCodec {
 public:
  VocabularyGuard(std::shared_ptr<const TextCodec> tokenizer, std::int64_t vocab_size)
      : tokenizer_(std::move(tokenizer)), vocab_size_(vocab_size) {}
  std::vector<std::int64_t> encode(std::string_view text) const override {
    return tokenizer_->encode_with_vocab_size(text, vocab_size_);
  }
  std::string decode(const std::vector<std::int64_t>& ids) const override {
    return tokenizer_->decode(ids);
  }
  std::optional<std::int64_t> special_id(std::string_view token) const override {
    return tokenizer_->special_id(token);
  }

 private:
  std::shared_ptr<const TextCodec> tokenizer_;
  std::int64_t vocab_size_;
};

/// The end token a chat-tuned course model writes, else the end of a document.
std::optional<std::int64_t> default_eos_id(const TextCodec& tokenizer) {
  for (const auto* token : {"<|end|>", "<|endoftext|>"}) {
    if (const auto id = tokenizer.special_id(token)) return id;
  }
  return std::nullopt;
}

LocalBackendOptions local_options(const LoadedModelArtifact& artifact,
                                  ArtifactBackendOptions options) {
  if (artifact.model == nullptr) {
    throw ValueError(
        fmt::format("ArtifactBackend: the artifact \"{}\" has no model", artifact.name));
  }
  if (artifact.tokenizer == nullptr) {
    throw ValueError(
        fmt::format("ArtifactBackend: the artifact \"{}\" has no tokenizer", artifact.name));
  }
  auto value_or_null = [&](const char* key) {
    return artifact.manifest.contains(key) ? artifact.manifest[key] : nlohmann::json(nullptr);
  };
  nlohmann::json extra = {{"artifact_name", artifact.name},
                          {"canonical_name", artifact.canonical_name},
                          {"source", value_or_null("source")},
                          {"kind", artifact.manifest.value("kind", "course_transformer")}};
  extra.update(options.extra);
  return LocalBackendOptions()
      .with_model_id(artifact.name)
      .with_eos_id(options.eos_id ? options.eos_id : default_eos_id(*artifact.tokenizer))
      .with_name(std::move(options.name))
      .with_extra(std::move(extra))
      .with_generate(std::move(options.generate));
}

std::optional<std::string> strongest_saved_artifact(const fs::path& models_dir) {
  for (const auto& stage : stage_preference()) {
    const auto best = stage.empty() ? best_model_artifact(models_dir)
                                    : best_model_artifact_with_suffix(stage, models_dir);
    if (best) return best->name;
  }
  if (model_artifact_exists("BaseLM", models_dir)) return "BaseLM";
  return std::nullopt;
}

}  // namespace

ArtifactBackend::ArtifactBackend(LoadedModelArtifact artifact, ArtifactBackendOptions options)
    : LocalTransformerBackend(artifact.model,
                              artifact.tokenizer ? std::make_shared<VocabularyGuard>(
                                                       artifact.tokenizer, artifact.vocab_size)
                                                 : nullptr,
                              local_options(artifact, std::move(options))),
      artifact_(std::move(artifact)) {
  artifact_.model->eval();
}

LoadedModelArtifact load_model_artifact_with_tokenizer(const std::string& name,
                                                       const ArtifactLoadOptions& options) {
  const auto resolved = resolve_artifact_name(name, options.models_dir);
  auto text_model = g2c::sampling::load_text_model((options.models_dir / resolved).string(),
                                                   g2c::nn::resolve_device(options.device));

  // A stage of a known tier keeps the tier's names: "StoryLM-Small-SFT" -> "StoryLM-5M-SFT".
  LoadedModelArtifact loaded;
  loaded.name = resolved;
  loaded.canonical_name = resolved;
  loaded.display_name = resolved;
  for (const std::string stage : {"-DPO", "-SFT", "-base", ""}) {
    if (!ends_with(resolved, stage)) continue;
    const auto root = resolved.substr(0, resolved.size() - stage.size());
    if (const auto* tier = g2c::pretraining::model_tier_for(root)) {
      const auto shown = stage == "-base" ? std::string() : stage;
      loaded.canonical_name = tier->canonical_name + shown;
      loaded.display_name = tier->display_name + shown;
      loaded.rank = tier->rank;
      break;
    }
  }
  loaded.dir = text_model.artifact.dir;
  loaded.vocab_size = text_model.artifact.model->vocab_size;
  loaded.model = text_model.artifact.model.ptr();
  loaded.tokenizer = std::make_shared<TextTokenizerCodec>(std::move(text_model.tokenizer));
  loaded.manifest = text_model.artifact.manifest;
  loaded.training_config = loaded.manifest.value("training_config", nlohmann::json::object());
  return loaded;
}

std::string resolve_preferred_artifact_name(std::string_view selection,
                                            const fs::path& models_dir) {
  const auto first = selection.find_first_not_of(" \t\n");
  const auto last = selection.find_last_not_of(" \t\n");
  if (first == std::string_view::npos) {
    throw ValueError(
        "resolve_preferred_artifact_name needs a selection (\"course\" or an artifact name such "
        "as \"ShakespeareLM-1M\"), got an empty one");
  }
  const auto wanted = selection.substr(first, last - first + 1);

  if (wanted == "course") {
    for (const auto& stage : stage_preference()) {
      const auto best = stage.empty() ? best_model_artifact(models_dir)
                                      : best_model_artifact_with_suffix(stage, models_dir, {});
      if (best) return best->name;
    }
    throw FileNotFoundError(fmt::format(
        "no course-trained model in {} (looked for -DPO, -SFT and base artifacts of the course's "
        "tiers): run module 10's pretraining (exercises/10-pretraining) or name an artifact",
        models_dir.string()));
  }

  if (ends_with(wanted, "-DPO") || ends_with(wanted, "-SFT")) {
    return resolve_artifact_name(wanted, models_dir);
  }
  for (const auto& stage : stage_preference()) {
    try {
      const auto resolved = resolve_artifact_name(std::string(wanted) + stage, models_dir);
      if (model_artifact_exists(resolved, models_dir)) return resolved;
    } catch (const FileNotFoundError&) {
    }
  }
  throw FileNotFoundError(
      fmt::format("no artifact for \"{0}\" in {1}: tried {0}-DPO, {0}-SFT and {0} itself", wanted,
                  models_dir.string()));
}

std::unique_ptr<ArtifactBackend> load_artifact_backend(const std::optional<std::string>& name,
                                                       const ArtifactLoadOptions& options) {
  const auto chosen = name ? name : strongest_saved_artifact(options.models_dir);
  if (!chosen) {
    if (!options.required) return nullptr;
    throw FileNotFoundError(fmt::format(
        "no model artifact in {}: train one with module 10's pretraining "
        "(exercises/10-pretraining), then modules 13 and 14 add its -SFT and -DPO stages",
        options.models_dir.string()));
  }
  return std::make_unique<ArtifactBackend>(load_model_artifact_with_tokenizer(*chosen, options));
}

}  // namespace g2c::inference
