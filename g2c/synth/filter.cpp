// Module 16B — your work: how much two instructions share, and a pool that keeps only new ones.
#include <set>

#include "g2c/core/errors.h"
#include "g2c/synth/filter.h"

namespace g2c::synth {

double ngram_overlap(std::string_view a, std::string_view b, std::size_t n) {
  // TODO: How alike two instructions are: the Jaccard similarity |A ∩ B| / |A ∪ B| of their
  // sets of word n-grams, a text's set holding every run of n consecutive words of its
  // casefolded_words() (fewer than n words: the whole word list is its one gram). Checks first,
  // in order: n == 0 -> ValueError; both word lists empty -> 1.0, exactly one empty -> 0.0.
  // Operations: std::set<std::vector<std::string>>, count.
  // Hints, one step at a time: scripts/hint.sh 16b ngram_overlap
  throw g2c::todo("ngram_overlap", "g2c/synth/filter.cpp", "16b");
}

std::vector<InstructionPair> dedupe_pairs(const std::vector<InstructionPair>& pairs,
                                          double threshold, const std::vector<std::string>& against,
                                          std::size_t n) {
  // TODO: Keep the pairs whose instruction is new, first come first kept. The pool starts as a
  // copy of `against`; a pair is new when ngram_overlap(pair.user, instruction, n) < threshold
  // for every instruction of the pool. Keep a new pair and add its instruction to the pool, so
  // the second copy of a new idea meets the first. Return the kept pairs in their order.
  // Hints, one step at a time: scripts/hint.sh 16b dedupe_pairs
  throw g2c::todo("dedupe_pairs", "g2c/synth/filter.cpp", "16b");
}

}  // namespace g2c::synth
