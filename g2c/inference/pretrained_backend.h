// Module 16, implemented for you — a Backend over a pretrained model in this process:
// SmolLM2-135M-Instruct through the course's own Llama code (g2c/pretrained). Like Ollama's
// /api/generate, complete() puts the prompt into the model's chat template as a user turn (under
// its own system prompt, or `system`) and generates the assistant's reply until its end token;
// `raw` continues the prompt as plain text instead.
//
//   auto smol = g2c::inference::PretrainedBackend::load("SmolLM2-135M-Instruct");
//   smol.complete("What is the capital of France?", CompletionOptions().with_temperature(0))
//       .completion;  // "The capital of France is Paris."
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "g2c/inference/backend.h"
#include "g2c/pretrained/generation.h"

namespace g2c::inference {

struct PretrainedBackendOptions {
  bool raw = false;                   // continue the prompt as text, no chat template
  std::optional<std::string> system;  // the system turn (default: the template's own)

  PretrainedBackendOptions& with_raw(bool value) {
    raw = value;
    return *this;
  }
  PretrainedBackendOptions& with_system(std::optional<std::string> value) {
    system = std::move(value);
    return *this;
  }
};

class PretrainedBackend : public Backend {
 public:
  /// ValueError for a null model.
  explicit PretrainedBackend(std::shared_ptr<g2c::pretrained::PretrainedModel> model,
                             PretrainedBackendOptions options = {});
  /// The model called `name`, its weights held as `load` says (packed by default: the fast
  /// path). ValueError for an unknown name or a missing file.
  static PretrainedBackend load(
      const std::string& name = "SmolLM2-135M-Instruct",
      const g2c::pretrained::LoadOptions& load = g2c::pretrained::LoadOptions().packed(true),
      PretrainedBackendOptions options = {});

  /// name "pretrained", model_id the model's name, extra {"weights", "parameters", "context"}.
  const BackendInfo& info() const override { return info_; }

  /// The reply (or, raw, the continuation) to `prompt`, stopping at the model's end token. Token
  /// counts are the rendered prompt's and the reply's; metadata {"sampling", "template" ("chatml"
  /// or "raw"), "stopped" (the end token was reached)}. ValueError for an empty prompt,
  /// max_new_tokens <= 0, or a prompt longer than the context leaves room for.
  InferenceResult complete(const std::string& prompt,
                           const CompletionOptions& options = {}) override;

  g2c::pretrained::PretrainedModel& model() { return *model_; }

 private:
  std::shared_ptr<g2c::pretrained::PretrainedModel> model_;
  PretrainedBackendOptions options_;
  BackendInfo info_;
};

}  // namespace g2c::inference
