// The course's tokenizers (module 04) as the chat template's TokenEncoder. Header-only, so the
// course library does not depend on the tokenizer library: a program that uses it links
// g2c_tokenizer, as every program with a tokenizer does.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/sft/chat_template.h"
#include "g2c/tokenizer/bpe.h"
#include "g2c/tokenizer/text_tokenizer.h"

namespace g2c::sft {

/// A TextTokenizer is already capped at its model's vocabulary (encode_with_vocab_size only checks
/// that every id fits); a BPETokenizer caps with its own encode_with_vocab_size: special tokens
/// stay one id, merges at or beyond the cap are not used. The tokenizer must outlive the encoder.
/// Example: CourseEncoder(text_model.tokenizer).encode("<|user|>\nHi\n") -> {258, 10, 72, 105, 10}.
class CourseEncoder : public TokenEncoder {
 public:
  explicit CourseEncoder(const g2c::tokenizer::TextTokenizer& tokenizer) : text_(&tokenizer) {}
  explicit CourseEncoder(const g2c::tokenizer::BPETokenizer& tokenizer) : bpe_(&tokenizer) {}

  std::vector<std::int64_t> encode(std::string_view text) const override {
    if (text_) return text_->encode(text);
    const auto ids = bpe_->encode(text);
    return {ids.begin(), ids.end()};
  }

  std::vector<std::int64_t> encode_with_vocab_size(std::string_view text,
                                                   std::int64_t vocab_size) const override {
    if (text_) return TokenEncoder::encode_with_vocab_size(text, vocab_size);
    if (vocab_size < 1) {
      throw ValueError(fmt::format("vocab_size must be positive, got {}", vocab_size));
    }
    const auto ids = bpe_->encode_with_vocab_size(text, static_cast<std::size_t>(vocab_size));
    return {ids.begin(), ids.end()};
  }

 private:
  const g2c::tokenizer::TextTokenizer* text_ = nullptr;
  const g2c::tokenizer::BPETokenizer* bpe_ = nullptr;
};

}  // namespace g2c::sft
