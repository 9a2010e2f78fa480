// Byte-level byte-pair encoding (BPE): the tokenizer of module 04.
//
// Text becomes model input in two stages. First every character becomes its UTF-8 bytes (ids
// 0-255), except special tokens such as "<|endoftext|>", which become one reserved id each (256,
// 257, ...). Then learned merges fuse frequent adjacent pairs into new ids, lowest merge id first.
//
//   BPETokenizer tok;                          // 256 byte tokens, no merges
//   tok.train("the the the", 260);             // learns 4 merges: ids 256..259
//   Ids ids = tok.encode("the");               // [258]  ("t"+"h" -> 256, 256+"e" -> 257, ...)
//   std::string text = tok.decode(ids);        // "the"
//
// The semantics are exactly those of the course's Python edition (same merges, same ids, same
// files), including two details that are easy to get wrong:
//   * ties in training go to the pair whose first occurrence is earliest;
//   * merging is left to right and non-overlapping: [1,1,1] with (1,1) -> 99 gives [99,1].
//
// Your work (g2c/tokenizer/bpe.cpp): get_pair_counts, merge, train_step, encode, decode.
// Everything else (construction, train, the fast paths, capped encodings, persistence) is
// implemented for you. This library has no LibTorch dependency.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace g2c::tokenizer {

/// A token id: 0-255 bytes, then special tokens, then learned merges.
using TokenId = std::uint32_t;
/// A sequence of token ids.
using Ids = std::vector<TokenId>;

/// Two adjacent token ids. Example: in [1, 2, 3] the pairs are (1, 2) and (2, 3).
struct Pair {
  TokenId left = 0;
  TokenId right = 0;
  friend bool operator==(const Pair&, const Pair&) = default;
  friend auto operator<=>(const Pair&, const Pair&) = default;
};
std::ostream& operator<<(std::ostream& out, const Pair& pair);  // "(1, 2)"

struct PairHash {
  std::size_t operator()(const Pair& pair) const noexcept {
    return std::hash<std::uint64_t>{}((std::uint64_t{pair.left} << 32) | pair.right);
  }
};

/// One pair and how often it occurs.
struct PairCount {
  Pair pair;
  std::int64_t count = 0;
  friend bool operator==(const PairCount&, const PairCount&) = default;
};

/// Counts of adjacent pairs, iterated in order of first occurrence (like a Python dict).
///
///   PairCounts counts;
///   counts.add({1, 2}); counts.add({2, 1}); counts.add({1, 2});
///   counts.count({1, 2}) == 2;  counts.size() == 2;
///   for (const PairCount& entry : counts) ...   // (1, 2) first, then (2, 1)
class PairCounts {
 public:
  PairCounts() = default;
  /// Example: PairCounts{{{1, 2}, 2}, {{2, 1}, 1}}.
  PairCounts(std::initializer_list<PairCount> entries);

  /// Adds `n` to the count of `pair`; a pair seen for the first time goes to the end of the order.
  void add(Pair pair, std::int64_t n = 1);
  /// The count of `pair`, 0 when it never occurred.
  std::int64_t count(Pair pair) const;
  bool contains(Pair pair) const { return index_.contains(pair); }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  std::vector<PairCount>::const_iterator begin() const { return entries_.begin(); }
  std::vector<PairCount>::const_iterator end() const { return entries_.end(); }

  /// Same pairs with the same counts in the same order of first occurrence.
  friend bool operator==(const PairCounts& a, const PairCounts& b) {
    return a.entries_ == b.entries_;
  }

 private:
  std::vector<PairCount> entries_;
  std::unordered_map<Pair, std::size_t, PairHash> index_;
};
std::ostream& operator<<(std::ostream& out, const PairCounts& counts);  // "{(1, 2): 2, (2, 1): 1}"

/// What one training step did: the new sequence, the pair it merged and that pair's count.
struct TrainStep {
  Ids ids;
  Pair pair;
  std::int64_t count = 0;
  friend bool operator==(const TrainStep&, const TrainStep&) = default;
};
std::ostream& operator<<(std::ostream& out, const TrainStep& step);

/// One learned merge: `pair` becomes `id`.
struct Merge {
  Pair pair;
  TokenId id = 0;
  friend bool operator==(const Merge&, const Merge&) = default;
};

/// The record a training progress callback receives (the Python edition's progress dict).
struct TrainProgress {
  std::size_t vocab_size = 0;         // current vocabulary size (bytes + specials + merges)
  std::size_t target_vocab_size = 0;  // the vocab_size asked for
  std::size_t merges = 0;             // merges learned so far
  std::size_t target_merges = 0;      // target_vocab_size - base_vocab_size
  std::size_t steps = 0;              // merges learned by this call
  std::size_t tokens = 0;             // length of the training sequence now
  std::optional<Pair> last_pair;      // the pair merged last (none before the first step)
  std::optional<TokenId> last_token_id;
  std::optional<std::string> last_token_bytes;   // raw bytes of the newest token
  std::optional<std::string> last_token_text;    // the same, decoded with U+FFFD replacement
  std::optional<std::string> last_token_repr;    // Python repr of the text, e.g. 'the' or '\n'
  std::optional<std::int64_t> last_merge_count;  // how often last_pair occurred when merged
  double elapsed_seconds = 0.0;
  bool done = false;  // the last report of this training run
};
/// Receives TrainProgress records; see BPETokenizer::train for when it fires.
using ProgressCallback = std::function<void(const TrainProgress&)>;

/// The course's special tokens, ids 256-263 in this order.
const std::vector<std::string>& course_special_tokens();

class BPETokenizer {
 public:
  /// 256 byte tokens, then `special_tokens` at ids 256, 257, ... in the order given.
  /// ValueError for an empty or a repeated special token.
  /// Example: BPETokenizer({"<|user|>", "<|end|>"}).special_id("<|end|>") == 257.
  explicit BPETokenizer(std::vector<std::string> special_tokens = {});

  /// A tokenizer with course_special_tokens(): "<|endoftext|>" is id 256, "<|pad|>" id 263.
  static BPETokenizer with_course_special_tokens();

  // --- Your work: g2c/tokenizer/bpe.cpp ------------------------------------------------------

  /// Counts adjacent pairs in order of first occurrence, skipping every pair that touches an id
  /// in `barrier_ids`. Example: [1, 2, 1, 2] -> {(1, 2): 2, (2, 1): 1}; [1, 256, 1, 2] with
  /// barrier 256 -> {(1, 2): 1}.
  static PairCounts get_pair_counts(const Ids& ids,
                                    const std::unordered_set<TokenId>& barrier_ids = {});

  /// Replaces each occurrence of `pair` with `new_id`, left to right, without overlaps.
  /// Example: [1, 2, 3, 1, 2] with (1, 2) -> 99 gives [99, 3, 99]; [1, 1, 1] with (1, 1) gives
  /// [99, 1].
  static Ids merge(const Ids& ids, Pair pair, TokenId new_id);

  /// Learns one merge from `ids`: the most frequent pair (special tokens are barriers; ties go
  /// to the pair that occurs first) becomes `new_id` via add_merge. Returns the merged sequence,
  /// the pair and its count, or nothing when no pair is left.
  /// Example: [1, 2, 1, 2, 3] with new_id 256 -> {[256, 256, 3], (1, 2), 2}.
  std::optional<TrainStep> train_step(const Ids& ids, TokenId new_id);

  /// Text -> ids: encode_base, then repeatedly apply the merge with the lowest id among the
  /// adjacent pairs, until none applies. Example (merges ab->256, (256)c->257): "abcab" ->
  /// [257, 256]. Empty text -> [].
  Ids encode(std::string_view text) const;

  /// Ids -> text: the concatenated bytes of each id, as UTF-8 with invalid sequences replaced
  /// by U+FFFD (never an exception for bytes). ValueError for an id outside the vocabulary.
  /// Example: [104, 105] -> "hi"; [0xE2] -> "\uFFFD".
  std::string decode(const Ids& ids) const;

  // --- Training (implemented for you) ---------------------------------------------------------

  /// Learns merges on `text` until the vocabulary has `vocab_size` entries (or no pair is left),
  /// by calling train_step with new ids vocab_size(), vocab_size()+1, ... It starts from the
  /// encoding of `text` under the merges already learned (none for a fresh tokenizer) and never
  /// resets them. `progress` (optional) fires every `progress_every` steps, when the target is
  /// reached, and once with done = true at the end if that has not happened yet.
  /// ValueError if vocab_size < base_vocab_size() or progress_every < 1.
  void train(std::string_view text, std::size_t vocab_size, const ProgressCallback& progress = {},
             std::size_t progress_every = 100);

  /// Exactly the merges of train (same pairs, same ids, same tie-breaks), with an incremental
  /// algorithm: a linked token list, pair -> occurrence lists and a lazily invalidated priority
  /// queue. Vocab 4096 on TinyShakespeare takes well under two seconds. Returns the training
  /// text's final ids, which equal encode_fast(text). Same errors and progress as train.
  Ids train_fast(std::string_view text, std::size_t vocab_size,
                 const ProgressCallback& progress = {}, std::size_t progress_every = 100);

  // --- Encoding (implemented for you) ---------------------------------------------------------

  /// The initial split: special tokens (longest first where two start at the same place) become
  /// their ids, everything else its UTF-8 bytes. Example with the course tokens:
  /// "a<|endoftext|>b" -> [97, 256, 98].
  Ids encode_base(std::string_view text) const;

  /// Exactly encode(text), in O(n log n): merges are applied by priority (bucket per merge id)
  /// on a linked list. About 0.1 s for all of TinyShakespeare at vocab 4096.
  Ids encode_fast(std::string_view text) const;

  /// The encoding a tokenizer trained to `vocab_size` would give: only merges with id below
  /// `vocab_size` are used (fast path). ValueError below base_vocab_size() or above
  /// trained_vocab_size(). Example: encode_at_vocab(text, base_vocab_size()) == encode_base(text).
  Ids encode_at_vocab(std::string_view text, std::size_t vocab_size) const;

  /// The Python edition's vocab selector: nullopt -> vocab_size() (all merges); 0 ->
  /// base_vocab_size() (bytes and specials only); N -> N (ValueError outside
  /// [base_vocab_size(), trained_vocab_size()]).
  std::size_t effective_vocab_size(std::optional<std::size_t> vocab_size) const;

  /// encode_at_vocab(text, effective_vocab_size(vocab_size)). Exercises that train a model with a
  /// 2048-entry embedding on the 4096-entry ShakespeareTokenizer call this with 2048.
  Ids encode_with_vocab_size(std::string_view text, std::optional<std::size_t> vocab_size) const;

  // --- The tables -------------------------------------------------------------------------------

  /// Records a merge: merges[pair] = new_id and vocab[new_id] = vocab[a] + vocab[b].
  /// ValueError unless new_id == vocab_size() (ids are consecutive), both parents exist, neither
  /// is a special token, and `pair` has no merge yet.
  void add_merge(Pair pair, TokenId new_id);

  /// len(vocab): 256 + specials + merges.
  std::size_t vocab_size() const { return vocab_.size(); }
  /// The largest vocab_size this tokenizer was trained toward, or vocab_size() if larger. Training
  /// stops early when no pair is left (a short, repetitive text), so a tokenizer trained to 350
  /// may hold only 305 entries; capped encodings accept caps up to 350 and then use every merge.
  std::size_t trained_vocab_size() const { return std::max(vocab_.size(), trained_target_); }
  /// 256 + number of special tokens: the first id a merge gets.
  std::size_t base_vocab_size() const { return 256 + special_tokens_.size(); }
  /// id -> the bytes it stands for (a byte string, not necessarily valid UTF-8).
  const std::vector<std::string>& vocab() const { return vocab_; }
  /// The bytes of one id; ValueError for an id outside the vocabulary.
  const std::string& token_bytes(TokenId id) const;
  /// The bytes of one id as text (U+FFFD for partial UTF-8); ValueError for an unknown id.
  std::string token_text(TokenId id) const;
  /// pair -> new id, every learned merge.
  const std::unordered_map<Pair, TokenId, PairHash>& merges() const { return merges_; }
  /// The learned merges ordered by id (the order of tokenizer.json).
  const std::vector<Merge>& merges_in_order() const { return merge_order_; }
  /// The id `pair` merges into, if it has a merge.
  std::optional<TokenId> merge_id(Pair pair) const;

  // --- Special tokens ---------------------------------------------------------------------------

  const std::vector<std::string>& special_tokens() const { return special_tokens_; }
  /// token text -> id, e.g. {"<|endoftext|>": 256, ...}.
  const std::unordered_map<std::string, TokenId>& special_to_id() const { return special_to_id_; }
  /// The id of a special token; ValueError naming the known ones if `token` is not one.
  TokenId special_id(std::string_view token) const;
  /// The ids of the special tokens: the barriers of training.
  const std::unordered_set<TokenId>& special_token_ids() const { return special_ids_; }
  bool is_special(TokenId id) const { return id >= 256 && id < base_vocab_size(); }

  // --- Persistence (interoperable with the Python edition) ------------------------------------

  /// {"format": "g2c.bpe", "version": 2, "special_tokens": [...], "merges": [[a, b, id], ...]}.
  /// (This header declares nlohmann's types only: include <nlohmann/json.hpp> to use the value.)
  nlohmann::ordered_json to_json() const;
  /// Parses to_json()'s object (version 1 or 2). ValueError saying what is wrong for a wrong
  /// format or version, malformed fields, ids not consecutive from the base size, unknown or
  /// special parents, or a repeated pair.
  static BPETokenizer from_json(const nlohmann::json& payload);
  /// from_json on the text of a tokenizer.json; `where` names the source in error messages.
  static BPETokenizer from_json_text(std::string_view text,
                                     std::string_view where = "tokenizer.json");
  /// Writes tokenizer.json (2-space indent, trailing newline) atomically.
  void save(const std::filesystem::path& path) const;
  /// Reads a tokenizer.json written by save() or by the Python edition.
  static BPETokenizer load(const std::filesystem::path& path);

  /// Adds merges given by the bytes of their two parts, as external merge lists (a merges.txt, a
  /// Hugging Face tokenizer.json) write them: {"ab", "c"} merges the token "ab" with "c". Ids are
  /// given consecutively from vocab_size(), in list order, except that a merge whose part is a
  /// token some later merge creates waits until that merge is in (a list written by frequency
  /// may name a composite before it defines it). Example: {{"ab", "c"}, {"a", "b"}} on a fresh
  /// tokenizer gives (a, b) -> 256, then (ab, c) -> 257. ValueError, with nothing added, for a part
  /// no merge of the list ever creates, a special token's bytes, an empty part, or a repeated pair.
  void import_merges(const std::vector<std::pair<std::string, std::string>>& merges);

  /// Same special tokens and the same merges in the same order.
  friend bool operator==(const BPETokenizer& a, const BPETokenizer& b) {
    return a.special_tokens_ == b.special_tokens_ && a.merge_order_ == b.merge_order_;
  }

 private:
  // The training sequence a call to train or train_fast starts from.
  Ids initial_training_ids(std::string_view text, bool fast) const;
  void check_train_arguments(std::size_t vocab_size, std::size_t progress_every) const;
  void note_training_target(std::size_t vocab_size);

  std::vector<std::string> special_tokens_;
  std::unordered_map<std::string, TokenId> special_to_id_;
  std::unordered_set<TokenId> special_ids_;
  std::vector<std::string> vocab_;
  std::unordered_map<Pair, TokenId, PairHash> merges_;
  std::vector<Merge> merge_order_;
  std::size_t trained_target_ = 0;
};

}  // namespace g2c::tokenizer
