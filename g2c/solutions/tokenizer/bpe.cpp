// Module 04 — reference solution for g2c/tokenizer/bpe.cpp.
#include "g2c/tokenizer/bpe.h"
#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::tokenizer {

PairCounts BPETokenizer::get_pair_counts(const Ids& ids,
                                         const std::unordered_set<TokenId>& barrier_ids) {
  PairCounts counts;
  for (std::size_t i = 0; i + 1 < ids.size(); ++i) {
    if (barrier_ids.contains(ids[i]) || barrier_ids.contains(ids[i + 1])) continue;
    counts.add({ids[i], ids[i + 1]});
  }
  return counts;
}

Ids BPETokenizer::merge(const Ids& ids, Pair pair, TokenId new_id) {
  Ids merged;
  merged.reserve(ids.size());
  std::size_t i = 0;
  while (i < ids.size()) {
    if (i + 1 < ids.size() && ids[i] == pair.left && ids[i + 1] == pair.right) {
      merged.push_back(new_id);
      i += 2;  // subtle: the right half is consumed, so [1, 1, 1] merges once
    } else {
      merged.push_back(ids[i]);
      i += 1;
    }
  }
  return merged;
}

std::optional<TrainStep> BPETokenizer::train_step(const Ids& ids, TokenId new_id) {
  const PairCounts counts = get_pair_counts(ids, special_token_ids());
  if (counts.empty()) return std::nullopt;
  PairCount best = *counts.begin();
  for (const PairCount& entry : counts) {
    if (entry.count > best.count) best = entry;  // strict: a tie keeps the earlier pair
  }
  add_merge(best.pair, new_id);
  return TrainStep{merge(ids, best.pair, new_id), best.pair, best.count};
}

Ids BPETokenizer::encode(std::string_view text) const {
  Ids ids = encode_base(text);
  while (ids.size() >= 2) {
    std::optional<Merge> lowest;
    for (std::size_t i = 0; i + 1 < ids.size(); ++i) {
      const Pair pair{ids[i], ids[i + 1]};
      const std::optional<TokenId> id = merge_id(pair);
      if (id && (!lowest || *id < lowest->id)) lowest = Merge{pair, *id};
    }
    if (!lowest) break;
    ids = merge(ids, lowest->pair, lowest->id);
  }
  return ids;
}

std::string BPETokenizer::decode(const Ids& ids) const {
  std::string bytes;
  for (const TokenId id : ids) bytes += token_bytes(id);
  return to_valid_utf8(bytes);
}

}  // namespace g2c::tokenizer
