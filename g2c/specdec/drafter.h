// Beyond module specdec, implemented for you — drafters for the cached fast path (cached.h):
// anything that guesses the next few tokens for the target to verify. A model drafts greedily
// through its own KV cache; prompt lookup needs no model at all. It copies what followed the
// latest earlier occurrence of the context's last n ids, which costs nothing and is right as long
// as the reply repeats its prompt — quoting, summarising, reformatting a passage:
//
//   context   ... and the quick brown fox jumps over ... so the quick brown
//   last 3    the quick brown  -> seen before, followed by "fox jumps over ..."
//   proposal  fox jumps over ...  (up to k ids; none when no n-gram down to min_ngram matches)
//
// Whatever a drafter proposes, the target's verification keeps the output greedy decoding's:
// a poor drafter costs passes, never correctness.
#pragma once

#include <cstdint>
#include <vector>

namespace g2c::specdec {

/// What the cached fast path asks of a drafter.
class Drafter {
 public:
  virtual ~Drafter() = default;
  /// Up to k ids guessed to follow `ids` (the whole sequence so far: prompt and output); fewer,
  /// or none, when the drafter has no guess.
  virtual std::vector<std::int64_t> propose(const std::vector<std::int64_t>& ids,
                                            std::int64_t k) = 0;
  /// Verification kept ids[..keep) and nothing drafted past them: a drafter with state (a KV
  /// cache) forgets the rest. rollback(0) starts a new sequence.
  virtual void rollback(std::int64_t keep) = 0;
};

/// Prompt lookup: the continuation of the latest earlier match of the context's last n ids, n
/// from max_ngram down to min_ngram. No state, no model. ValueError unless
/// 1 <= min_ngram <= max_ngram. Example (max 2): ids [5, 6, 7, 5, 6], k 2 -> [7, 5].
class PromptLookupDrafter : public Drafter {
 public:
  explicit PromptLookupDrafter(std::int64_t max_ngram = 3, std::int64_t min_ngram = 1);
  std::vector<std::int64_t> propose(const std::vector<std::int64_t>& ids, std::int64_t k) override;
  void rollback(std::int64_t /*keep*/) override {}

 private:
  std::int64_t max_ngram_, min_ngram_;
};

}  // namespace g2c::specdec
