// The tokenizer of a pretrained model, read from its GGUF file: SmolLM2's byte-level BPE, giving
// the ids Hugging Face's tokenizers library gives for SmolLM2
// (scripts/check_pretrained_tokenizer.py holds it to that on all of TinyShakespeare).
//
// It is module 04's tokenizer at full size. The same two stages (text to bytes, then merges, lowest
// rank first), with four differences:
//   * nothing is trained: the file holds 49,152 tokens and 48,900 merges, a merge's rank its index;
//   * a token is written in GPT-2's byte alphabet, where each of the 256 bytes is one printable
//     character ("Ġ" is the byte ' ', "Ċ" is '\n'), so "Ġthe" is the bytes " the";
//   * text is first cut into pieces (pretokenizer.h) and no merge crosses two pieces;
//   * control tokens such as "<|im_end|>" are found in the raw text before anything else, the
//     longest at each place, and become one id each: they are never split.
//
//   auto tok = PretrainedTokenizer::from_gguf(GGUFFile::open(path));
//   tok.encode("don't I'll")      // [12420, 982, 339, 3060]: "don" "'t" " I" "'ll"
//   tok.decode({12420, 982})      // "don't"
//   tok.id_of("<|im_end|>")       // 2, the end of a message
//   tok.encode(tok.format_chat({{"user", "Hi"}}, /*add_generation_prompt=*/true))
//
// Ids are std::int64_t, the type of LibTorch's index tensors. encode is safe to call from several
// threads (its cache of pieces is locked).
//
// subtle: a byte whose token the vocabulary lacks is dropped, as Hugging Face drops it. SmolLM2's
// has no token for 21 bytes: 0x04 0x06 0x13 0x14 0x16 0x1D (control characters), 0xC0 0xC1
// 0xF5..0xFF (never in valid UTF-8) and 0xF1 0xF2 (lead bytes of planes 4 to 11, all unassigned).
// decode is the exact inverse of encode on any bytes but those.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "g2c/pretrained/chat_template.h"
#include "g2c/pretrained/gguf.h"
#include "g2c/pretrained/pretokenizer.h"

namespace g2c::pretrained {

/// A token's type, as GGUF numbers it (tokenizer.ggml.token_type).
enum class TokenType : std::int64_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

/// What a byte-level BPE tokenizer is made of, as a GGUF file holds it (the tokenizer.* keys).
struct TokenizerTables {
  std::string model;                // tokenizer.ggml.model: must be "gpt2" (byte-level BPE)
  std::string pre;                  // tokenizer.ggml.pre: "smollm" or "gpt2"
  std::vector<std::string> tokens;  // id -> text; normal tokens in the byte alphabet ("Ġthe")
  std::vector<std::int64_t> token_types;  // id -> TokenType, one per token
  std::vector<std::string> merges;        // "Ġ t": two tokens and a space; rank = index
  std::int64_t bos_id = 0;                // tokenizer.ggml.bos_token_id
  std::int64_t eos_id = 0;                // tokenizer.ggml.eos_token_id
  std::string chat_template;              // tokenizer.chat_template (Jinja); empty when none
};

/// The text of byte `byte` in GPT-2's byte alphabet, as UTF-8. The 188 printable bytes stand for
/// themselves; the others, in order, are U+0100, U+0101, ... Example: 'a' -> "a", ' ' -> "Ġ"
/// (U+0120), '\n' -> "Ċ" (U+010A), 0xFF -> "ÿ".
std::string byte_token_text(std::uint8_t byte);

class PretrainedTokenizer {
 public:
  /// Checks the tables and builds the lookups. ValueError, saying what was expected and found,
  /// for a model other than "gpt2", a pre-tokenizer other than "smollm" or "gpt2", a token_types
  /// list of another length than the tokens, two tokens of one text, a normal token outside the
  /// byte alphabet, a merge that is not two known tokens whose concatenation is a token, or a
  /// bos/eos id out of range. The chat template is checked when format_chat uses it.
  explicit PretrainedTokenizer(TokenizerTables tables);

  /// The tokenizer of a GGUF file's tokenizer.* metadata; errors name the file.
  static PretrainedTokenizer from_gguf(const GGUFFile& file);

  /// Example: "What is 13 + 28?" -> [1780, 314, 216, 33, 35, 1232, 216, 34, 40, 47]
  /// ("What" " is" " " "1" "3" " +" " " "2" "8" "?"). No BOS is added: SmolLM2's files say
  /// add_bos_token = false, and its chat prompts begin with <|im_start|>.
  std::vector<std::int64_t> encode(std::string_view text) const;

  /// The bytes the ids stand for; a control token is its text. ValueError for an id out of range.
  /// Example: [1, 4093, 198] -> "<|im_start|>user\n".
  std::string decode(const std::vector<std::int64_t>& ids) const;

  /// The conversation rendered by the file's ChatML template (chat_template.h), ready to encode.
  /// ValueError when the file has no template or one that is not ChatML.
  std::string format_chat(const std::vector<ChatMessage>& messages,
                          bool add_generation_prompt) const;

  std::int64_t vocab_size() const { return static_cast<std::int64_t>(tokens_.size()); }
  std::int64_t bos_id() const { return bos_id_; }  // SmolLM2: 1, <|im_start|>
  std::int64_t eos_id() const { return eos_id_; }  // SmolLM2: 2, <|im_end|>
  /// The token as the vocabulary writes it. Example: 260 -> "Ġthe".
  const std::string& token_text(std::int64_t id) const;
  /// The id of a token written as the vocabulary writes it; ValueError when there is none.
  /// Example: "<|im_end|>" -> 2, "Ġthe" -> 260.
  std::int64_t id_of(std::string_view token) const;
  /// True for the tokens matched in raw text before pre-tokenizing: control and user-defined ones.
  bool is_special(std::int64_t id) const;

 private:
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept {
      return std::hash<std::string_view>{}(text);
    }
  };
  template <typename Value>
  using StringMap = std::unordered_map<std::string, Value, StringHash, std::equal_to<>>;
  struct Merge {
    std::int32_t rank;
    std::int32_t id;
  };
  struct PieceCache;

  void check_id(std::int64_t id) const;
  void add_merges(const std::vector<std::string>& merges);
  void encode_ordinary(std::string_view text, std::vector<std::int64_t>& ids) const;
  std::vector<std::int64_t> merge_piece(std::string_view piece) const;

  std::vector<std::string> tokens_;
  std::vector<std::string> bytes_;  // id -> the bytes it decodes to
  std::vector<bool> special_;
  StringMap<std::int64_t> ids_;               // token text -> id
  std::array<std::int32_t, 256> byte_ids_{};  // byte -> its token, -1 when the vocabulary has none
  std::unordered_map<std::uint64_t, Merge> merges_;  // (left << 32 | right) -> rank and new id
  std::vector<std::int64_t> specials_;               // special ids, longest text first
  std::array<bool, 256> special_first_byte_{};       // bytes a special token starts with
  PreTokenizer pre_ = PreTokenizer::kSmolLM;
  std::int64_t bos_id_ = 0;
  std::int64_t eos_id_ = 0;
  std::string chat_template_;
  std::shared_ptr<PieceCache> cache_;  // shared by copies, which have the same tables
};

}  // namespace g2c::pretrained
