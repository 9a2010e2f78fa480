// The fast trainer: exactly the merges of BPETokenizer::train, without recounting every pair of
// the whole corpus at every step.
//
// State, for the training sequence as a doubly linked list over the initial positions:
//   * for each pair: its count (adjacent occurrences, overlaps included, barriers excluded, as
//     get_pair_counts counts them), a list of positions where it occurred (stale entries are
//     skipped and dropped lazily), and `lb`, a lower bound of its first position;
//   * a max-heap of (count, lb, pair) entries, lazily invalidated: an entry whose count is not
//     the pair's current count is stale.
// The winner of a step is the pair with the highest count and, on a tie, the earliest first
// occurrence. Positions keep their order as tokens merge, so "earliest" compares initial
// positions. When the top entry's lb is not the pair's true first position (its first occurrence
// was merged away), the entry is pushed back with the true one and the next entry is examined.
// Merging an occurrence (a, b) at node i with neighbours h and k updates four counts:
// (h, a) and (b, k) lose one, (h, X) and (X, k) gain one.
#include <algorithm>
#include <queue>

#include "g2c/tokenizer/internal.h"

namespace g2c::tokenizer {
namespace {

using internal::kNone;

struct PairState {
  Pair pair;
  std::int64_t count = 0;
  TokenId lb = kNone;              // <= the first position of the pair (exact when it was pushed)
  std::vector<TokenId> positions;  // every position where the pair occurred, some stale
  std::size_t touched_at = 0;      // last step that changed it (to push it once per step)
};

struct HeapEntry {
  std::int64_t count;
  TokenId lb;
  std::uint32_t slot;
};

// std::priority_queue keeps the "largest" on top: higher count, then smaller first position.
struct HeapOrder {
  bool operator()(const HeapEntry& a, const HeapEntry& b) const {
    if (a.count != b.count) return a.count < b.count;
    return a.lb > b.lb;
  }
};

class FastTrainer {
 public:
  FastTrainer(const BPETokenizer& tokenizer, Ids tokens)
      : tokenizer_(tokenizer), tokens_(std::move(tokens)), slots_(tokens_.size() / 8 + 16) {
    const std::size_t n = tokens_.size();
    next_.resize(n);
    prev_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      next_[i] = i + 1 < n ? static_cast<TokenId>(i + 1) : kNone;
      prev_[i] = i > 0 ? static_cast<TokenId>(i - 1) : kNone;
    }
    for (std::size_t i = 0; i + 1 < n; ++i) {
      add(static_cast<TokenId>(i), tokens_[i], tokens_[i + 1]);
    }
    std::vector<HeapEntry> entries;
    entries.reserve(states_.size());
    for (std::uint32_t slot = 0; slot < states_.size(); ++slot) {
      entries.push_back({states_[slot].count, states_[slot].lb, slot});
    }
    heap_ = std::priority_queue<HeapEntry, std::vector<HeapEntry>, HeapOrder>(HeapOrder{},
                                                                              std::move(entries));
    touched_.clear();
    live_tokens_ = n;
  }

  /// The pair train_step would pick now, with its count; nullopt when no pair is left.
  std::optional<PairCount> best() {
    while (!heap_.empty()) {
      const HeapEntry entry = heap_.top();
      heap_.pop();
      PairState& state = states_[entry.slot];
      if (state.count != entry.count || state.count == 0) continue;  // stale entry
      const TokenId first = first_position(state);
      if (first != entry.lb) {
        state.lb = first;
        heap_.push({state.count, first, entry.slot});
        continue;
      }
      return PairCount{state.pair, state.count};
    }
    return std::nullopt;
  }

  /// Applies the merge pair -> new_id to every occurrence, left to right, and updates the counts.
  void apply(Pair pair, TokenId new_id) {
    ++step_;
    PairState& winner = states_[slots_.find(internal::pair_key(pair.left, pair.right))];
    std::vector<TokenId> positions = std::move(winner.positions);
    winner.positions.clear();
    std::sort(positions.begin(), positions.end());
    for (const TokenId pos : positions) {
      if (tokens_[pos] != pair.left) continue;
      const TokenId right = next_[pos];
      if (right == kNone || tokens_[right] != pair.right) continue;
      const TokenId before = prev_[pos];
      const TokenId after = next_[right];
      if (before != kNone) remove(tokens_[before], pair.left);
      remove(pair.left, pair.right);
      if (after != kNone) remove(pair.right, tokens_[after]);
      tokens_[pos] = new_id;
      tokens_[right] = kNone;
      next_[pos] = after;
      if (after != kNone) prev_[after] = pos;
      if (before != kNone) add(before, tokens_[before], new_id);
      if (after != kNone) add(pos, new_id, tokens_[after]);
      --live_tokens_;
    }
    for (const std::uint32_t slot : touched_) {
      const PairState& state = states_[slot];
      if (state.count > 0) heap_.push({state.count, state.lb, slot});
    }
    touched_.clear();
  }

  std::size_t live_tokens() const { return live_tokens_; }

  /// The final sequence.
  Ids ids() const {
    Ids out;
    out.reserve(live_tokens_);
    if (tokens_.empty()) return out;
    for (TokenId i = 0; i != kNone; i = next_[i]) out.push_back(tokens_[i]);
    return out;
  }

 private:
  bool barrier(TokenId id) const { return tokenizer_.is_special(id); }

  void touch(std::uint32_t slot) {
    if (states_[slot].touched_at != step_) {
      states_[slot].touched_at = step_;
      touched_.push_back(slot);
    }
  }

  void add(TokenId pos, TokenId left, TokenId right) {
    if (barrier(left) || barrier(right)) return;
    bool inserted = false;
    const auto slot = slots_.insert(internal::pair_key(left, right),
                                    static_cast<std::uint32_t>(states_.size()), inserted);
    if (inserted) states_.push_back({Pair{left, right}, 0, kNone, {}, 0});
    PairState& state = states_[slot];
    if (state.count == 0 || pos < state.lb) state.lb = pos;
    ++state.count;
    state.positions.push_back(pos);
    touch(slot);
  }

  void remove(TokenId left, TokenId right) {
    if (barrier(left) || barrier(right)) return;
    const std::uint32_t slot = slots_.find(internal::pair_key(left, right));
    --states_[slot].count;
    touch(slot);
  }

  // The exact first position of a pair; drops the stale positions from its list on the way.
  TokenId first_position(PairState& state) {
    TokenId first = kNone;
    std::size_t kept = 0;
    for (const TokenId pos : state.positions) {
      if (tokens_[pos] != state.pair.left) continue;
      const TokenId right = next_[pos];
      if (right == kNone || tokens_[right] != state.pair.right) continue;
      state.positions[kept++] = pos;
      first = std::min(first, pos);
    }
    state.positions.resize(kept);
    return first;
  }

  const BPETokenizer& tokenizer_;
  Ids tokens_;  // kNone for a node merged into its left neighbour
  std::vector<TokenId> next_;
  std::vector<TokenId> prev_;
  internal::FlatPairMap slots_;
  std::vector<PairState> states_;
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, HeapOrder> heap_;
  std::vector<std::uint32_t> touched_;
  std::size_t step_ = 0;
  std::size_t live_tokens_ = 0;
};

}  // namespace

Ids BPETokenizer::train_fast(std::string_view text, std::size_t vocab_size,
                             const ProgressCallback& progress, std::size_t progress_every) {
  check_train_arguments(vocab_size, progress_every);
  note_training_target(vocab_size);
  Ids initial = initial_training_ids(text, /*fast=*/true);
  if (this->vocab_size() >= vocab_size) {
    internal::TrainReporter(*this, vocab_size, progress, progress_every, initial.size())
        .finish(initial.size());
    return initial;
  }
  FastTrainer trainer(*this, std::move(initial));
  internal::TrainReporter reporter(*this, vocab_size, progress, progress_every,
                                   trainer.live_tokens());
  while (this->vocab_size() < vocab_size) {
    const std::optional<PairCount> best = trainer.best();
    if (!best) break;
    const auto new_id = static_cast<TokenId>(this->vocab_size());
    add_merge(best->pair, new_id);
    trainer.apply(best->pair, new_id);
    reporter.step(best->pair, best->count, trainer.live_tokens());
  }
  reporter.finish(trainer.live_tokens());
  return trainer.ids();
}

}  // namespace g2c::tokenizer
