// Attention masks in the course convention — boolean, true = blocked — for the scores
// (B, H, T_q, T_k): the padding mask of a batch of sequences of different lengths, the `or` that
// combines two masks (the tutorials' create_combined_mask), the one conversion from the 0/1
// convention other courses write (TinyTorch's attention, tutorial SelfAttention pages:
// 1 = attend, 0 = blocked), and the check that fits a caller's mask to the scores.
// MultiHeadAttention's masked and cross-attention forwards (multi_head.h) take these masks, and so
// does scaled_dot_product_attention (scaled_dot_product.h), which keeps fully blocked rows at zero.
//
// Dimension legend: B batch, H heads, T_q queries, T_k keys, T both when they are one sequence.
//
// Deliberately left out: left padding (the positions would have to shift too) and per-head masks
// (every mask here broadcasts over H).
#pragma once

#include <cstdint>
#include <string>

#include "g2c/core/torch.h"

namespace g2c::attention {

/// Key padding mask of sequences padded at the end: `lengths` (B) integers in [0, seq_len] ->
/// boolean (B, 1, 1, T), true where position j >= lengths[b] (a padding token). It broadcasts over
/// heads and queries: no query may look at a padding key. Built on the device of `lengths`.
/// Example: padding_mask(tensor({3, 1}), 4) -> [[[[F, F, F, T]]], [[[F, T, T, T]]]] (shape
/// (2,1,1,4)).
torch::Tensor padding_mask(const torch::Tensor& lengths, std::int64_t seq_len);

/// The same from token ids (B, T): blocked where ids == pad_id -> boolean (B, 1, 1, T).
/// Example: padding_mask_from_ids(tensor({{5, 7, 0}, {9, 0, 0}}), /*pad_id=*/0)
///   -> [[[[F, F, T]]], [[[F, T, T]]]].
/// subtle: every occurrence of pad_id is blocked, so pad_id must be an id no real token uses.
torch::Tensor padding_mask_from_ids(const torch::Tensor& ids, std::int64_t pad_id);

/// a | b: a score is blocked when either mask blocks it; either mask may be undefined (the other
/// is returned converted), and 0/1 masks are converted first (blocked_mask). A 3-D mask is read as
/// (B, T_q, T_k) and gets the head axis, (B, 1, T_q, T_k), so that it meets a (B, 1, 1, T_k) key
/// mask batch to batch (plain broadcasting would align its B with the heads). ValueError, naming
/// both shapes, when they do not broadcast.
/// Example: combine_masks(causal_mask(T, device), padding_mask(lengths, T)) -> (B, 1, T, T), the
/// decoder mask of a padded batch (the tutorials' `causal * padding` in the 0/1 convention).
torch::Tensor combine_masks(const torch::Tensor& a, const torch::Tensor& b);

/// Either convention in, the course convention out. A boolean mask is returned as it is; a float
/// or integer mask must hold only 0 and 1 and is read as 1 = attend, 0 = blocked (mask == 0 is
/// returned). ValueError for other values — an additive mask (0 = attend, -inf = blocked, the
/// float attn_mask of torch::nn::MultiheadAttention) included, with the conversion to write — and
/// for uint8, whose meaning differs between conventions (old PyTorch: 1 = blocked).
/// Example: blocked_mask(tensor({{1., 0.}, {1., 1.}})) -> [[F, T], [F, F]].
torch::Tensor blocked_mask(const torch::Tensor& mask);

/// A caller's mask fitted to the scores of B sequences, T_q queries and T_k keys: converted by
/// blocked_mask, read as (T_q, T_k), (B, T_q, T_k) or (B, 1, T_q, T_k), where B and T_q may also
/// be 1 (a key mask such as padding_mask's (B, 1, 1, T_k) broadcasts over the queries), and
/// returned as a boolean (B or 1, 1, T_q, T_k) view on the mask's device, the shape
/// scaled_dot_product_attention takes. ValueError naming the mask's shape and the expected ones;
/// `context` (say, the x it goes with) starts the message.
/// Example: fit_mask(padding_mask(lengths, 5), /*batch=*/2, 5, 5) -> (2, 1, 5, 5).
/// subtle: a 2-D mask is (T_q, T_k), one pattern for the whole batch. A (B, T) key padding mask,
/// as torch::nn::MultiheadAttention takes it, must become (B, 1, 1, T) first; when B == T it
/// would otherwise be read as a (T_q, T_k) pattern without an error.
torch::Tensor fit_mask(const torch::Tensor& mask, std::int64_t batch, std::int64_t t_q,
                       std::int64_t t_k, const std::string& context = "");

}  // namespace g2c::attention
