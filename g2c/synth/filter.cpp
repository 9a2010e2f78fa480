// Module 16B — your work: how much two instructions share, and a pool that keeps only new ones.
#include <set>

#include "g2c/core/errors.h"
#include "g2c/synth/filter.h"

namespace g2c::synth {

double ngram_overlap(std::string_view a, std::string_view b, std::size_t n) {
  // TODO: n == 0 -> ValueError. Take each text's casefolded_words(); both empty -> 1.0, exactly
  // one empty -> 0.0. A text's grams: every run of n consecutive words (fewer than n words: the
  // whole word list is its one gram), collected in a set. Return |A ∩ B| / |A ∪ B|.
  // Hints, one step at a time: scripts/hint.sh 16b ngram_overlap
  throw g2c::todo("ngram_overlap", "g2c/synth/filter.cpp", "16b");
}

std::vector<InstructionPair> dedupe_pairs(const std::vector<InstructionPair>& pairs,
                                          double threshold, const std::vector<std::string>& against,
                                          std::size_t n) {
  // TODO: the pool starts as a copy of `against`. For each pair in order: it is new when
  // ngram_overlap(pair.user, instruction, n) < threshold for every instruction in the pool; keep a
  // new pair and add its instruction to the pool. Return the kept pairs in their order.
  // Hints, one step at a time: scripts/hint.sh 16b dedupe_pairs
  throw g2c::todo("dedupe_pairs", "g2c/synth/filter.cpp", "16b");
}

}  // namespace g2c::synth
