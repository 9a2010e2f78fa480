// The course's own documents as a retrieval corpus: the READMEs module 17's questions are about
// (listed in exercises/17-rag/data/questions.json), cut into chunks. What g2c-assistant --rag and
// module 20's exercise search. Plain C++, no LibTorch; provided.
//
//   BM25Retriever index;
//   index.add(course_document_chunks(g2c::pretraining::source_dir()));   // ~700 chunks
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "g2c/rag/chunk.h"

namespace g2c::rag {

/// The documents' paths, relative to the repository `root`, in the list's order. ValueError when
/// the list is missing or malformed.
std::vector<std::string> course_documents(const std::filesystem::path& root);

/// Every course document cut by module 17's chunk_text (chunk_size characters sharing
/// chunk_overlap), each chunk's source its document's path. ValueError as chunk_text says, or for
/// a document that cannot be read.
std::vector<Chunk> course_document_chunks(const std::filesystem::path& root,
                                          std::int64_t chunk_size = 600,
                                          std::int64_t chunk_overlap = 100);

}  // namespace g2c::rag
