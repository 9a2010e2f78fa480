// Module 04 — your work: the five functions of byte-pair encoding.
// Suggested order (each unlocks its tests): get_pair_counts, merge, train_step, encode, decode.
// Build and test: cmake --build --preset student --target module-04
//                 ctest --preset student -L '^04$'
#include "g2c/tokenizer/bpe.h"
#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::tokenizer {

PairCounts BPETokenizer::get_pair_counts(const Ids& ids,
                                         const std::unordered_set<TokenId>& barrier_ids) {
  // TODO: Count every adjacent pair (ids[i], ids[i + 1]) of the sequence, overlaps included ([1, 1,
  // 1] holds (1, 1) twice), except pairs that touch a barrier id (special tokens are never merged
  // with text). PairCounts remembers first-seen order, which breaks ties later.
  // Hints, one step at a time: scripts/hint.sh 04 BPETokenizer::get_pair_counts
  throw g2c::todo("BPETokenizer::get_pair_counts", "g2c/tokenizer/bpe.cpp", "04");
}

Ids BPETokenizer::merge(const Ids& ids, Pair pair, TokenId new_id) {
  // TODO: Rewrite the sequence with every occurrence of `pair`, read left to right, replaced by
  // new_id. An occurrence consumes both of its tokens, so [1, 1, 1] with (1, 1) becomes [new_id,
  // 1].
  // Hints, one step at a time: scripts/hint.sh 04 BPETokenizer::merge
  throw g2c::todo("BPETokenizer::merge", "g2c/tokenizer/bpe.cpp", "04");
}

std::optional<TrainStep> BPETokenizer::train_step(const Ids& ids, TokenId new_id) {
  // TODO: One step of BPE training: count the pairs (this tokenizer's special tokens are the
  // barriers), take the most frequent — the first seen on a tie —, record it with add_merge and
  // apply it. No pair left: std::nullopt. Return the merged ids, the pair and its count.
  // Hints, one step at a time: scripts/hint.sh 04 BPETokenizer::train_step
  throw g2c::todo("BPETokenizer::train_step", "g2c/tokenizer/bpe.cpp", "04");
}

Ids BPETokenizer::encode(std::string_view text) const {
  // TODO: Replay the learned merges on new text, in the order they were learned: from
  // encode_base(text), repeatedly apply the merge with the lowest id among the adjacent pairs that
  // have one (merge_id), until no adjacent pair has a merge.
  // Hints, one step at a time: scripts/hint.sh 04 BPETokenizer::encode
  throw g2c::todo("BPETokenizer::encode", "g2c/tokenizer/bpe.cpp", "04");
}

std::string BPETokenizer::decode(const Ids& ids) const {
  // TODO: Concatenate the bytes of every id (token_bytes, which rejects unknown ids). A token can
  // end inside a multi-byte character, so the result can be invalid UTF-8: repair it to U+FFFD
  // (to_valid_utf8) rather than fail.
  // Hints, one step at a time: scripts/hint.sh 04 BPETokenizer::decode
  throw g2c::todo("BPETokenizer::decode", "g2c/tokenizer/bpe.cpp", "04");
}

}  // namespace g2c::tokenizer
