#include "g2c/inference/backend.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::inference {

namespace {

void check_count(const std::optional<std::int64_t>& count, const char* what, const char* owner) {
  if (count && *count < 0) {
    throw ValueError(fmt::format("{}.{} must be >= 0 or unset, got {}", owner, what, *count));
  }
}

void check_latency(double latency_ms, const char* owner) {
  if (!(latency_ms >= 0.0)) {
    throw ValueError(fmt::format("{}.latency_ms must be >= 0, got {}", owner, latency_ms));
  }
}

}  // namespace

BackendInfo::BackendInfo(std::string name, std::string model_id, nlohmann::json extra)
    : name_(std::move(name)), model_id_(std::move(model_id)), extra_(std::move(extra)) {
  if (name_.empty()) throw ValueError("BackendInfo.name must be a non-empty string");
  if (model_id_.empty()) throw ValueError("BackendInfo.model_id must be a non-empty string");
  if (!extra_.is_object()) {
    throw ValueError(
        fmt::format("BackendInfo.extra must be a JSON object, got {}", extra_.type_name()));
  }
}

std::ostream& operator<<(std::ostream& stream, const BackendInfo& info) {
  return stream << "BackendInfo(name='" << info.name() << "', model_id='" << info.model_id()
                << "', extra=" << info.extra().dump() << ")";
}

InferenceResult::InferenceResult(std::string prompt_, std::string completion_,
                                 std::optional<std::int64_t> prompt_tokens_,
                                 std::optional<std::int64_t> completion_tokens_, double latency_ms_,
                                 BackendInfo backend_, nlohmann::json metadata_)
    : prompt(std::move(prompt_)),
      completion(std::move(completion_)),
      prompt_tokens(prompt_tokens_),
      completion_tokens(completion_tokens_),
      latency_ms(latency_ms_),
      backend(std::move(backend_)),
      metadata(std::move(metadata_)) {
  check_latency(latency_ms, "InferenceResult");
  check_count(prompt_tokens, "prompt_tokens", "InferenceResult");
  check_count(completion_tokens, "completion_tokens", "InferenceResult");
}

std::optional<double> InferenceResult::tokens_per_second() const {
  if (!completion_tokens || *completion_tokens == 0 || latency_ms <= 0.0) return std::nullopt;
  return static_cast<double>(*completion_tokens) / (latency_ms / 1000.0);
}

ChatResult::ChatResult(nlohmann::json messages_, std::string content_, nlohmann::json tool_calls_,
                       std::optional<std::int64_t> prompt_tokens_,
                       std::optional<std::int64_t> completion_tokens_, double latency_ms_,
                       BackendInfo backend_, nlohmann::json metadata_)
    : messages(std::move(messages_)),
      content(std::move(content_)),
      tool_calls(std::move(tool_calls_)),
      prompt_tokens(prompt_tokens_),
      completion_tokens(completion_tokens_),
      latency_ms(latency_ms_),
      backend(std::move(backend_)),
      metadata(std::move(metadata_)) {
  check_latency(latency_ms, "ChatResult");
  check_count(prompt_tokens, "prompt_tokens", "ChatResult");
  check_count(completion_tokens, "completion_tokens", "ChatResult");
  if (!messages.is_array() || !tool_calls.is_array()) {
    throw ValueError("ChatResult.messages and ChatResult.tool_calls must be JSON arrays");
  }
}

nlohmann::json CompletionOptions::to_json() const {
  return {{"max_new_tokens", max_new_tokens},
          {"temperature", temperature},
          {"top_k", top_k ? nlohmann::json(*top_k) : nlohmann::json()},
          {"top_p", top_p ? nlohmann::json(*top_p) : nlohmann::json()}};
}

ChatOptions ChatOptions::from_sampling(const CompletionOptions& sampling,
                                       std::optional<bool> think) {
  ChatOptions options;
  options.max_new_tokens = sampling.max_new_tokens;
  options.temperature = sampling.temperature;
  options.top_k = sampling.top_k;
  options.top_p = sampling.top_p;
  options.think = think;
  options.on_text = sampling.on_text;
  options.extras = sampling.extras;
  return options;
}

bool is_valid_tool_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-'; });
}

std::string fresh_call_id() {
  static std::atomic<std::uint32_t> counter{0};
  const auto now =
      static_cast<std::uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return fmt::format("call_{:08x}", now ^ (0x9e3779b9u * ++counter));
}

}  // namespace g2c::inference
