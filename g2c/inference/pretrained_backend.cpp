#include "g2c/inference/pretrained_backend.h"

#include <chrono>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::inference {

namespace {

BackendInfo info_of(const g2c::pretrained::PretrainedModel& model) {
  if (model.model.is_empty()) throw ValueError("PretrainedBackend needs a loaded model");
  const auto& options = model.model->options;
  return BackendInfo("pretrained", model.name,
                     {{"weights", model.model->packed() ? "packed" : "float32"},
                      {"parameters", options.num_parameters()},
                      {"context", options.max_seq_len()}});
}

}  // namespace

PretrainedBackend::PretrainedBackend(std::shared_ptr<g2c::pretrained::PretrainedModel> model,
                                     PretrainedBackendOptions options)
    : model_(model ? std::move(model)
                   : throw ValueError("PretrainedBackend needs a model, got none")),
      options_(std::move(options)),
      info_(info_of(*model_)) {}

PretrainedBackend PretrainedBackend::load(const std::string& name,
                                          const g2c::pretrained::LoadOptions& load,
                                          PretrainedBackendOptions options) {
  return PretrainedBackend(std::make_shared<g2c::pretrained::PretrainedModel>(
                               g2c::pretrained::load_pretrained_model(name, load)),
                           std::move(options));
}

InferenceResult PretrainedBackend::complete(const std::string& prompt,
                                            const CompletionOptions& options) {
  if (prompt.empty()) throw ValueError("PretrainedBackend::complete: the prompt is empty");
  if (options.max_new_tokens <= 0) {
    throw ValueError(fmt::format("PretrainedBackend::complete: max_new_tokens must be > 0, got {}",
                                 options.max_new_tokens));
  }
  auto& tokenizer = model_->tokenizer;
  std::vector<g2c::pretrained::ChatMessage> messages;
  if (options_.system) messages.push_back({"system", *options_.system});
  messages.push_back({"user", prompt});
  const auto ids = tokenizer.encode(options_.raw ? prompt : tokenizer.format_chat(messages, true));
  const auto context = model_->model->options.max_seq_len();
  if (static_cast<std::int64_t>(ids.size()) >= context) {
    throw ValueError(fmt::format(
        "PretrainedBackend::complete: the prompt is {} tokens, {}'s context {}; shorten it",
        ids.size(), model_->name, context));
  }
  const auto sampling = g2c::sampling::GenerateOptions()
                            .temperature(options.temperature)
                            .top_k(options.top_k)
                            .top_p(options.top_p);
  torch::NoGradGuard no_grad;
  const auto start = std::chrono::steady_clock::now();
  const auto generation =
      g2c::pretrained::generate_pretrained(*model_, ids, options.max_new_tokens, sampling);
  const double latency_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return InferenceResult(prompt, tokenizer.decode(generation.ids),
                         static_cast<std::int64_t>(ids.size()),
                         static_cast<std::int64_t>(generation.ids.size()), latency_ms, info_,
                         {{"sampling", options.to_json()},
                          {"template", options_.raw ? "raw" : "chatml"},
                          {"stopped", generation.stopped}});
}

}  // namespace g2c::inference
