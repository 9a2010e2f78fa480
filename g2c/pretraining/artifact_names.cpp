#include "g2c/pretraining/artifact_names.h"

#include <algorithm>
#include <cstdint>
#include <regex>
#include <tuple>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace fs = std::filesystem;

namespace g2c::pretraining {

namespace {

AvailableModelArtifact found(const std::string& name, std::string canonical, std::string display,
                             int rank, const fs::path& models_dir) {
  return {name, std::move(canonical), std::move(display), rank, models_dir / name};
}

void sort_by_rank(std::vector<AvailableModelArtifact>& artifacts) {
  std::stable_sort(artifacts.begin(), artifacts.end(),
                   [](const auto& a, const auto& b) { return a.rank < b.rank; });
}

/// An artifact name's parts: "StoryLM-5M-SFT" -> ("StoryLM", "5M", "SFT"); parts that are neither
/// a size nor a stage ("Small") are ignored.
struct NameParts {
  std::string family;
  std::optional<std::string> size;
  std::optional<std::string> stage;
};

const std::regex& size_pattern() {
  static const std::regex pattern(R"(^(\d+(?:\.\d+)?)([KMB])$)");
  return pattern;
}

NameParts parse_artifact_name(std::string_view name) {
  NameParts parts;
  std::size_t start = 0;
  bool first = true;
  while (start <= name.size()) {
    const auto dash = name.find('-', start);
    const auto piece = std::string(
        name.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start));
    if (first) {
      parts.family = piece;
      first = false;
    } else if (piece == "base" || piece == "SFT" || piece == "DPO") {
      parts.stage = piece;
    } else if (std::regex_match(piece, size_pattern())) {
      parts.size = piece;
    }
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  return parts;
}

/// "5M" -> 5,000,000.
double size_in_parameters(const std::string& size) {
  std::smatch match;
  std::regex_match(size, match, size_pattern());
  const double unit = match[2] == "K" ? 1e3 : match[2] == "M" ? 1e6 : 1e9;
  return std::stod(match[1]) * unit;
}

}  // namespace

std::vector<std::string> ModelTier::base_names() const {
  std::vector<std::string> names{canonical_name + std::string(kBaseStageSuffix), canonical_name};
  names.insert(names.end(), aliases.begin(), aliases.end());
  return names;
}

std::vector<std::string> ModelTier::stage_roots() const {
  std::vector<std::string> names{canonical_name};
  names.insert(names.end(), aliases.begin(), aliases.end());
  return names;
}

const std::vector<ModelTier>& model_tiers() {
  static const std::vector<ModelTier> tiers{
      {"ShakespeareLM-1M", "ShakespeareLM", 10, {"ShakespeareLM"}},
      {"StoryLM-1M", "StoryLM 1M", 15, {}},
      {"StoryLM-5M", "StoryLM 5M", 20, {"StoryLM-Small"}},
      {"StoryLM-10M", "StoryLM 10M", 30, {}},
      {"StoryLM-30M", "StoryLM 30M", 35, {"StoryLM"}},
      {"TinyLLM-30M", "TinyLLM 30M", 40, {"TinyLLM"}},
      {"TinyLLM-100M", "TinyLLM 100M", 50, {}},
  };
  return tiers;
}

const ModelTier* model_tier_for(std::string_view name) {
  for (const auto& tier : model_tiers()) {
    const auto names = tier.base_names();
    if (std::find(names.begin(), names.end(), name) != names.end()) return &tier;
  }
  return nullptr;
}

bool model_artifact_exists(std::string_view name, const fs::path& models_dir) {
  if (name.empty()) return false;
  const auto dir = models_dir / std::string(name);
  return fs::exists(dir / "model.pt") && fs::exists(dir / "config.json") &&
         fs::exists(dir / "manifest.json");
}

std::vector<AvailableModelArtifact> available_model_artifacts(const fs::path& models_dir) {
  std::vector<AvailableModelArtifact> artifacts;
  for (const auto& tier : model_tiers()) {
    for (const auto& name : tier.base_names()) {
      if (model_artifact_exists(name, models_dir)) {
        artifacts.push_back(
            found(name, tier.canonical_name, tier.display_name, tier.rank, models_dir));
        break;
      }
    }
  }
  sort_by_rank(artifacts);
  return artifacts;
}

std::vector<AvailableModelArtifact> available_model_artifacts_with_suffix(
    std::string_view suffix, const fs::path& models_dir,
    const std::vector<std::string>& extra_base_names) {
  if (suffix.empty()) {
    throw ValueError(
        "available_model_artifacts_with_suffix needs a stage suffix such as \"-SFT\" or "
        "\"-DPO\", got an empty one (available_model_artifacts lists the base models)");
  }
  std::vector<AvailableModelArtifact> artifacts;
  for (const auto& tier : model_tiers()) {
    for (const auto& root : tier.stage_roots()) {
      const auto name = root + std::string(suffix);
      if (model_artifact_exists(name, models_dir)) {
        artifacts.push_back(found(name, tier.canonical_name + std::string(suffix),
                                  tier.display_name + std::string(suffix), tier.rank, models_dir));
        break;
      }
    }
  }
  for (std::size_t i = 0; i < extra_base_names.size(); ++i) {
    const auto name = extra_base_names[i] + std::string(suffix);
    if (model_artifact_exists(name, models_dir)) {
      artifacts.push_back(found(name, name, name, 100 + static_cast<int>(i), models_dir));
    }
  }
  sort_by_rank(artifacts);
  return artifacts;
}

std::optional<AvailableModelArtifact> best_model_artifact(const fs::path& models_dir) {
  auto artifacts = available_model_artifacts(models_dir);
  if (artifacts.empty()) return std::nullopt;
  return artifacts.back();
}

std::optional<AvailableModelArtifact> best_model_artifact_with_suffix(
    std::string_view suffix, const fs::path& models_dir,
    const std::vector<std::string>& extra_base_names) {
  auto artifacts = available_model_artifacts_with_suffix(suffix, models_dir, extra_base_names);
  if (artifacts.empty()) return std::nullopt;
  return artifacts.back();
}

std::string resolve_artifact_name(std::string_view name, const fs::path& models_dir) {
  if (name.empty()) throw ValueError("resolve_artifact_name needs a model name, got an empty one");
  if (const auto* tier = model_tier_for(name)) {
    for (const auto& candidate : tier->base_names()) {
      if (model_artifact_exists(candidate, models_dir)) return candidate;
    }
  }
  if (name == "BaseLM" && model_artifact_exists("BaseLM-base", models_dir)) return "BaseLM-base";
  if (model_artifact_exists(name, models_dir)) return std::string(name);
  if (name == "BaseLM-base" && model_artifact_exists("BaseLM", models_dir)) return "BaseLM";

  // A family without its size: the largest size on disk at the same stage (no stage: a base
  // model, "-base" preferred over the bare name at equal size).
  const auto wanted = parse_artifact_name(name);
  const bool sized_family =
      wanted.family == "ShakespeareLM" || wanted.family == "StoryLM" || wanted.family == "TinyLLM";
  if (sized_family && !wanted.size && fs::is_directory(models_dir)) {
    std::vector<std::tuple<double, int, std::string>> candidates;
    for (const auto& entry : fs::directory_iterator(models_dir)) {
      if (!entry.is_directory()) continue;
      const auto folder = entry.path().filename().string();
      const auto parts = parse_artifact_name(folder);
      if (parts.family != wanted.family || !parts.size) continue;
      int preference = 0;
      if (!wanted.stage) {
        if (parts.stage && parts.stage != "base") continue;
        preference = parts.stage ? 1 : 0;
      } else if (parts.stage != wanted.stage) {
        continue;
      }
      if (model_artifact_exists(folder, models_dir)) {
        candidates.emplace_back(size_in_parameters(*parts.size), preference, folder);
      }
    }
    if (!candidates.empty())
      return std::get<2>(*std::max_element(candidates.begin(), candidates.end()));
  }
  throw FileNotFoundError(fmt::format(
      "no model artifact in {} is called \"{}\" (tried the name itself, the tiers' aliases and, "
      "for a family without a size, every size of it); train one first (modules 10, 13, 14) or "
      "name one that exists",
      models_dir.string(), name));
}

}  // namespace g2c::pretraining
