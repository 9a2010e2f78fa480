// Module 08, implemented for you — the key/value cache of one attention layer, for generating one
// token at a time.
//
// Dimension legend: B batch, H heads, T cached positions, d head_dim.
// Generation appends one token's keys and values per step instead of recomputing the whole prefix.
// `k` and `v` always read as (B, H, T, d) tensors. Underneath, appends write into a buffer with
// room for `capacity` positions (grown by doubling when it runs out), so a step copies one
// position instead of concatenating the whole past: T steps cost O(T) copies, not O(T²).
// subtle: while autograd records (a cache built with gradients), appends concatenate instead: an
// in-place write into a buffer that earlier steps' graphs still read would break their backward.
#pragma once

#include <cstdint>

#include "g2c/core/torch.h"

namespace g2c::attention {

struct LayerKVCache {
  /// An empty cache.
  LayerKVCache() = default;
  /// A cache holding k, v (B, H, T, d) already: both defined with equal 4-D shapes, or both
  /// undefined (empty); ValueError otherwise. Example: LayerKVCache(randn({2, 3, 1, 4}),
  /// randn({2, 3, 1, 4})).length() == 1.
  LayerKVCache(torch::Tensor k, torch::Tensor v);
  /// A copy reads the same k and v but gets a buffer of its own at its next append, so appending to
  /// one never writes into positions the other reads.
  LayerKVCache(const LayerKVCache& other);
  LayerKVCache& operator=(const LayerKVCache& other);
  LayerKVCache(LayerKVCache&&) noexcept = default;
  LayerKVCache& operator=(LayerKVCache&&) noexcept = default;

  torch::Tensor k;  // (B, H, T, d), undefined while empty
  torch::Tensor v;  // (B, H, T, d)
  /// Positions to make room for at the first append (a model's max_seq_len); 0: as many as that
  /// append brings. Appending past it still works: the buffer doubles.
  std::int64_t capacity = 0;

  /// Number of cached positions T (0 when empty).
  std::int64_t length() const { return k.defined() ? k.size(2) : 0; }
  /// Appends k_new, v_new (B, H, T_new, d) along T and returns this cache, so calls can chain.
  /// ValueError when their shape, device or dtype does not match what is cached, or when the
  /// cache holds only one of k and v.
  LayerKVCache& append(const torch::Tensor& k_new, const torch::Tensor& v_new);
  /// Keeps positions [0, length) and drops the rest, keeping the buffer: the next append writes at
  /// position `length` (a speculative decoder rolling back rejected draft tokens). A tensor read
  /// from k or v before the call may see those positions overwritten later. ValueError for a
  /// length outside [0, length()]. Example: a cache of 5 positions, truncate(3) -> length() == 3.
  void truncate(std::int64_t length);
  /// Empties the cache (and lets go of its buffer).
  void clear();

 private:
  torch::Tensor k_buffer_;  // (B, H, room, d): k is its first T positions; undefined without one
  torch::Tensor v_buffer_;
};

}  // namespace g2c::attention
