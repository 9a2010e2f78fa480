// Module 16B — reference solution for g2c/synth/filter.cpp.
#include <set>

#include "g2c/core/errors.h"
#include "g2c/synth/filter.h"

namespace g2c::synth {

namespace {

using Gram = std::vector<std::string>;

/// Every run of n consecutive words; a shorter text is one gram, all of it.
std::set<Gram> grams(const std::vector<std::string>& words, std::size_t n) {
  if (words.size() < n) return {words};
  std::set<Gram> out;
  for (std::size_t i = 0; i + n <= words.size(); ++i) {
    out.emplace(words.begin() + static_cast<std::ptrdiff_t>(i),
                words.begin() + static_cast<std::ptrdiff_t>(i + n));
  }
  return out;
}

}  // namespace

double ngram_overlap(std::string_view a, std::string_view b, std::size_t n) {
  if (n == 0) throw ValueError("ngram_overlap needs n >= 1 words per gram, got 0");
  const auto words_a = casefolded_words(a);
  const auto words_b = casefolded_words(b);
  if (words_a.empty() && words_b.empty()) return 1.0;
  if (words_a.empty() || words_b.empty()) return 0.0;
  const auto grams_a = grams(words_a, n);
  const auto grams_b = grams(words_b, n);
  std::size_t shared = 0;
  for (const auto& gram : grams_a) shared += grams_b.count(gram);
  const auto all = grams_a.size() + grams_b.size() - shared;
  return static_cast<double>(shared) / static_cast<double>(all);
}

std::vector<InstructionPair> dedupe_pairs(const std::vector<InstructionPair>& pairs,
                                          double threshold, const std::vector<std::string>& against,
                                          std::size_t n) {
  std::vector<std::string> pool = against;
  std::vector<InstructionPair> kept;
  for (const auto& pair : pairs) {
    bool novel = true;
    for (const auto& instruction : pool) {
      if (ngram_overlap(pair.user, instruction, n) >= threshold) {
        novel = false;
        break;
      }
    }
    if (novel) {
      kept.push_back(pair);
      pool.push_back(pair.user);
    }
  }
  return kept;
}

}  // namespace g2c::synth
