#include "g2c/attention/masks.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::attention {

torch::Tensor padding_mask(const torch::Tensor& lengths, std::int64_t seq_len) {
  if (!lengths.defined() || lengths.dim() != 1 ||
      !at::isIntegralType(lengths.scalar_type(), /*includeBool=*/false)) {
    throw ValueError(fmt::format(
        "padding_mask expects lengths as a 1-D integer tensor (B), one length per sequence; got {}",
        lengths.defined() ? fmt::format("{} of {}", describe_shape(lengths),
                                        std::string(c10::toString(lengths.scalar_type())))
                          : "an undefined tensor"));
  }
  if (seq_len < 0) {
    throw ValueError(fmt::format("padding_mask: seq_len must be >= 0, got {}", seq_len));
  }
  if (lengths.numel() > 0) {
    const auto shortest = lengths.min().item<std::int64_t>();
    const auto longest = lengths.max().item<std::int64_t>();
    if (shortest < 0 || longest > seq_len) {
      throw ValueError(fmt::format(
          "padding_mask: every length must lie in [0, seq_len={}]; got lengths from {} to {}",
          seq_len, shortest, longest));
    }
  }
  const auto positions = torch::arange(seq_len, lengths.options());  // (T)
  // (1, T) >= (B, 1) -> (B, T): true from each sequence's length on.
  const auto blocked = positions.unsqueeze(0) >= lengths.unsqueeze(1);
  return blocked.view({lengths.size(0), 1, 1, seq_len});  // (B, 1, 1, T)
}

torch::Tensor padding_mask_from_ids(const torch::Tensor& ids, std::int64_t pad_id) {
  if (!ids.defined() || ids.dim() != 2 ||
      !at::isIntegralType(ids.scalar_type(), /*includeBool=*/false)) {
    throw ValueError(fmt::format(
        "padding_mask_from_ids expects integer token ids (B, T); got {}",
        ids.defined() ? describe_shape(ids, {"B", "T"}) : std::string("an undefined tensor")));
  }
  return (ids == pad_id).view({ids.size(0), 1, 1, ids.size(1)});  // (B, 1, 1, T)
}

torch::Tensor blocked_mask(const torch::Tensor& mask) {
  if (!mask.defined()) throw ValueError("blocked_mask: the mask is an undefined tensor");
  const auto type = mask.scalar_type();
  if (type == torch::kBool) return mask;
  if (type == torch::kByte) {
    throw ValueError(
        "an attention mask of uint8 is ambiguous: old PyTorch code means 1 = blocked, the 0/1 "
        "convention 0 = blocked. Pass mask.to(torch::kBool) for the first (true = blocked, the "
        "course convention) or a float 0/1 mask for the second");
  }
  if (!at::isFloatingType(type) && !at::isIntegralType(type, /*includeBool=*/false)) {
    throw ValueError(fmt::format(
        "an attention mask must be boolean (true = blocked) or 0/1 (0 = blocked); got dtype {}",
        std::string(c10::toString(type))));
  }
  if (((mask != 0) & (mask != 1)).any().item<bool>()) {
    const bool additive = at::isFloatingType(type) && torch::isinf(mask).any().item<bool>();
    throw ValueError(fmt::format(
        "a float or integer attention mask must hold only 0 and 1 (1 = attend, 0 = blocked); this "
        "one, {}, holds values from {} to {}{}",
        describe_shape(mask), mask.min().item<double>(), mask.max().item<double>(),
        additive ? ". It looks additive (0 = attend, -inf = blocked, as torch::nn::"
                   "MultiheadAttention's float attn_mask): pass torch::isinf(mask) instead"
                 : ""));
  }
  return mask == 0;  // 0 = blocked
}

namespace {

/// The course's reading of a mask's dimensions: (B, T_q, T_k) gets the head axis, (B, 1, T_q, T_k).
torch::Tensor with_head_axis(const torch::Tensor& mask) {
  return mask.dim() == 3 ? mask.unsqueeze(1) : mask;
}

}  // namespace

torch::Tensor combine_masks(const torch::Tensor& a, const torch::Tensor& b) {
  if (!a.defined() && !b.defined()) return {};
  if (!a.defined()) return blocked_mask(b);
  if (!b.defined()) return blocked_mask(a);
  const auto left = with_head_axis(blocked_mask(a)), right = with_head_axis(blocked_mask(b));
  const auto dims = std::max(left.dim(), right.dim());
  for (std::int64_t i = 1; i <= dims; ++i) {  // from the last dimension backwards
    const auto l = i <= left.dim() ? left.size(-i) : 1, r = i <= right.dim() ? right.size(-i) : 1;
    if (l != r && l != 1 && r != 1) {
      throw ValueError(fmt::format(
          "combine_masks: masks of shapes {} and {} do not broadcast (a 3-D mask is read as "
          "(B, T_q, T_k), a key padding mask as (B, 1, 1, T_k))",
          describe_shape(a), describe_shape(b)));
    }
  }
  if (left.device() != right.device()) {
    throw ValueError(fmt::format("combine_masks: the masks are on different devices ({} and {})",
                                 left.device().str(), right.device().str()));
  }
  return left | right;
}

torch::Tensor fit_mask(const torch::Tensor& mask, std::int64_t batch, std::int64_t t_q,
                       std::int64_t t_k, const std::string& context) {
  const auto blocked = with_head_axis(blocked_mask(mask));
  auto fits = [](std::int64_t size, std::int64_t wanted) { return size == wanted || size == 1; };
  const bool ok = blocked.dim() >= 2 && blocked.dim() <= 4 && blocked.size(-1) == t_k &&
                  fits(blocked.size(-2), t_q) &&
                  (blocked.dim() < 4 || (blocked.size(1) == 1 && fits(blocked.size(0), batch)));
  if (!ok) {
    throw ValueError(fmt::format(
        "{}the mask {} does not fit the scores of B={} sequences, T_q={} queries and T_k={} keys: "
        "expected (T_q={}, T_k={}), (B={}, T_q={}, T_k={}), (B={}, 1, T_q={}, T_k={}) or a key "
        "mask (B={}, 1, 1, T_k={}) (padding_mask builds one from lengths)",
        context.empty() ? "" : context + ": ", describe_shape(mask), batch, t_q, t_k, t_q, t_k,
        batch, t_q, t_k, batch, t_q, t_k, batch, t_k));
  }
  const auto four_d = blocked.dim() == 2 ? blocked.unsqueeze(0).unsqueeze(0) : blocked;
  return four_d.expand({four_d.size(0), 1, t_q, t_k});  // (B or 1, 1, T_q, T_k)
}

}  // namespace g2c::attention
