// Module 04 — your work: the five functions of byte-pair encoding.
// Suggested order (each unlocks its tests): get_pair_counts, merge, train_step, encode, decode.
// Build and test: cmake --build --preset student && ctest --preset student -L 04
#include "g2c/tokenizer/bpe.h"
#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::tokenizer {

PairCounts BPETokenizer::get_pair_counts(const Ids& ids,
                                         const std::unordered_set<TokenId>& barrier_ids) {
  // TODO: slide a window of two over ids and counts.add({ids[i], ids[i + 1]}) for each adjacent
  // pair, skipping pairs where either id is in barrier_ids. PairCounts keeps first-seen order.
  throw g2c::todo("BPETokenizer::get_pair_counts", "g2c/tokenizer/bpe.cpp", "04");
}

Ids BPETokenizer::merge(const Ids& ids, Pair pair, TokenId new_id) {
  // TODO: scan with an index i; where ids[i], ids[i + 1] is `pair`, emit new_id and step by 2,
  // else emit ids[i] and step by 1. So [1, 1, 1] with (1, 1) gives [new_id, 1], not two merges.
  throw g2c::todo("BPETokenizer::merge", "g2c/tokenizer/bpe.cpp", "04");
}

std::optional<TrainStep> BPETokenizer::train_step(const Ids& ids, TokenId new_id) {
  // TODO: count pairs with special_token_ids() as barriers; none -> std::nullopt. Take the highest
  // count (on a tie keep the pair seen first), add_merge(pair, new_id), return {merged ids, pair,
  // count}.
  throw g2c::todo("BPETokenizer::train_step", "g2c/tokenizer/bpe.cpp", "04");
}

Ids BPETokenizer::encode(std::string_view text) const {
  // TODO: start from encode_base(text); repeatedly find the adjacent pair whose merge_id() is the
  // lowest, apply it with merge(), and stop when no adjacent pair has a merge.
  throw g2c::todo("BPETokenizer::encode", "g2c/tokenizer/bpe.cpp", "04");
}

std::string BPETokenizer::decode(const Ids& ids) const {
  // TODO: append token_bytes(id) for every id (it rejects unknown ids), then return
  // to_valid_utf8(bytes) so that partial UTF-8 becomes U+FFFD instead of an error.
  throw g2c::todo("BPETokenizer::decode", "g2c/tokenizer/bpe.cpp", "04");
}

}  // namespace g2c::tokenizer
