// Module 13 — your work: a batch of SFT examples.
#include "g2c/sft/data.h"

#include <algorithm>

#include "g2c/core/errors.h"

namespace g2c::sft {

SFTBatch pad_and_collate(const std::vector<SFTExample>& examples, std::int64_t max_seq_len,
                         std::int64_t pad_id) {
  // TODO: A (B, L) grid of ids and one of mask bits, L = max_seq_len: row b holds example b's
  // first min(T_b, L) ids and mask entries (a longer example loses its end), then pad_id and 0
  // up to L. Then the shift of the LM loss: x = ids[:, :L-1], y = ids[:, 1:], and
  // loss_mask = mask[:, 1:] — shifted like y, because loss_mask[b, t] says whether target y[b, t]
  // is a reply token. Return int64 tensors (B, L - 1). Check the arguments first
  // (check_pad_and_collate).
  // Operations: torch::full, a loop writing rows (index_put_ or a std::vector then torch::tensor),
  // narrow or Slice.
  // Hints, one step at a time: scripts/hint.sh 13 pad_and_collate
  throw g2c::todo("pad_and_collate", "g2c/sft/data.cpp", "13");
}

}  // namespace g2c::sft
