// Scripted stand-ins for a model, for the tests of modules 19 and 20 (the Python tests'
// _FakeBackend and _FakeChatBackend): canned answers in order, every call kept for the test to
// read. Once the script runs out they throw, as a server that went away would.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/inference/backend.h"

namespace g2c::testing {

/// What a fake says when the code under test asks it once more than the test scripted: usually a
/// run that should have stopped and did not. The end of the prompt only: the whole of it buries the
/// sentence that matters under a page of system prompt.
inline std::string exhausted_message(const std::string& fake, std::size_t scripted,
                                     const std::string& last_input) {
  constexpr std::size_t kShown = 300;
  const std::string tail = last_input.size() <= kShown
                               ? last_input
                               : "..." + last_input.substr(last_input.size() - kShown);
  return fake + " exhausted: the test scripted " + std::to_string(scripted) +
         " answer(s) and the code asked for one more. Did the run go on where it should have "
         "stopped (a final answer, a stop condition, an option such as halt_on_stuck)? The end of "
         "the last request: " +
         tail;
}

/// complete() answers with the completions in order.
class FakeBackend : public g2c::inference::Backend {
 public:
  struct Call {
    std::string prompt;
    g2c::inference::CompletionOptions options;
  };
  explicit FakeBackend(std::vector<std::string> completions)
      : completions_(std::move(completions)), info_("fake", "fake-model") {}
  const g2c::inference::BackendInfo& info() const override { return info_; }
  g2c::inference::InferenceResult complete(
      const std::string& prompt, const g2c::inference::CompletionOptions& options) override {
    if (next_ >= completions_.size()) {
      throw std::logic_error(exhausted_message("FakeBackend", completions_.size(), prompt));
    }
    calls.push_back({prompt, options});
    return g2c::inference::InferenceResult(prompt, completions_[next_++], 1, 1, 1.0, info_);
  }
  /// The prompts, in order.
  std::vector<std::string> prompts() const {
    std::vector<std::string> all;
    for (const auto& call : calls) all.push_back(call.prompt);
    return all;
  }
  std::vector<Call> calls;

 private:
  std::vector<std::string> completions_;
  std::size_t next_ = 0;
  g2c::inference::BackendInfo info_;
};

/// chat_with_tools answers with the replies in order (each the reply's text and its tool calls, a
/// call id added where one is missing, as Ollama does), the text streamed word by word to
/// options.on_text when the caller watches; complete() answers the planning phase with a
/// one-step plan.
class FakeChatBackend : public g2c::inference::ChatBackend {
 public:
  struct Reply {
    std::string content;
    std::vector<nlohmann::json> tool_calls;  // {"name", "arguments"}
  };
  struct Call {
    nlohmann::json messages;
    nlohmann::json tools;
    g2c::inference::ChatOptions options;
  };
  explicit FakeChatBackend(std::vector<Reply> replies)
      : replies_(std::move(replies)), info_("fake-chat", "fake-chat-model") {}
  const g2c::inference::BackendInfo& info() const override { return info_; }
  g2c::inference::InferenceResult complete(const std::string& prompt,
                                           const g2c::inference::CompletionOptions&) override {
    return g2c::inference::InferenceResult(prompt, "Goal: do the thing.\n1. step one", 1, 1, 1.0,
                                           info_);
  }
  g2c::inference::ChatResult chat_with_tools(const nlohmann::json& messages,
                                             const nlohmann::json& tools,
                                             const g2c::inference::ChatOptions& options) override {
    if (next_ >= replies_.size()) {
      throw std::logic_error(exhausted_message("FakeChatBackend", replies_.size(),
                                               messages.empty() ? "" : messages.back().dump()));
    }
    calls.push_back({messages, tools, options});
    const auto& reply = replies_[next_++];
    if (options.on_text) {
      for (std::size_t at = 0; at < reply.content.size();) {
        const auto space = reply.content.find(' ', at);
        const auto end = space == std::string::npos ? reply.content.size() : space + 1;
        options.on_text(std::string_view(reply.content).substr(at, end - at));
        at = end;
      }
    }
    auto tool_calls = nlohmann::json::array();
    for (std::size_t i = 0; i < reply.tool_calls.size(); ++i) {
      const auto& raw = reply.tool_calls[i];
      tool_calls.push_back(
          {{"name", raw.at("name")},
           {"arguments", raw.value("arguments", nlohmann::json::object())},
           {"call_id", raw.value("call_id", "call_" + std::to_string(i) + "_fake")}});
    }
    return g2c::inference::ChatResult(messages, reply.content, tool_calls, 1,
                                      reply.content.empty() ? 0 : 1, 1.0, info_);
  }
  std::vector<Call> calls;

 private:
  std::vector<Reply> replies_;
  std::size_t next_ = 0;
  g2c::inference::BackendInfo info_;
};

}  // namespace g2c::testing
