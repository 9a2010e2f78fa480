#include "g2c/specdec/drafter.h"

#include <algorithm>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::specdec {

PromptLookupDrafter::PromptLookupDrafter(std::int64_t max_ngram, std::int64_t min_ngram)
    : max_ngram_(max_ngram), min_ngram_(min_ngram) {
  if (min_ngram < 1 || max_ngram < min_ngram) {
    throw ValueError(fmt::format(
        "PromptLookupDrafter: need 1 <= min_ngram <= max_ngram; got min_ngram {}, max_ngram {}",
        min_ngram, max_ngram));
  }
}

std::vector<std::int64_t> PromptLookupDrafter::propose(const std::vector<std::int64_t>& ids,
                                                       std::int64_t k) {
  const auto size = static_cast<std::int64_t>(ids.size());
  if (k <= 0) return {};
  for (std::int64_t n = std::min(max_ngram_, size - 1); n >= min_ngram_; --n) {
    const auto suffix = ids.end() - n;
    // Latest first: the most recent context is the likeliest to go on the same way. A match
    // starts at most at size - n - 1, so at least one id follows it.
    for (std::int64_t start = size - n - 1; start >= 0; --start) {
      if (std::equal(suffix, ids.end(), ids.begin() + start)) {
        const auto from = ids.begin() + start + n;
        return {from, from + std::min(k, size - (start + n))};
      }
    }
  }
  return {};
}

}  // namespace g2c::specdec
