#include "g2c/attention/layer_kv_cache.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::attention {

namespace {

/// ValueError unless k and v are both defined, 4-D (B, H, T, d) and of equal shape.
void check_kv_pair(const torch::Tensor& k, const torch::Tensor& v) {
  if (!k.defined() || !v.defined() || k.dim() != 4 || k.sizes() != v.sizes()) {
    throw ValueError(fmt::format("LayerKVCache: k and v must both be (B, H, T, d); got k {}, v {}",
                                 k.defined() ? describe_shape(k) : "undefined",
                                 v.defined() ? describe_shape(v) : "undefined"));
  }
  if (k.device() != v.device() || k.scalar_type() != v.scalar_type()) {
    throw ValueError(
        fmt::format("LayerKVCache: k and v must share device and dtype; got k {} {}, "
                    "v {} {}",
                    k.device().str(), c10::toString(k.scalar_type()), v.device().str(),
                    c10::toString(v.scalar_type())));
  }
}

/// A buffer with room for `room` positions of `like` (B, H, ·, d), holding `past` (B, H, T, d), or
/// nothing when past is undefined.
torch::Tensor buffer_with(const torch::Tensor& like, std::int64_t room, const torch::Tensor& past) {
  auto buffer = torch::empty({like.size(0), like.size(1), room, like.size(3)}, like.options());
  if (past.defined()) buffer.narrow(/*dim=*/2, 0, past.size(2)).copy_(past);
  return buffer;
}

/// Positions [start, start + count) of a buffer (B, H, room, d): what narrow(2, start, count)
/// gives, as one view operation instead of three (on a GPU each is dispatched every step).
torch::Tensor positions(const torch::Tensor& buffer, std::int64_t start, std::int64_t count) {
  return buffer.as_strided({buffer.size(0), buffer.size(1), count, buffer.size(3)},
                           buffer.strides(), buffer.storage_offset() + start * buffer.stride(2));
}

}  // namespace

LayerKVCache::LayerKVCache(torch::Tensor k_, torch::Tensor v_)
    : k(std::move(k_)), v(std::move(v_)) {
  if (k.defined() || v.defined()) check_kv_pair(k, v);
}

LayerKVCache::LayerKVCache(const LayerKVCache& other)
    : k(other.k), v(other.v), capacity(other.capacity) {}

LayerKVCache& LayerKVCache::operator=(const LayerKVCache& other) {
  if (this != &other) {
    k = other.k;
    v = other.v;
    capacity = other.capacity;
    k_buffer_ = torch::Tensor();
    v_buffer_ = torch::Tensor();
  }
  return *this;
}

LayerKVCache& LayerKVCache::append(const torch::Tensor& k_new, const torch::Tensor& v_new) {
  check_kv_pair(k_new, v_new);
  if (k.defined() != v.defined()) {
    throw ValueError(fmt::format(
        "LayerKVCache holds k {} but v {}: set both or neither (clear() empties the cache)",
        k.defined() ? describe_shape(k) : "undefined",
        v.defined() ? describe_shape(v) : "undefined"));
  }
  if (k.defined()) {
    const bool same_layout =
        k_new.size(0) == k.size(0) && k_new.size(1) == k.size(1) && k_new.size(3) == k.size(3);
    if (!same_layout) {
      throw ValueError(fmt::format(
          "LayerKVCache holds {}; cannot append {} (B, H and d must match)",
          describe_shape(k, {"B", "H", "T", "d"}), describe_shape(k_new, {"B", "H", "T", "d"})));
    }
    if (k_new.device() != k.device() || k_new.scalar_type() != k.scalar_type()) {
      throw ValueError(fmt::format("LayerKVCache holds {} {} tensors; cannot append {} {}",
                                   k.device().str(), c10::toString(k.scalar_type()),
                                   k_new.device().str(), c10::toString(k_new.scalar_type())));
    }
  }
  const std::int64_t past = length(), added = k_new.size(2), total = past + added;
  const bool recording =
      torch::GradMode::is_enabled() && (k_new.requires_grad() || v_new.requires_grad() ||
                                        (k.defined() && (k.requires_grad() || v.requires_grad())));
  if (recording) {
    k_buffer_ = torch::Tensor();
    v_buffer_ = torch::Tensor();
    k = k.defined() ? torch::cat({k, k_new}, /*dim=*/2) : k_new;  // (B, H, T + T_new, d)
    v = v.defined() ? torch::cat({v, v_new}, /*dim=*/2) : v_new;
    return *this;
  }
  if (!k_buffer_.defined() || k_buffer_.size(2) < total) {
    const std::int64_t room =
        std::max({total, capacity, k_buffer_.defined() ? 2 * k_buffer_.size(2) : std::int64_t{0}});
    k_buffer_ = buffer_with(k_new, room, k);
    v_buffer_ = buffer_with(v_new, room, v);
  }
  positions(k_buffer_, past, added).copy_(k_new);
  positions(v_buffer_, past, added).copy_(v_new);
  k = positions(k_buffer_, 0, total);  // (B, H, T + T_new, d)
  v = positions(v_buffer_, 0, total);
  return *this;
}

void LayerKVCache::truncate(std::int64_t new_length) {
  const std::int64_t held = length();
  if (new_length < 0 || new_length > held) {
    throw ValueError(fmt::format(
        "LayerKVCache::truncate: the cache holds {} positions; cannot keep {} (pass 0..{})", held,
        new_length, held));
  }
  if (new_length == held) return;
  if (new_length == 0) {
    clear();
    return;
  }
  // Both cases are views: a buffered cache keeps its buffer (the next append writes at
  // new_length), a concatenated one its tensors.
  k = k_buffer_.defined() ? positions(k_buffer_, 0, new_length) : k.narrow(2, 0, new_length);
  v = v_buffer_.defined() ? positions(v_buffer_, 0, new_length) : v.narrow(2, 0, new_length);
}

void LayerKVCache::clear() {
  k = torch::Tensor();
  v = torch::Tensor();
  k_buffer_ = torch::Tensor();
  v_buffer_ = torch::Tensor();
}

}  // namespace g2c::attention
