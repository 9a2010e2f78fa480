#include "g2c/tokenizer/text_tokenizer.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/artifacts.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::tokenizer {

TextTokenizer TextTokenizer::from_bpe(std::shared_ptr<const BPETokenizer> bpe,
                                      std::optional<std::size_t> vocab_size, std::string name) {
  if (!bpe) throw ValueError("TextTokenizer::from_bpe needs a tokenizer, got a null pointer");
  TextTokenizer tokenizer;
  tokenizer.bpe_vocab_size_ = bpe->effective_vocab_size(vocab_size);
  tokenizer.description_ = fmt::format("{} at vocab {}", name, tokenizer.bpe_vocab_size_);
  tokenizer.bpe_ = std::move(bpe);
  return tokenizer;
}

TextTokenizer TextTokenizer::from_chars(CharTokenizer chars) {
  TextTokenizer tokenizer;
  tokenizer.description_ = fmt::format("characters ({})", chars.vocab_size());
  tokenizer.chars_ = std::move(chars);
  return tokenizer;
}

std::int64_t TextTokenizer::size() const {
  return static_cast<std::int64_t>(bpe_ ? bpe_vocab_size_ : chars_->vocab_size());
}

std::vector<std::int64_t> TextTokenizer::encode(std::string_view text) const {
  const Ids ids = bpe_ ? bpe_->encode_at_vocab(text, bpe_vocab_size_)
                       : chars_->encode(text, chars_->fallback_id());
  return std::vector<std::int64_t>(ids.begin(), ids.end());
}

TokenId TextTokenizer::checked(std::int64_t id) const {
  if (id < 0 || id >= size()) {
    throw ValueError(fmt::format("token id {} is outside [0, {}) of {}", id, size(), description_));
  }
  return static_cast<TokenId>(id);
}

std::string TextTokenizer::decode(const std::vector<std::int64_t>& ids) const {
  Ids checked_ids;
  checked_ids.reserve(ids.size());
  for (const std::int64_t id : ids) checked_ids.push_back(checked(id));
  if (!bpe_) return chars_->decode(checked_ids);
  std::string bytes;
  for (const TokenId id : checked_ids) bytes += bpe_->token_bytes(id);
  return to_valid_utf8(bytes);
}

std::string TextTokenizer::token_label(std::int64_t id) const {
  const TokenId token = checked(id);
  return display_token(bpe_ ? bpe_->token_bytes(token) : chars_->symbols()[token]);
}

TextTokenizer artifact_or_characters(std::string_view name, std::string_view fallback_text,
                                     std::optional<std::size_t> vocab_size, bool verbose) {
  if (tokenizer_artifact_exists(name)) {
    auto bpe = std::make_shared<const BPETokenizer>(load_tokenizer_artifact(name).tokenizer);
    const std::size_t capped = std::min(vocab_size.value_or(bpe->vocab_size()), bpe->vocab_size());
    return TextTokenizer::from_bpe(std::move(bpe), capped, std::string(name));
  }
  if (verbose) {
    const std::string how =
        name == kShakespeareTokenizer
            ? "Build it with `scripts/make_tokenizer_artifacts.sh build/reference`."
            : "Copy its directory there to use it.";
    std::cerr << "tokenizer: no " << name << " artifact at "
              << tokenizer_artifact_dir(name).string() << "; using characters instead. " << how
              << "\n";
  }
  return TextTokenizer::from_chars(CharTokenizer(fallback_text));
}

TextTokenizer shakespeare_or_characters(std::string_view fallback_text, std::size_t vocab_size,
                                        bool verbose) {
  return artifact_or_characters(kShakespeareTokenizer, fallback_text, vocab_size, verbose);
}

}  // namespace g2c::tokenizer
