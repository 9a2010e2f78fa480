// The tokenizer an exercise feeds a model with: the ShakespeareTokenizer capped at a vocabulary
// size when its artifact exists, else a character tokenizer over the corpus (the Python
// edition's fallback). Ids are int64 so they go straight into a torch::kLong tensor.
//
//   const std::string text = g2c::exercises::load_tinyshakespeare();
//   auto tok = g2c::tokenizer::shakespeare_or_characters(text, /*vocab_size=*/2048);
//   std::vector<std::int64_t> ids = tok.encode(text);       // ~0.1 s for the whole corpus
//   torch::Tensor data = torch::tensor(ids, torch::kLong);  // values in [0, tok.size())
//   std::string back = tok.decode(ids);                     // == text
//   std::cout << tok.description();  // "ShakespeareTokenizer at vocab 2048" or "characters (65)"
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "g2c/tokenizer/bpe.h"
#include "g2c/tokenizer/char_tokenizer.h"

namespace g2c::tokenizer {

class TextTokenizer {
 public:
  /// `bpe` encoding with only the merges below `vocab_size` (nullopt: all; see
  /// BPETokenizer::effective_vocab_size). `name` goes into description().
  static TextTokenizer from_bpe(std::shared_ptr<const BPETokenizer> bpe,
                                std::optional<std::size_t> vocab_size, std::string name = "BPE");
  /// One id per distinct character of the text `chars` was built from.
  static TextTokenizer from_chars(CharTokenizer chars);

  /// Text -> ids in [0, size()). BPE: the fast capped encoding. Characters: unknown characters
  /// map to the fallback id (" " when present).
  std::vector<std::int64_t> encode(std::string_view text) const;
  /// Ids -> text. ValueError for an id outside [0, size()).
  std::string decode(const std::vector<std::int64_t>& ids) const;
  /// A printable label for one token (decoded, control characters escaped), for plots and
  /// attention heatmap axes. Example: 10 -> "\\n".
  std::string token_label(std::int64_t id) const;

  /// Number of ids a model's embedding and output layers need.
  std::int64_t size() const;
  bool is_bpe() const { return bpe_ != nullptr; }
  /// "ShakespeareTokenizer at vocab 2048" or "characters (65)".
  const std::string& description() const { return description_; }
  /// The underlying tokenizers (exactly one is non-null).
  const BPETokenizer* bpe() const { return bpe_.get(); }
  const CharTokenizer* chars() const { return chars_ ? &*chars_ : nullptr; }

 private:
  TextTokenizer() = default;
  TokenId checked(std::int64_t id) const;

  std::shared_ptr<const BPETokenizer> bpe_;
  std::size_t bpe_vocab_size_ = 0;
  std::optional<CharTokenizer> chars_;
  std::string description_;
};

/// The ShakespeareTokenizer at `vocab_size` (capped at its 4096) when
/// artifacts/tokenizers/ShakespeareTokenizer exists; otherwise a character tokenizer over
/// `fallback_text`, and (when `verbose`) a note on stderr with the command that builds the
/// artifact. A broken artifact is a ValueError, not a silent fallback.
TextTokenizer shakespeare_or_characters(std::string_view fallback_text,
                                        std::size_t vocab_size = 2048, bool verbose = true);

/// The same for any artifact name, e.g. kG2CTokenizer (used when its directory has been copied to
/// artifacts/tokenizers/G2CTokenizer): that artifact at `vocab_size` (nullopt: all of it; capped
/// at its size), else characters of `fallback_text`.
TextTokenizer artifact_or_characters(std::string_view name, std::string_view fallback_text,
                                     std::optional<std::size_t> vocab_size, bool verbose = true);

}  // namespace g2c::tokenizer
