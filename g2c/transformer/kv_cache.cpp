#include "g2c/transformer/kv_cache.h"

#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"

namespace g2c::transformer {

KVCache KVCache::empty(std::int64_t num_layers, std::int64_t capacity) {
  if (num_layers <= 0 || capacity < 0) {
    throw ValueError(
        fmt::format("KVCache::empty needs num_layers > 0 and capacity >= 0, got {} and {}",
                    num_layers, capacity));
  }
  KVCache cache;
  cache.layers.resize(static_cast<std::size_t>(num_layers));
  for (auto& layer : cache.layers) layer.capacity = capacity;
  return cache;
}

std::int64_t KVCache::length() const {
  if (layers.empty()) return 0;
  std::vector<std::int64_t> lengths;
  for (const auto& layer : layers) lengths.push_back(layer.length());
  for (const auto length : lengths) {
    if (length != lengths.front()) {
      throw ValueError(fmt::format(
          "KV cache layers have inconsistent lengths [{}]: every layer must hold the same "
          "positions (clear() the cache and start the sequence again)",
          fmt::join(lengths, ", ")));
    }
  }
  return lengths.front();
}

void KVCache::truncate(std::int64_t new_length) {
  const std::int64_t held = length();  // also refuses layers that disagree
  if (new_length < 0 || new_length > held) {
    throw ValueError(
        fmt::format("KVCache::truncate: the cache holds {} positions; cannot keep {} (pass 0..{})",
                    held, new_length, held));
  }
  for (auto& layer : layers) layer.truncate(new_length);
}

void KVCache::clear() {
  for (auto& layer : layers) layer.clear();
}

}  // namespace g2c::transformer
