#include "g2c/rag/course_documents.h"

#include <nlohmann/json.hpp>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"

namespace g2c::rag {

namespace {
const char* kList = "exercises/17-rag/data/questions.json";
}

std::vector<std::string> course_documents(const std::filesystem::path& root) {
  const auto data = nlohmann::json::parse(g2c::read_file(root / kList), nullptr, false);
  if (data.is_discarded() || !data.contains("documents") || !data["documents"].is_array()) {
    throw ValueError(std::string("course_documents: ") + (root / kList).string() +
                     " must be JSON with a \"documents\" list (scripts/check_questions.py "
                     "checks it)");
  }
  return data["documents"].get<std::vector<std::string>>();
}

std::vector<Chunk> course_document_chunks(const std::filesystem::path& root,
                                          std::int64_t chunk_size, std::int64_t chunk_overlap) {
  std::vector<Chunk> chunks;
  for (const auto& document : course_documents(root)) {
    ChunkOptions options;
    options.source = document;
    options.chunk_size = chunk_size;
    options.chunk_overlap = chunk_overlap;
    for (auto& chunk : chunk_text(g2c::read_file(root / document), options)) {
      chunks.push_back(std::move(chunk));
    }
  }
  return chunks;
}

}  // namespace g2c::rag
