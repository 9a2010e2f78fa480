#include "g2c/inference/prodlm.h"

#include <fmt/format.h>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"

namespace fs = std::filesystem;

namespace g2c::inference {

namespace {

fs::path config_path(const fs::path& models_dir, const std::string& name) {
  return models_dir / name / "config.json";
}

/// The configuration's JSON, or nullopt when there is no file. ValueError when it is not a
/// ProdLM's.
std::optional<nlohmann::json> read_prodlm_config(const fs::path& models_dir,
                                                 const std::string& name) {
  const auto path = config_path(models_dir, name);
  if (!fs::exists(path)) return std::nullopt;
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(g2c::read_file(path));
  } catch (const nlohmann::json::parse_error& error) {
    throw ValueError(fmt::format("{} is not JSON ({}): write it again with write_prodlm_manifest",
                                 path.string(), error.what()));
  }
  if (!config.is_object() || config.value("kind", "") != PRODLM_KIND) {
    throw ValueError(fmt::format("{} is not a ProdLM configuration (its \"kind\" is not \"{}\")",
                                 path.string(), PRODLM_KIND));
  }
  if (config.value("backend", "") != "ollama") {
    throw ValueError(
        fmt::format("{} names the backend {}; a ProdLM is served in Ollama's protocol (\"ollama\")",
                    path.string(), config.value("backend", nlohmann::json(nullptr)).dump()));
  }
  return config;
}

}  // namespace

fs::path write_prodlm_manifest(const ProdLMManifest& manifest) {
  if (manifest.name.empty() || manifest.model_id.empty() || manifest.base_url.empty()) {
    throw ValueError(fmt::format(
        "write_prodlm_manifest needs a name, a model id and a base URL, got name \"{}\", model "
        "id \"{}\", base URL \"{}\"",
        manifest.name, manifest.model_id, manifest.base_url));
  }
  if (!(manifest.timeout > 0)) {
    throw ValueError(fmt::format("write_prodlm_manifest: timeout must be > 0 seconds, got {}",
                                 manifest.timeout));
  }
  const auto folder = manifest.models_dir / manifest.name;
  const nlohmann::json config = {{"kind", PRODLM_KIND},
                                 {"backend", "ollama"},
                                 {"model_id", manifest.model_id},
                                 {"base_url", manifest.base_url},
                                 {"timeout", manifest.timeout}};
  const nlohmann::json description = {
      {"name", manifest.name},
      {"display_name", manifest.name},
      {"kind", PRODLM_KIND},
      {"role", "ProdLM"},
      {"module", "module-16"},
      {"source", fmt::format("Ollama model {} at {}", manifest.model_id, manifest.base_url)},
      {"model_id", manifest.model_id},
      {"backend", "ollama"},
      {"notes", manifest.notes}};
  g2c::write_json_atomic(folder / "config.json", config);
  g2c::write_json_atomic(folder / "manifest.json", description);
  return folder;
}

bool prodlm_manifest_exists(const fs::path& models_dir, const std::string& name) {
  const auto path = config_path(models_dir, name);
  if (!fs::exists(path)) return false;
  try {
    const auto config = nlohmann::json::parse(g2c::read_file(path));
    return config.is_object() && config.value("kind", "") == PRODLM_KIND;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

std::unique_ptr<OllamaBackend> load_prodlm_backend(const ProdLMOptions& options) {
  auto config = read_prodlm_config(options.models_dir, options.name);
  if (!config) {
    const bool overridden = options.model_id || options.base_url || options.timeout;
    if (options.required && !overridden) {
      throw FileNotFoundError(fmt::format(
          "no ProdLM configured ({} does not exist): start `g2c-serve` and write one with "
          "write_prodlm_manifest (model id \"SmolLM2-135M-Instruct\"), or give a model id",
          config_path(options.models_dir, options.name).string()));
    }
    config = nlohmann::json::object();
  }
  const auto model_id =
      options.model_id.value_or(config->value("model_id", std::string(DEFAULT_PRODLM_MODEL_ID)));
  const auto base_url =
      options.base_url.value_or(config->value("base_url", std::string(DEFAULT_OLLAMA_URL)));
  const auto timeout = options.timeout.value_or(config->value("timeout", 120.0));
  return std::make_unique<OllamaBackend>(model_id,
                                         OllamaOptions()
                                             .with_base_url(base_url)
                                             .with_timeout(timeout)
                                             .with_transport(options.transport)
                                             .with_name("prodlm")
                                             .with_extra({{"configured_name", options.name}}));
}

std::unique_ptr<Backend> load_default_backend(const std::string& kind,
                                              const BackendChoice& choice) {
  const auto prodlm = [&] {
    return load_prodlm_backend(ProdLMOptions().with_models_dir(choice.models_dir));
  };
  const auto artifact = [&] {
    return load_artifact_backend(
        choice.artifact_name,
        ArtifactLoadOptions().with_models_dir(choice.models_dir).with_device(choice.device));
  };
  if (kind == "prodlm") return prodlm();
  if (kind == "artifact") return artifact();
  if (kind != "auto") {
    throw ValueError(fmt::format(
        "load_default_backend: unknown kind \"{}\"; expected \"auto\", \"artifact\" or \"prodlm\"",
        kind));
  }
  if (prodlm_manifest_exists(choice.models_dir)) return prodlm();
  return artifact();
}

std::unique_ptr<Backend> load_selected_backend(const std::string& selection,
                                               const BackendChoice& choice) {
  const auto first = selection.find_first_not_of(" \t\n");
  if (first == std::string::npos) {
    throw ValueError(
        "load_selected_backend needs a selection: \"ProdLM\", \"course\" or an artifact name");
  }
  const auto wanted = selection.substr(first, selection.find_last_not_of(" \t\n") - first + 1);
  if (wanted == PRODLM_NAME) {
    if (prodlm_manifest_exists(choice.models_dir) || choice.prodlm_model_id) {
      return load_prodlm_backend(ProdLMOptions()
                                     .with_models_dir(choice.models_dir)
                                     .with_model_id(choice.prodlm_model_id)
                                     .with_required(choice.required));
    }
    if (choice.required) {
      throw FileNotFoundError(
          "ProdLM is not configured: write its manifest (write_prodlm_manifest), give a ProdLM "
          "model id, or select a saved artifact (\"course\" or its name)");
    }
    return nullptr;
  }
  const auto name = resolve_preferred_artifact_name(wanted, choice.models_dir);
  return load_artifact_backend(name, ArtifactLoadOptions()
                                         .with_models_dir(choice.models_dir)
                                         .with_device(choice.device)
                                         .with_required(choice.required));
}

}  // namespace g2c::inference
