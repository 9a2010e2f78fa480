// Pieces shared by the tokenizer's implementation files (not part of the public API).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "g2c/tokenizer/bpe.h"

namespace g2c::tokenizer::internal {

inline constexpr TokenId kNone = 0xFFFFFFFFu;

inline std::uint64_t pair_key(TokenId left, TokenId right) {
  return (std::uint64_t{left} << 32) | right;
}

/// An open-addressing hash map from a pair key to a uint32 value: the hot lookup of the fast
/// paths, several times quicker than std::unordered_map.
class FlatPairMap {
 public:
  explicit FlatPairMap(std::size_t expected = 16);

  /// The value stored for the key, or kNone.
  std::uint32_t find(std::uint64_t key) const {
    std::size_t slot = index(key);
    while (true) {
      const std::uint64_t stored = keys_[slot];
      if (stored == key) return values_[slot];
      if (stored == kEmptyKey) return kNone;
      slot = (slot + 1) & mask_;
    }
  }
  /// The stored value; when the key is new, stores `value` first. `inserted` tells which.
  std::uint32_t insert(std::uint64_t key, std::uint32_t value, bool& inserted);
  std::size_t size() const { return size_; }

 private:
  static constexpr std::uint64_t kEmptyKey = ~std::uint64_t{0};
  std::size_t index(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void grow();

  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> values_;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

/// The merges of `tokenizer` with id below `cap`, as a FlatPairMap of pair key -> id.
FlatPairMap merge_table(const BPETokenizer& tokenizer, std::size_t cap);

/// The priority-driven encoder behind encode_fast and encode_at_vocab: encode_base, then every
/// merge with id below `cap` in id order, each left to right, on a linked list.
Ids encode_capped(const BPETokenizer& tokenizer, std::string_view text, std::size_t cap);

/// Builds the TrainProgress records of one train / train_fast call and decides when they fire.
class TrainReporter {
 public:
  TrainReporter(const BPETokenizer& tokenizer, std::size_t target_vocab_size,
                const ProgressCallback& callback, std::size_t every, std::size_t tokens);
  /// After each learned merge.
  void step(Pair pair, std::int64_t count, std::size_t tokens);
  /// At the end of training: the done report unless one was already sent.
  void finish(std::size_t tokens);

 private:
  void report(bool done);

  const BPETokenizer& tokenizer_;
  std::size_t target_;
  const ProgressCallback& callback_;
  std::size_t every_;
  std::size_t tokens_;
  std::size_t steps_ = 0;
  std::optional<Pair> last_pair_;
  std::optional<std::int64_t> last_count_;
  bool reported_done_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace g2c::tokenizer::internal
