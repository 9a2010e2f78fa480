#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/sft/data.h"

namespace g2c::sft {

void check_pad_and_collate(const std::vector<SFTExample>& examples, std::int64_t max_seq_len) {
  if (examples.empty()) throw ValueError("pad_and_collate needs at least one example, got none");
  if (max_seq_len < 2) {
    throw ValueError(fmt::format(
        "max_seq_len must be at least 2 (the shift by one leaves max_seq_len - 1), got {}",
        max_seq_len));
  }
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const auto& [ids, mask] = examples[i];
    if (ids.size() != mask.size()) {
      throw ValueError(fmt::format(
          "example {} has {} ids but {} mask entries: the mask is aligned with the ids, one "
          "entry each",
          i, ids.size(), mask.size()));
    }
    for (const auto bit : mask) {
      if (bit != 0 && bit != 1) {
        throw ValueError(fmt::format("example {} has mask value {}: masks hold 0 or 1", i, bit));
      }
    }
  }
}

}  // namespace g2c::sft
