#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/dpo/data.h"

namespace g2c::dpo {

void check_pad_and_collate_pref(const std::vector<PreferenceExample>& examples,
                                std::int64_t max_seq_len) {
  if (examples.empty()) {
    throw ValueError("pad_and_collate_pref needs at least one preference example, got none");
  }
  if (max_seq_len < 2) {
    throw ValueError(fmt::format(
        "max_seq_len must be at least 2 (the shift by one leaves max_seq_len - 1), got {}",
        max_seq_len));
  }
}

}  // namespace g2c::dpo
