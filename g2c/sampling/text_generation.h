// Module 11 — text in, text out, implemented for you: a saved model artifact together with the
// tokenizer it was trained with, text that appears while it is being generated, generation with
// the KV cache past max_seq_len, and the "readable" mask of the course's samples.
//
//   auto text_model = g2c::sampling::load_text_model("ShakespeareLM");   // model + tokenizer
//   const auto prompt = text_model.encode("KING:");                       // (T) int64
//   g2c::sampling::TextStream stream(text_model.tokenizer);
//   const auto run = g2c::sampling::generate_long_cached(
//       *text_model.artifact.model, prompt, 300, GenerateOptions().temperature(0.8),
//       [&](std::int64_t id) { std::cout << stream.push(id) << std::flush; });
//   std::cout << stream.finish();
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/pretraining/model_artifact.h"
#include "g2c/sampling/generate.h"
#include "g2c/tokenizer/text_tokenizer.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::sampling {

/// A model artifact and the tokenizer its manifest names, at the model's vocabulary size.
struct TextModel {
  g2c::pretraining::ModelArtifact artifact;
  g2c::tokenizer::TextTokenizer tokenizer;

  /// Text -> (T) int64 ids on the CPU.
  torch::Tensor encode(std::string_view text) const;
};

/// Loads a model artifact by name, alias or folder (see load_model_artifact) onto `device`, then
/// the tokenizer artifact named in its manifest, capped at the model's vocab_size. ValueError
/// when the manifest names no tokenizer (a run trained on characters), when that tokenizer is
/// missing (with the command that builds it), or when it has fewer ids than the model.
TextModel load_text_model(const std::string& name_or_dir,
                          torch::Device device = torch::Device(torch::kCPU));

/// The ids a reader does not want in a sample: special tokens, tokens whose bytes are not valid
/// UTF-8 on their own (single bytes of multi-byte characters, which print as U+FFFD) and tokens
/// with control characters other than newline and tab. Example: at vocab 264, the bytes 0x80-0xFF,
/// most bytes below 0x20 and the eight special tokens.
std::vector<std::int64_t> unreadable_token_ids(const g2c::tokenizer::TextTokenizer& tokenizer);

/// While alive, the model's output bias is −∞ at `ids`, so generation never draws them (with any
/// temperature, top-k, top-p or penalty: their probability is exactly 0); the bias is restored
/// on destruction. This is the course's "readable" sample.
class SuppressTokens {
 public:
  SuppressTokens(g2c::transformer::TransformerLMImpl& model, const std::vector<std::int64_t>& ids);
  ~SuppressTokens();
  SuppressTokens(const SuppressTokens&) = delete;
  SuppressTokens& operator=(const SuppressTokens&) = delete;

 private:
  torch::Tensor bias_;   // the model's head bias (V)
  torch::Tensor saved_;  // its values before masking
};

/// Ids -> text as they arrive. A BPE token can end in the middle of a multi-byte character; its
/// bytes are held back until the character is complete, so what push() returns is always valid
/// UTF-8 and the pieces concatenate to tokenizer.decode(all ids).
class TextStream {
 public:
  explicit TextStream(const g2c::tokenizer::TextTokenizer& tokenizer) : tokenizer_(tokenizer) {}
  /// The text that `id` completes (possibly empty).
  std::string push(std::int64_t id);
  /// Whatever is still held back, with an incomplete character as U+FFFD.
  std::string finish();

 private:
  const g2c::tokenizer::TextTokenizer& tokenizer_;
  g2c::tokenizer::Utf8Stream bytes_;
};

/// The tokenizer's (g2c/tokenizer/utf8.h), where TextStream's callers have always found it.
using g2c::tokenizer::complete_utf8_prefix;

/// `text` made safe to print on a terminal: control characters other than newline and tab (a BEL,
/// an escape sequence's ESC, a backspace) become their visible Unicode pictures (U+2400 + code,
/// U+2421 for DEL), so that a raw sample cannot ring, move the cursor or recolour the terminal.
/// Everything else, multi-byte characters included, is unchanged. Example: "a\x07b" -> "a␇b".
std::string for_terminal(std::string_view text);

/// Whether stdout is a terminal (not a file or a pipe): where for_terminal is needed.
bool stdout_is_terminal();

/// What generate_long_cached did.
struct LongGeneration {
  torch::Tensor ids;            // (T + new) int64 on the CPU, the prompt included
  std::int64_t new_tokens = 0;  // fewer than asked only when options.eos_id() was drawn
  std::int64_t cache_restarts = 0;
};

/// generate_cached() for any number of tokens. The KV cache holds max_seq_len positions; when
/// the sequence fills it, a new cache is built from the last max_seq_len / 2 tokens (a prompt that
/// is already that long starts from its last max_seq_len / 2 tokens). Until the first restart the
/// tokens are exactly generate()'s; after it they differ, because generate() slides its context
/// one token at a time. `on_token` sees each new id as it is drawn.
LongGeneration generate_long_cached(g2c::transformer::TransformerLMImpl& model,
                                    const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                                    const GenerateOptions& options = GenerateOptions(),
                                    const std::function<void(std::int64_t)>& on_token = {});

}  // namespace g2c::sampling
