// Module 17, reference: character n-grams of the lowercased text, hashed into buckets, counted,
// and the counts scaled to unit length.
#include "g2c/rag/embed.h"
#include "g2c/rag/chunk.h"
#include "g2c/rag/lowercase.h"

namespace g2c::rag {

torch::Tensor HashEmbedder::embed(const std::vector<std::string>& texts) {
  auto counts = torch::zeros({static_cast<std::int64_t>(texts.size()), dim()}, torch::kFloat32);
  auto rows = counts.accessor<float, 2>();
  const auto [min_n, max_n] = ngram_range();
  for (std::size_t row = 0; row < texts.size(); ++row) {
    // Lowercase before cutting: "The" and "the" must give the same n-grams.
    const auto lowered = python_lower(texts[row]);
    const auto offsets = character_offsets(lowered);
    const auto length = static_cast<std::int64_t>(offsets.size()) - 1;  // in characters
    for (auto n = min_n; n <= max_n; ++n) {
      for (std::int64_t start = 0; start + n <= length; ++start) {
        const auto first = offsets[static_cast<std::size_t>(start)];
        const auto last = offsets[static_cast<std::size_t>(start + n)];
        rows[static_cast<std::int64_t>(row)]
            [bucket(std::string_view(lowered).substr(first, last - first))] += 1.0f;
      }
    }
  }
  return l2_normalize_rows(counts);
}

}  // namespace g2c::rag
