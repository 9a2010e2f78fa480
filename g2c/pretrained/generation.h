// Module 16, implemented for you — text in, text out with a pretrained model: the model and the
// tokenizer of one GGUF file, generation through the KV cache with module 11's sampling, and a
// chat reply in the model's own template.
//
//   auto smol = g2c::pretrained::load_pretrained_model("SmolLM2-135M-Instruct");
//   const auto reply = g2c::pretrained::chat_reply(smol, {{"user", "What is the capital of
//   France?"}}); reply.text     // "The capital of France is Paris."
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "g2c/pretrained/chat_template.h"
#include "g2c/pretrained/llama.h"
#include "g2c/pretrained/tokenizer.h"
#include "g2c/sampling/generate.h"
#include "g2c/sft/data.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::pretrained {

/// A pretrained model ready to talk: its weights and its tokenizer, read from one file.
struct PretrainedModel {
  std::string name;  // "SmolLM2-135M-Instruct"
  LlamaModel model{nullptr};
  PretrainedTokenizer tokenizer;
  LoadReport report;
};

/// The model called `name` (pretrained_model_file), weights (held as `options` say: float32, or
/// packed for the fast path) and tokenizer; with `adapter`, the LoRA adapter file at that path
/// merged in (lora.h's apply_llama_adapter), the model then called by the adapter's name.
/// ValueError for an unknown name, a missing file, what load_llama and the tokenizer refuse, or an
/// adapter that read_llama_adapter refuses or that was trained on another base.
PretrainedModel load_pretrained_model(const std::string& name, const LoadOptions& options = {},
                                      const std::optional<std::filesystem::path>& adapter = {});

/// Generated ids as text while they come, in whole UTF-8 characters: push(id) returns the text
/// completed by this id (often empty in the middle of a character), finish() the rest.
class PretrainedTextStream {
 public:
  explicit PretrainedTextStream(const PretrainedTokenizer& tokenizer) : tokenizer_(&tokenizer) {}
  std::string push(std::int64_t id);
  std::string finish();

 private:
  const PretrainedTokenizer* tokenizer_;
  g2c::tokenizer::Utf8Stream bytes_;
};

/// What generate_pretrained did.
struct PretrainedGeneration {
  std::vector<std::int64_t> ids;  // the new ids, without the end token
  bool stopped = false;           // the model wrote its end token (eos) within max_new_tokens
  bool cancelled = false;         // on_token or on_text asked to stop before either end
};

/// How generate_pretrained decodes, beyond module 11's sampling settings: the settings Ollama's
/// options add, and how much of the prompt is computed at once.
struct PretrainedDecoding {
  /// The repetition penalty (GenerateOptions::repetition_penalty) looks back on this many ids:
  /// -1 every id so far, the prompt included (module 11's history); 0 none. Ollama: 64.
  TORCH_ARG(std::int64_t, repeat_last_n) = -1;
  /// Drop the tokens less likely than min_p times the most likely one, before sampling (0: off).
  TORCH_ARG(double, min_p) = 0.0;
  /// OpenAI's penalties over the same window, subtracted from the logits before sampling:
  /// frequency_penalty × how often a token appears, presence_penalty once if it appears at all.
  TORCH_ARG(double, frequency_penalty) = 0.0;
  TORCH_ARG(double, presence_penalty) = 0.0;
  /// The prompt goes through the model this many tokens at a time: attention then holds
  /// (chunk, T) scores a head, not (T, T) — 9 heads of an 8,000-token prompt at once would be
  /// 2.3 GB. The result is the same up to float rounding.
  TORCH_ARG(std::int64_t, prefill_chunk) = 512;
};

/// Up to max_new_tokens ids after `prompt`: the prompt fed into an empty KV cache
/// decoding.prefill_chunk tokens at a time, then one cached step per token, each drawn by module
/// 11's sample_next_token with `options` (greedy at temperature 0). The penalties — options'
/// repetition penalty and decoding's, over its repetition window — and min-p come first, so
/// greedy decoding feels them too (sample_next_token alone applies its penalty only when it
/// samples). Stops after the tokenizer's eos id (not returned), when the context is
/// full, or when `on_token` — which sees each new id, the end token included, as soon as it is
/// drawn — returns false (cancelled). ValueError for an empty prompt, max_new_tokens <= 0 or a
/// prompt that leaves no room in the context.
PretrainedGeneration generate_pretrained(
    PretrainedModel& pretrained, const std::vector<std::int64_t>& prompt,
    std::int64_t max_new_tokens,
    const g2c::sampling::GenerateOptions& options = g2c::sampling::GenerateOptions().temperature(0),
    const std::function<bool(std::int64_t)>& on_token = {},
    const PretrainedDecoding& decoding = {});

/// generate_pretrained with the reply's text passed to `on_text` while it is generated: whole
/// UTF-8 characters, the end token left out, so the pieces add up to the decoded ids. `on_text`
/// returns false to stop (cancelled); `keep_going`, when set, is asked as each token is drawn
/// and stops the generation the same way (a client that has gone, a server that stops). The one
/// streamed decode of the pretrained model: chat_reply, PretrainedBackend, g2c-serve and
/// g2c-generate all generate through it.
PretrainedGeneration generate_pretrained_text(
    PretrainedModel& pretrained, const std::vector<std::int64_t>& prompt,
    std::int64_t max_new_tokens, const g2c::sampling::GenerateOptions& options,
    const std::function<bool(const std::string&)>& on_text, const PretrainedDecoding& decoding = {},
    const std::function<bool()>& keep_going = {});

/// Each text's embedding, from its token ids: the final hidden states (LlamaModel::hidden_states)
/// averaged over its tokens and scaled to unit length, (N, D) float32 — what g2c-serve's /api/embed
/// and module 17's PretrainedEmbedder return. An empty id list gives a zero row; a longer one than
/// the context is cut to its first max_seq_len ids. Texts run `batch` at a time, padded at the end:
/// under the causal mask no token sees the padding after it, so a text's states are those it has
/// alone (up to float rounding); one at a time is the faster on a CPU (pretrained_embedder.h has
/// the numbers). ValueError for batch <= 0.
torch::Tensor mean_pooled_embeddings(PretrainedModel& pretrained,
                                     const std::vector<std::vector<std::int64_t>>& ids,
                                     std::int64_t batch = 1);

/// The conversation's prompt ids (template with the generation prompt) once its oldest turns
/// after a leading system turn are left out, `step` at a time, until fits(prompt length) holds
/// or only the system turn and the last turn are left; `turns` keeps what stays. The caller
/// decides what a prompt that still does not fit means.
struct FittedChat {
  std::vector<std::int64_t> ids;
  std::int64_t dropped_messages = 0;
};
FittedChat fit_chat(const PretrainedTokenizer& tokenizer, std::vector<ChatMessage>& turns,
                    std::size_t step, const std::function<bool(std::int64_t)>& fits);

/// A conversation as a fine-tuning example in the model's own template — module 13's
/// render_with_mask for a pretrained model: ids of format_chat(turns) (no generation prompt),
/// and mask 1 exactly on each assistant turn's content and its end token (<|im_end|>), 0 on every
/// role header, system, user or tool turn, and line break. Built turn by turn; ValueError when the
/// ids of a longer prefix do not extend the shorter one's (a template whose turns the tokenizer
/// merges across), or for an empty conversation.
/// Example: {system, user "Hi", assistant "Hello!"} -> the mask is 1 on "Hello", "!", <|im_end|>.
g2c::sft::SFTExample chat_sft_example(const PretrainedTokenizer& tokenizer,
                                      const std::vector<ChatMessage>& turns);

/// A reply to `messages` (ending with a user turn) in the model's chat template.
struct PretrainedChatReply {
  std::string text;                   // the reply, without the end token
  bool stopped = false;               // the model ended its turn within max_new_tokens
  std::int64_t prompt_tokens = 0;     // the rendered conversation's length
  std::int64_t dropped_messages = 0;  // oldest turns left out so that it fits in the context
};

/// The conversation rendered with the file's template (its own system prompt unless the first
/// message is a system one), generated up to the end of the assistant's turn. When the
/// conversation and max_new_tokens do not fit in the context, the oldest turns after a system
/// message are left out, two at a time (a user turn and its reply). `on_text` sees the reply's
/// text as it is generated, in whole UTF-8 characters.
PretrainedChatReply chat_reply(
    PretrainedModel& pretrained, const std::vector<ChatMessage>& messages,
    std::int64_t max_new_tokens = 256,
    const g2c::sampling::GenerateOptions& options = g2c::sampling::GenerateOptions().temperature(0),
    const std::function<void(const std::string&)>& on_text = {});

}  // namespace g2c::pretrained
