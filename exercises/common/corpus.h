// The token streams the exercises train on, with one split rule: the first 90 % of the ids train,
// the last 10 % are held out for validation.
//
// clang-format off
//   const auto corpus = g2c::exercises::tinyshakespeare_corpus("bpe");  // ShakespeareTokenizer, 2048 ids
//   corpus.train;                           // (N_train) int64, ids in [0, corpus.vocab_size)
//   corpus.decode(corpus.val_prefix(10));   // the first ten held-out tokens as text
// clang-format on
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "g2c/tokenizer/text_tokenizer.h"

namespace g2c::exercises {

struct Corpus {
  torch::Tensor train;  // (N_train) int64: the first 90 % of the ids
  torch::Tensor val;    // (N_val) int64: the last 10 %, never trained on
  std::int64_t vocab_size = 0;
  std::string source;  // "tinyshakespeare" or "random"
  /// The tokenizer behind the ids; null for a random stream (its ids are printed as numbers).
  std::shared_ptr<const g2c::tokenizer::TextTokenizer> tokenizer;
  /// {"kind": "bpe" | "char" | "random", "description", "vocab_size"} for result files.
  nlohmann::json tokenizer_json;

  /// Ids -> text (a random stream: "3 0 7 ").
  std::string decode(const std::vector<std::int64_t>& ids) const;
  /// One token as a printable label for plot axes ("\\n" for a newline).
  std::string token_label(std::int64_t id) const;
  /// The first `count` validation ids (count <= val.numel()): prompts and heatmap probes.
  std::vector<std::int64_t> val_prefix(std::int64_t count) const;
  /// "ShakespeareTokenizer at vocab 2048", "characters (65)" or "uniform random ids (8)".
  std::string description() const;
};

/// The split rule of every exercise: ids (N) -> the first N * 9 / 10 train, the rest validate.
/// Example: 100 ids -> 90 train, 10 validation.
Corpus split_corpus(const torch::Tensor& ids);

/// TinyShakespeare at token `level` ("bpe" or "char", see course_tokenizer), split 90/10.
/// ValueError when the corpus file is missing (with the setup command) or the level is unknown.
Corpus tinyshakespeare_corpus(const std::string& level, std::size_t bpe_vocab = 2048,
                              bool prefer_g2c = false);

/// Uniform random ids in [0, vocab_size): `tokens` for training drawn with `seed`, and a quarter as
/// many for validation drawn with `seed + 1` (a stream never trained on). Nothing in them can be
/// predicted: the best honest loss is ln vocab_size.
Corpus random_corpus(std::int64_t vocab_size, std::int64_t tokens, std::uint64_t seed);

}  // namespace g2c::exercises
