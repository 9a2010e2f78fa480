// The C++ half of scripts/check_rag_hash.py: module 17's HashEmbedder on texts given as JSON, the
// vectors back as JSON, for a comparison with the Python edition's definition.
//   rag_hash_embed < {"dim": 512, "ngram_range": [3, 5], "seed": 0, "texts": [...]}
//                  > {"vectors": [[...], ...]}
#include <iostream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/rag/embed.h"

int main() {
  try {
    const auto request =
        nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(std::cin), {}));
    const auto range = request.at("ngram_range").get<std::vector<std::int64_t>>();
    g2c::rag::HashEmbedder embedder({.dim = request.at("dim").get<std::int64_t>(),
                                     .ngram_range = {range.at(0), range.at(1)},
                                     .seed = request.at("seed").get<std::uint64_t>()});
    const auto vectors =
        embedder.embed(request.at("texts").get<std::vector<std::string>>()).contiguous();
    nlohmann::json rows = nlohmann::json::array();
    for (std::int64_t i = 0; i < vectors.size(0); ++i) {
      const auto* row = vectors[i].data_ptr<float>();
      rows.push_back(std::vector<float>(row, row + vectors.size(1)));
    }
    std::cout << nlohmann::json{{"vectors", rows}}.dump() << "\n";
  } catch (const std::exception& error) {
    std::cerr << "rag_hash_embed: " << error.what() << "\n";
    return 2;
  }
  return 0;
}
