// Module 09 (inference, module 16 of the course) — the key/value cache of a whole transformer: one
// module 08 LayerKVCache per block, all holding the same number of positions.
//
// Dimension legend: B batch, H num_heads, T cached positions, d head_dim.
// layers[l].k, layers[l].v: (B, H, T, d) for block l. Generating one token appends one position to
// every layer; nothing is ever recomputed or evicted (truncate drops the positions a speculative
// decoder rolls back). A model's empty_kv_cache() reserves max_seq_len positions per layer, so
// appending never reallocates.
#pragma once

#include <cstdint>
#include <vector>

#include "g2c/attention/multi_head.h"

namespace g2c::transformer {

struct KVCache {
  std::vector<g2c::attention::LayerKVCache> layers;  // one per block, in block order

  /// `num_layers` empty layer caches, each making room for `capacity` positions at its first
  /// append (0: no reservation). ValueError for num_layers <= 0 or capacity < 0.
  /// Example: KVCache::empty(3).size() == 3, .length() == 0.
  static KVCache empty(std::int64_t num_layers, std::int64_t capacity = 0);

  /// Number of layer caches.
  std::int64_t size() const { return static_cast<std::int64_t>(layers.size()); }

  /// The number of positions every layer holds (0 for no layers). ValueError when the layers
  /// disagree — a half-finished update, which would put the next token at the wrong position.
  std::int64_t length() const;

  /// Keeps the first `length` positions of every layer and drops the rest (a speculative decoder's
  /// rollback of rejected draft tokens; the next token takes position `length`). ValueError for a
  /// length outside [0, length()], before any layer changes.
  void truncate(std::int64_t length);

  /// Empties every layer (the cache can then start a new sequence).
  void clear();
};

}  // namespace g2c::transformer
