// Module 17, this edition's addition — a vector store saved to disk, so an index of a large corpus
// is embedded once and opened in a moment afterwards. The file is an archive (g2c/core/archive.h:
// torch.save's format, readable by torch.load in Python): the chunks (text, source, start, end,
// metadata), the (N, dim) vectors, and the spec() of the embedder that made them. It is written
// to a temporary file and renamed, so a crash leaves the old index or the new one, never half of
// one; a truncated or damaged file is refused with its name, and so is a query embedder whose
// spec differs from the one that built the index (its vectors would mean something else).
//
//   save_index("artifacts/rag/course.index", store, embedder);
//   auto index = load_index("artifacts/rag/course.index");
//   DenseRetriever retriever(std::make_shared<HashEmbedder>(), index.store);   // spec checked:
//   check_embedder_matches(index, *retriever.embedder());
#pragma once

#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "g2c/rag/embed.h"
#include "g2c/rag/store.h"

namespace g2c::rag {

struct LoadedIndex {
  std::shared_ptr<VectorStore> store;
  nlohmann::json embedder;  // the spec() of the embedder that made the vectors
};

/// Writes `store` and `embedder`'s spec to `path` atomically (folders created). ValueError for a
/// store whose dim is not the embedder's.
void save_index(const std::filesystem::path& path, const VectorStore& store,
                const Embedder& embedder);

/// The index saved at `path`. FileNotFoundError when there is none; ValueError naming the file for
/// one that is truncated, of another format or version, or inconsistent (rows and chunks).
LoadedIndex load_index(const std::filesystem::path& path);

/// ValueError when `embedder` is not the one that built `index`, showing both specs.
void check_embedder_matches(const LoadedIndex& index, const Embedder& embedder);

}  // namespace g2c::rag
