// Module 16, implemented for you — a saved course model as a ChatBackend, the way g2c-serve serves
// it: decoded with the KV cache (module 11's generate_long_cached), where ArtifactBackend runs your
// own generate. complete() continues the prompt as text, until "<|end|>" when the tokenizer has it;
// chat_with_tools() answers a conversation in module 13's chat template and takes no tools.
//
//   auto shakespeare = ArtifactChatBackend::load("ShakespeareLM-1M-SFT");
//   shakespeare.chat_with_tools({{{"role", "user"}, {"content", "Who are you?"}}}, nullptr, {});
//
// Of the serving extras it honours the seed, stop strings, the repetition penalty (module 11's:
// over the whole sequence, and only when it samples) and keep_going; the window, min-p and
// OpenAI's penalties are the pretrained model's.
#pragma once

#include <cstdint>
#include <string>

#include "g2c/inference/backend.h"
#include "g2c/sampling/text_generation.h"

namespace g2c::inference {

class ArtifactChatBackend : public ChatBackend {
 public:
  /// The model saved under `dir`, served as `name`. ValueError for what load_text_model refuses.
  ArtifactChatBackend(std::string name, const std::filesystem::path& dir);

  /// name "artifact", model_id `name`, extra {"context"}.
  const BackendInfo& info() const override { return info_; }
  std::int64_t context_length() const { return text_model_.artifact.model->max_seq_len; }

  /// The prompt continued as text. metadata {"sampling", "template": "raw", "stopped" (the end
  /// token or a stop string), "cancelled"}. ValueError for an empty prompt, max_new_tokens <= 0 or
  /// a prompt that leaves no room in the context.
  InferenceResult complete(const std::string& prompt,
                           const CompletionOptions& options = {}) override;

  /// A reply to `messages` ({"role", "content"}, ending with a user turn; system turns left out,
  /// the template has none; a tool's answer shown as a user turn) in module 13's template, through
  /// its chat_reply. ValueError for tools (a course model has no tool-calling turn), a
  /// conversation that does not end with a user turn, or max_new_tokens <= 0.
  ChatResult chat_with_tools(const nlohmann::json& messages, const nlohmann::json& tools,
                             const ChatOptions& options) override;

 private:
  g2c::sampling::TextModel text_model_;
  BackendInfo info_;
};

}  // namespace g2c::inference
