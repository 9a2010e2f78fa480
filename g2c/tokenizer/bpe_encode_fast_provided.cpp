// The fast encoder: exactly BPETokenizer::encode, in O(n log n) instead of O(n * merges).
//
// encode applies, again and again, the merge with the lowest id among the adjacent pairs. Two
// facts make that a single pass over the merge ids:
//   * a merge creates only pairs that contain its new id, and those pairs' merges have larger
//     ids (a merge's parents always exist before it), so once merge r has been applied no pair
//     with an id <= r ever appears again;
//   * applying merge r touches only the occurrences of its pair and their two neighbours.
// So: one bucket of positions per merge id, filled by a scan of the initial ids; then merge ids in
// increasing order, each bucket's still-valid occurrences merged left to right on a doubly linked
// list, each merge pushing the two pairs it creates into their (later) buckets.
#include <algorithm>
#include <bit>

#include "g2c/tokenizer/internal.h"

namespace g2c::tokenizer::internal {

FlatPairMap::FlatPairMap(std::size_t expected) {
  std::size_t capacity = 16;
  while (capacity < expected * 2) capacity *= 2;
  keys_.assign(capacity, kEmptyKey);
  values_.assign(capacity, 0);
  mask_ = capacity - 1;
  shift_ = 64 - std::countr_zero(capacity);
}

std::uint32_t FlatPairMap::insert(std::uint64_t key, std::uint32_t value, bool& inserted) {
  if ((size_ + 1) * 2 > keys_.size()) grow();
  std::size_t slot = index(key);
  while (true) {
    const std::uint64_t stored = keys_[slot];
    if (stored == key) {
      inserted = false;
      return values_[slot];
    }
    if (stored == kEmptyKey) {
      keys_[slot] = key;
      values_[slot] = value;
      ++size_;
      inserted = true;
      return value;
    }
    slot = (slot + 1) & mask_;
  }
}

void FlatPairMap::grow() {
  std::vector<std::uint64_t> old_keys = std::move(keys_);
  std::vector<std::uint32_t> old_values = std::move(values_);
  const std::size_t capacity = old_keys.size() * 2;
  keys_.assign(capacity, kEmptyKey);
  values_.assign(capacity, 0);
  mask_ = capacity - 1;
  shift_ = 64 - std::countr_zero(capacity);
  size_ = 0;
  bool inserted = false;
  for (std::size_t i = 0; i < old_keys.size(); ++i) {
    if (old_keys[i] != kEmptyKey) insert(old_keys[i], old_values[i], inserted);
  }
}

FlatPairMap merge_table(const BPETokenizer& tokenizer, std::size_t cap) {
  const std::vector<Merge>& merges = tokenizer.merges_in_order();
  FlatPairMap table(merges.size());
  bool inserted = false;
  for (const Merge& merge : merges) {
    if (merge.id >= cap) break;
    table.insert(pair_key(merge.pair.left, merge.pair.right), merge.id, inserted);
  }
  return table;
}

Ids encode_capped(const BPETokenizer& tokenizer, std::string_view text, std::size_t cap) {
  Ids tokens = tokenizer.encode_base(text);
  const std::size_t base = tokenizer.base_vocab_size();
  const std::size_t n = tokens.size();
  cap = std::min(cap, tokenizer.vocab_size());
  if (n < 2 || cap <= base) return tokens;

  const FlatPairMap table = merge_table(tokenizer, cap);
  const auto lookup = [&](TokenId left, TokenId right) {
    return table.find(pair_key(left, right));  // kNone when the pair has no merge below cap
  };
  const std::vector<Merge>& merges = tokenizer.merges_in_order();

  // Linked list over the initial positions; a merged-away node gets the token kNone.
  std::vector<TokenId> next(n);
  std::vector<TokenId> prev(n);
  for (std::size_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? static_cast<TokenId>(i + 1) : kNone;
    prev[i] = i > 0 ? static_cast<TokenId>(i - 1) : kNone;
  }
  std::vector<std::vector<TokenId>> buckets(cap - base);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const TokenId id = lookup(tokens[i], tokens[i + 1]);
    if (id != kNone) buckets[id - base].push_back(static_cast<TokenId>(i));
  }

  for (std::size_t r = 0; r < buckets.size(); ++r) {
    std::vector<TokenId>& bucket = buckets[r];
    if (bucket.empty()) continue;
    const Pair pair = merges[r].pair;
    const auto new_id = static_cast<TokenId>(base + r);
    // Occurrences of a pair (a, b) with a != b never overlap, so their order does not matter;
    // for (a, a) left to right decides which of three a's merge.
    if (pair.left == pair.right) std::sort(bucket.begin(), bucket.end());
    for (const TokenId pos : bucket) {
      if (tokens[pos] != pair.left) continue;  // merged away or changed since it was queued
      const TokenId right = next[pos];
      if (right == kNone || tokens[right] != pair.right) continue;
      const TokenId after = next[right];
      tokens[pos] = new_id;
      tokens[right] = kNone;
      next[pos] = after;
      if (after != kNone) prev[after] = pos;
      const TokenId before = prev[pos];
      if (before != kNone) {
        const TokenId id = lookup(tokens[before], new_id);
        if (id != kNone) buckets[id - base].push_back(before);
      }
      if (after != kNone) {
        const TokenId id = lookup(new_id, tokens[after]);
        if (id != kNone) buckets[id - base].push_back(pos);
      }
    }
    std::vector<TokenId>().swap(bucket);
  }

  // Node 0 is never merged away (a merge keeps its left node), so the list starts there.
  Ids encoded;
  encoded.reserve(n);
  for (TokenId i = 0; i != kNone; i = next[i]) encoded.push_back(tokens[i]);
  return encoded;
}

}  // namespace g2c::tokenizer::internal
