// Module 11 — logits warpers: how a sampler reshapes the model's next-token distribution before
// drawing from it.
//
// Dimension legend: B rows (sequences), T previous tokens, V vocab_size.
// Every warper maps logits (…, V) -> logits (…, V) of the same shape, row by row along the last
// dim, and never changes them in place. The filters write -inf into the logits they remove, so
// that the softmax taken afterwards gives those tokens probability exactly 0 and renormalises the
// survivors. In generate() they run in this order (the order of Hugging Face's
// LogitsProcessorList):
//   repetition penalty -> temperature -> top-k -> top-p -> softmax -> multinomial draw
// Temperature 0 is not a warper: it is greedy decoding (argmax), and generate() skips all of them.
//
// What is deliberately left out: typical/min-p/eta sampling, frequency and presence penalties,
// beam search.
#pragma once

#include <cstdint>

#include "g2c/core/torch.h"

namespace g2c::sampling {

/// logits / temperature, for any shape (…, V). T < 1 sharpens the softmax (the argmax gains
/// mass), T > 1 flattens it towards uniform; the order of the logits never changes. ValueError
/// for T <= 0 (or not finite): T = 0 means greedy decoding, which generate() handles without
/// calling this.
/// Example: apply_temperature([[1, 2, 3, 4]], 0.5) -> [[2, 4, 6, 8]].
torch::Tensor apply_temperature(const torch::Tensor& logits, double temperature);

/// Keeps the k largest logits of each row (…, V) and sets the others to -inf; k >= V keeps every
/// logit. Logits tied with the k-th largest all survive. ValueError for k <= 0.
/// Example: top_k_filter([[1, 5, 3, 2]], 2) -> [[-inf, 5, 3, -inf]].
torch::Tensor top_k_filter(const torch::Tensor& logits, std::int64_t k);

/// Nucleus filter: per row (…, V), keeps the smallest set of most probable tokens whose softmax
/// probability adds up to at least p, and sets the others to -inf. Token i (in descending order)
/// is dropped when the tokens ranked above it already reach p, so the argmax always survives,
/// even when it alone holds more than p. p = 1 keeps every logit. ValueError unless 0 < p <= 1.
/// Example: softmax [0.6, 0.3, 0.1] with p = 0.7 keeps the first two (0.6 < 0.7 <= 0.9); with
/// p = 0.5 only the first.
torch::Tensor top_p_filter(const torch::Tensor& logits, double p);

/// The CTRL repetition penalty. logits (B, V); previous_ids (T), one history shared by every row,
/// or (B, T), one history per row (int64 ids in [0, V), on any device). Every id that appears in
/// a row's history gets its logit divided by `penalty` when positive and multiplied by it when
/// negative or zero — lower either way for penalty > 1 — once, however often the id appears.
/// penalty = 1 is the identity. ValueError for penalty <= 0, or for shapes or ids that do not
/// fit the logits.
/// Example: logits [[2, 3, -2, 5]], previous_ids [0, 2, 0], penalty 2 -> [[1, 3, -4, 5]].
torch::Tensor apply_repetition_penalty(const torch::Tensor& logits,
                                       const torch::Tensor& previous_ids, double penalty);

}  // namespace g2c::sampling
