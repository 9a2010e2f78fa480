// Model artifacts by name: the course's model tiers, the stage suffixes of derived models, and
// which saved artifact a name means. Modules 16-20 ask for "the strongest model you have" or "the
// best stage of StoryLM-5M" and get a concrete folder under artifacts/models/, in the Python
// edition's conventions so a folder written by either edition is found by both.
//
//   tier                rank   aliases          stages on disk
//   ShakespeareLM-1M      10   ShakespeareLM    ShakespeareLM-1M[-base], ShakespeareLM-1M-SFT, -DPO
//   StoryLM-1M            15
//   StoryLM-5M            20   StoryLM-Small
//   StoryLM-10M           30
//   StoryLM-30M           35   StoryLM
//   TinyLLM-30M           40   TinyLLM
//   TinyLLM-100M          50
//   (BaseLM, a fine-tuned pretrained model, ranks 100 among -SFT and -DPO artifacts)
//
// A base model is saved as "<tier>" (this edition's modules 09-10) or "<tier>-base" (the Python
// edition's newer name); both are found, "-base" first. Derived models append "-SFT" or "-DPO" to
// the tier's name or one of its aliases.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace g2c::pretraining {

inline constexpr std::string_view kBaseStageSuffix = "-base";

/// One model size of the course, strongest last by `rank`.
struct ModelTier {
  std::string canonical_name;        // "StoryLM-5M"
  std::string display_name;          // "StoryLM 5M"
  int rank = 0;                      // larger: a stronger model downstream modules prefer
  std::vector<std::string> aliases;  // older or shorter names: "StoryLM-Small"

  /// The names a base model of this tier may be saved under: "<name>-base", "<name>", aliases.
  std::vector<std::string> base_names() const;
  /// The names a derived model's suffix is appended to: "<name>", then the aliases.
  std::vector<std::string> stage_roots() const;
};

/// The course's tiers, weakest first (the table above).
const std::vector<ModelTier>& model_tiers();
/// The tier `name` is a base name of ("StoryLM-Small", "StoryLM-5M-base", "StoryLM-5M"), or null.
const ModelTier* model_tier_for(std::string_view name);

/// An artifact found on disk.
struct AvailableModelArtifact {
  std::string name;            // the folder's name, e.g. "StoryLM-5M-SFT"
  std::string canonical_name;  // the tier's name with the suffix, e.g. "StoryLM-5M-SFT"
  std::string display_name;    // e.g. "StoryLM 5M-SFT"
  int rank = 0;
  std::filesystem::path dir;
};

/// Whether `models_dir`/`name` holds a complete course artifact (model.pt, config.json and
/// manifest.json all present).
bool model_artifact_exists(std::string_view name, const std::filesystem::path& models_dir);

/// The base models on disk, one per tier (its first saved base name), weakest first.
std::vector<AvailableModelArtifact> available_model_artifacts(
    const std::filesystem::path& models_dir);
/// The derived models with `suffix` ("-SFT", "-DPO") on disk, one per tier, then the artifacts
/// "<extra>" + suffix (ranked from 100 on), weakest first. ValueError for an empty suffix.
std::vector<AvailableModelArtifact> available_model_artifacts_with_suffix(
    std::string_view suffix, const std::filesystem::path& models_dir,
    const std::vector<std::string>& extra_base_names = {"BaseLM"});
/// The last of the lists above, if any.
std::optional<AvailableModelArtifact> best_model_artifact(const std::filesystem::path& models_dir);
std::optional<AvailableModelArtifact> best_model_artifact_with_suffix(
    std::string_view suffix, const std::filesystem::path& models_dir,
    const std::vector<std::string>& extra_base_names = {"BaseLM"});

/// The folder name `name` means in `models_dir`: a tier or alias -> its base model ("-base" first,
/// then the tier's name, then its aliases); a name on disk -> itself; a family without a size
/// ("StoryLM-SFT") -> the largest size of that family at that stage. ValueError for an empty name;
/// NotFoundError saying what was tried when nothing matches.
std::string resolve_artifact_name(std::string_view name, const std::filesystem::path& models_dir);

}  // namespace g2c::pretraining
