// Module 16 — ProdLM: the capable instruct model that modules 17-20 (retrieval, tools, agents,
// the assistant) run on, configured once and found by name. A ProdLM is a server in Ollama's
// protocol: this course's own `g2c-serve` with SmolLM2-135M-Instruct, or an Ollama daemon with a
// larger model. Only a small manifest lives under artifacts/models/ProdLM/; the server owns the
// weights. Provided, not scaffolded.
//
//   write_prodlm_manifest(ProdLMManifest().with_model_id("SmolLM2-135M-Instruct"));  // once
//   auto backend = load_default_backend();       // the ProdLM if configured, else your best model
//   auto backend = load_selected_backend("course");  // your own strongest model, never the ProdLM
//
//   artifacts/models/ProdLM/config.json    {"kind": "ollama_backend", "backend": "ollama",
//                                           "model_id", "base_url", "timeout"}
//   artifacts/models/ProdLM/manifest.json  name, display_name, kind, role "ProdLM", module,
//                                           source, model_id, backend, notes
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "g2c/inference/artifact.h"
#include "g2c/inference/backend.h"
#include "g2c/inference/ollama.h"

namespace g2c::inference {

inline constexpr const char* PRODLM_NAME = "ProdLM";
inline constexpr const char* PRODLM_KIND = "ollama_backend";
/// The Python edition's default, a 3B model an Ollama daemon serves; this edition's own server
/// serves "SmolLM2-135M-Instruct".
inline constexpr const char* DEFAULT_PRODLM_MODEL_ID = "llama3.2:3b";

/// What write_prodlm_manifest records.
struct ProdLMManifest {
  std::string name = PRODLM_NAME;
  std::string model_id = DEFAULT_PRODLM_MODEL_ID;
  std::string base_url = DEFAULT_OLLAMA_URL;
  double timeout = 120.0;  // seconds per request
  std::filesystem::path models_dir = g2c::pretraining::models_root();
  std::string notes;

  ProdLMManifest& with_name(std::string value) {
    name = std::move(value);
    return *this;
  }
  ProdLMManifest& with_model_id(std::string value) {
    model_id = std::move(value);
    return *this;
  }
  ProdLMManifest& with_base_url(std::string value) {
    base_url = std::move(value);
    return *this;
  }
  ProdLMManifest& with_timeout(double value) {
    timeout = value;
    return *this;
  }
  ProdLMManifest& with_models_dir(std::filesystem::path value) {
    models_dir = std::move(value);
    return *this;
  }
  ProdLMManifest& with_notes(std::string value) {
    notes = std::move(value);
    return *this;
  }
};

/// Writes models_dir/<name>/config.json and manifest.json (each atomically) and returns the
/// folder. ValueError for an empty name, model id or base URL, or a timeout <= 0.
std::filesystem::path write_prodlm_manifest(const ProdLMManifest& manifest = {});

/// Whether models_dir/<name>/config.json exists and is a ProdLM's (kind "ollama_backend"); a file
/// that is not JSON counts as no manifest.
bool prodlm_manifest_exists(
    const std::filesystem::path& models_dir = g2c::pretraining::models_root(),
    const std::string& name = PRODLM_NAME);

/// How load_prodlm_backend finds the server; each set field overrides the manifest's.
struct ProdLMOptions {
  std::string name = PRODLM_NAME;
  std::filesystem::path models_dir = g2c::pretraining::models_root();
  std::optional<std::string> model_id;
  std::optional<std::string> base_url;
  std::optional<double> timeout;
  bool required = false;  // true: FileNotFoundError without a manifest (unless overrides are given)
  HttpTransport transport = http_send;

  ProdLMOptions& with_models_dir(std::filesystem::path value) {
    models_dir = std::move(value);
    return *this;
  }
  ProdLMOptions& with_model_id(std::optional<std::string> value) {
    model_id = std::move(value);
    return *this;
  }
  ProdLMOptions& with_base_url(std::optional<std::string> value) {
    base_url = std::move(value);
    return *this;
  }
  ProdLMOptions& with_timeout(std::optional<double> value) {
    timeout = value;
    return *this;
  }
  ProdLMOptions& with_required(bool value) {
    required = value;
    return *this;
  }
  ProdLMOptions& with_transport(HttpTransport value) {
    transport = std::move(value);
    return *this;
  }
};

/// An OllamaBackend named "prodlm" over the configured server (info().extra["configured_name"]
/// is the manifest's name); without a manifest, the defaults above. ValueError for a config.json
/// that is not a ProdLM's or names a backend other than "ollama".
std::unique_ptr<OllamaBackend> load_prodlm_backend(const ProdLMOptions& options = {});

/// What load_default_backend and load_selected_backend load.
struct BackendChoice {
  std::filesystem::path models_dir = g2c::pretraining::models_root();
  std::optional<std::string> artifact_name;    // load_default_backend's artifact; unset: the best
  std::optional<std::string> prodlm_model_id;  // load_selected_backend: a ProdLM without manifest
  std::string device = "auto";
  bool required = false;  // load_selected_backend: FileNotFoundError instead of nullptr

  BackendChoice& with_models_dir(std::filesystem::path value) {
    models_dir = std::move(value);
    return *this;
  }
  BackendChoice& with_artifact_name(std::optional<std::string> value) {
    artifact_name = std::move(value);
    return *this;
  }
  BackendChoice& with_prodlm_model_id(std::optional<std::string> value) {
    prodlm_model_id = std::move(value);
    return *this;
  }
  BackendChoice& with_device(std::string value) {
    device = std::move(value);
    return *this;
  }
  BackendChoice& with_required(bool value) {
    required = value;
    return *this;
  }
};

/// The backend a later module most likely wants. kind "auto": the ProdLM when one is configured,
/// else the strongest saved artifact; "prodlm": the ProdLM; "artifact": the artifact. ValueError
/// for another kind; FileNotFoundError when the artifact it needs does not exist.
std::unique_ptr<Backend> load_default_backend(const std::string& kind = "auto",
                                              const BackendChoice& choice = {});

/// The backend a program's --backend names: "ProdLM" -> the ProdLM (configured, or
/// choice.prodlm_model_id on the default server), nullptr when neither and not required; "course"
/// or an artifact name -> resolve_preferred_artifact_name, loaded. ValueError for an empty
/// selection.
std::unique_ptr<Backend> load_selected_backend(const std::string& selection = PRODLM_NAME,
                                               const BackendChoice& choice = {});

}  // namespace g2c::inference
