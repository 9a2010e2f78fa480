// Module 05 — similarity: what embedding geometry means. Two words are close when their vectors
// point the same way (cosine similarity), and some relations are directions (king − man + woman).
//
// Dimension legend: D embedding_dim. Word vectors are 1-D tensors (D), kept in insertion order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "g2c/core/torch.h"

namespace g2c::embeddings {

/// Words and their vectors (D), in order (file order for load_glove_subset). Ties in a ranking
/// keep this order.
using WordVectors = std::vector<std::pair<std::string, torch::Tensor>>;

/// (word, cosine score) pairs, best first.
using Neighbours = std::vector<std::pair<std::string, double>>;

/// v / max(‖v‖, 1e-12) along the last dim. Example: [3, 4] -> [0.6, 0.8]; [0, 0] -> [0, 0]
/// (no NaN).
torch::Tensor normalized(const torch::Tensor& v);

/// The top_k words whose vectors have the largest cosine with `query` (D), skipping `exclude`,
/// sorted by score descending (stable: ties keep the order of `vectors`).
/// Example: query [1, 0], vectors {a: [2, 0], b: [0, 1], c: [1, 1]} -> [(a, 1.0), (c, 0.707),
/// (b, 0.0)]. ValueError when top_k < 1 or a vector's size differs from the query's.
Neighbours nearest_by_cosine(const torch::Tensor& query, const WordVectors& vectors,
                             const std::set<std::string>& exclude = {}, std::int64_t top_k = 5);

/// "a is to b as ? is to c": nearest_by_cosine(v[a] − v[b] + v[c]), excluding a, b and c.
/// Example: analogy("king", "man", "woman", vectors) -> queen first on GloVe vectors.
/// ValueError naming a word that is not in `vectors`.
Neighbours analogy(const std::string& a, const std::string& b, const std::string& c,
                   const WordVectors& vectors, std::int64_t top_k = 5);

/// The vector of `word` in `vectors`; ValueError when it is not there.
const torch::Tensor& vector_of(const WordVectors& vectors, const std::string& word);

/// Reads a GloVe text file (one "word v1 v2 ... vD" per line) and keeps only the lines whose word
/// is in `words`, as float32 (D) tensors in file order. ValueError naming the path when the file
/// cannot be opened, and naming the line when a value is not a number or D changes.
WordVectors load_glove_subset(const std::filesystem::path& path,
                              const std::set<std::string>& words);

}  // namespace g2c::embeddings
