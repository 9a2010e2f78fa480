// Module 16B — quality gates for synthetic instruction data. A teacher model asked for training
// data repeats itself (the same idea, rephrased), drifts off format and now and then degenerates;
// each gate here exists because of one of those. validate_pair's mechanical checks are provided;
// the deduplication — how much two instructions share, and a pool that grows as pairs are
// accepted — is yours (g2c/synth/filter.cpp). Plain C++, no LibTorch.
//
//   ngram_overlap("the cat sat on the mat", "the cat sat on a hat")   // 2 of 6 trigrams: 1/3
//   dedupe_pairs(candidates, 0.7, seed_instructions)                   // the novel ones, in order
//
// Words are compared case-insensitively: ASCII letters are lowered (other characters are kept as
// they are) and text is split at ASCII whitespace, as casefolded_words() does.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace g2c::synth {

/// One instruction and its answer, with module 13's keys: {"user": ..., "assistant": ...}, so that
/// module 13's fine-tuning reads synthetic pairs unchanged.
struct InstructionPair {
  std::string user;
  std::string assistant;
  bool operator==(const InstructionPair&) const = default;
};
void to_json(nlohmann::json& json, const InstructionPair& pair);
void from_json(const nlohmann::json& json, InstructionPair& pair);

/// Longer than this, either side of a pair is a runaway answer, not a better one.
inline constexpr std::size_t kMaxPairChars = 400;

/// Why a pair fails the shape gates (empty: it passes), checked in this order: a JSON object with
/// non-empty "user" and "assistant" strings; neither side (trimmed) longer than max_chars; the
/// answer not the instruction again; no word three times in a row on either side ("very very" is
/// emphasis, "the the the" degeneration). Provided.
/// Example: {"user": "Say hi.", "assistant": "say hi."} -> {"the assistant echoes the
/// instruction"}.
std::vector<std::string> validate_pair(const nlohmann::json& pair,
                                       std::size_t max_chars = kMaxPairChars);
std::vector<std::string> validate_pair(const InstructionPair& pair,
                                       std::size_t max_chars = kMaxPairChars);

/// `text` lowered (ASCII letters) and split at whitespace. Provided.
/// Example: "Hello  World\n" -> {"hello", "world"}.
std::vector<std::string> casefolded_words(std::string_view text);

/// Your work. How alike two texts are: the Jaccard similarity |A ∩ B| / |A ∪ B| of their sets of
/// word n-grams (casefolded_words, n words in a row). A text of fewer than n words is one gram,
/// all of it; two empty texts are identical (1.0), one empty text shares nothing (0.0).
/// ValueError for n == 0.
/// Example: "the cat sat on the mat" vs "the cat sat on a hat", n = 3 -> 2 shared of 6 -> 1/3.
double ngram_overlap(std::string_view a, std::string_view b, std::size_t n = 3);

/// Your work. The pairs whose instruction is new, in order: a pair is a duplicate when its
/// instruction's ngram_overlap with any instruction of the pool is >= threshold. The pool starts
/// as `against` (the seeds) and grows with every pair kept, so the second copy of a new idea is
/// measured against the first.
std::vector<InstructionPair> dedupe_pairs(const std::vector<InstructionPair>& pairs,
                                          double threshold = 0.7,
                                          const std::vector<std::string>& against = {},
                                          std::size_t n = 3);

}  // namespace g2c::synth
