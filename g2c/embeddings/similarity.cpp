// Module 05 — your work: cosine similarity, nearest neighbours, and reading GloVe vectors.
#include "g2c/embeddings/similarity.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::embeddings {

torch::Tensor normalized(const torch::Tensor& v) {
  // TODO: Scale every vector along the last dimension to length 1 (cosine similarity is then a dot
  // product), with the norm clamped at 1e-12 so a zero vector stays zero instead of NaN. A 0-d or
  // undefined tensor is a ValueError: a vector (D) or a batch of vectors (…, D) is expected.
  // Hints, one step at a time: scripts/hint.sh 05 normalized
  throw g2c::todo("normalized", "g2c/embeddings/similarity.cpp", "05");
}

Neighbours nearest_by_cosine(const torch::Tensor& query, const WordVectors& vectors,
                             const std::set<std::string>& exclude, std::int64_t top_k) {
  // TODO: Rank the words of `vectors` not in `exclude` by the cosine of their vector with the
  // query, highest first, keeping the input order between equal scores, and return the top_k. In
  // float64 so ties sort alike everywhere. ValueErrors that say what was given for top_k < 1, a
  // query that is not (D), and a word vector of another size. Operations: normalized, dot,
  // std::stable_sort.
  // Hints, one step at a time: scripts/hint.sh 05 nearest_by_cosine
  throw g2c::todo("nearest_by_cosine", "g2c/embeddings/similarity.cpp", "05");
}

WordVectors load_glove_subset(const std::filesystem::path& path,
                              const std::set<std::string>& words) {
  // TODO: Read GloVe's text format — one word and its D numbers per line — keeping only the wanted
  // words, in file order, as float32 (D) tensors. ValueErrors that name the path (and where GloVe
  // is downloaded) when it cannot be opened, and the line for a field that is not a number, a word
  // without values or a D that changes. Operations: std::ifstream, std::getline,
  // std::istringstream, std::strtof with errno.
  // Hints, one step at a time: scripts/hint.sh 05 load_glove_subset
  throw g2c::todo("load_glove_subset", "g2c/embeddings/similarity.cpp", "05");
}

}  // namespace g2c::embeddings
