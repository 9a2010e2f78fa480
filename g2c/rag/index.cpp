// Module 17, this edition's addition: a vector store in an archive file, written atomically.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/archive.h"
#include "g2c/core/errors.h"
#include "g2c/rag/index.h"

namespace g2c::rag {

namespace {

ArchiveKind index_kind() {
  ArchiveKind kind;
  kind.what = "retrieval index";
  kind.format = "g2c-rag-index";
  kind.version = 1;
  kind.remedy = "build the index again (it is made from the documents and the embedder)";
  return kind;
}

}  // namespace

void save_index(const std::filesystem::path& path, const VectorStore& store,
                const Embedder& embedder) {
  if (store.dim() != embedder.dim()) {
    throw ValueError(
        fmt::format("save_index: the store holds {}-dim vectors but {} makes {}-dim ones",
                    store.dim(), embedder.describe(), embedder.dim()));
  }
  nlohmann::json chunks = nlohmann::json::array();
  for (const auto& chunk : store.chunks()) {
    chunks.push_back({{"text", chunk.text()},
                      {"source", chunk.source()},
                      {"start", chunk.start()},
                      {"end", chunk.end()},
                      {"metadata", chunk.metadata()}});
  }
  auto dict = archive_dict();
  dict.insert("embedder", embedder.spec().dump());
  dict.insert("chunks", to_archive_value(chunks));
  dict.insert("vectors", store.vectors().contiguous());
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  write_archive(path, dict, index_kind());
}

LoadedIndex load_index(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) {
    throw FileNotFoundError(
        fmt::format("load_index: there is no retrieval index at {}; build one first (save_index)",
                    path.string()));
  }
  const auto view = read_archive(path, index_kind());
  LoadedIndex index;
  index.embedder = nlohmann::json::parse(view.string("embedder"), nullptr, false);
  if (index.embedder.is_discarded() || !index.embedder.is_object()) {
    throw ValueError(
        fmt::format("load_index: {}'s embedder spec is not a JSON object", path.string()));
  }
  const auto vectors = view.tensor("vectors");
  const auto chunks_json = view.json("chunks");
  if (vectors.dim() != 2 || !chunks_json.is_array() ||
      vectors.size(0) != static_cast<std::int64_t>(chunks_json.size())) {
    throw ValueError(fmt::format(
        "load_index: {} is inconsistent: {} chunks but vectors of shape {}", path.string(),
        chunks_json.is_array() ? chunks_json.size() : 0, fmt::join(vectors.sizes(), "x")));
  }
  std::vector<Chunk> chunks;
  chunks.reserve(chunks_json.size());
  try {
    for (const auto& c : chunks_json) {
      chunks.emplace_back(c.at("text").get<std::string>(), c.at("source").get<std::string>(),
                          c.at("start").get<std::int64_t>(), c.at("end").get<std::int64_t>(),
                          c.at("metadata"));
    }
  } catch (const nlohmann::json::exception& error) {
    throw ValueError(
        fmt::format("load_index: {} has a malformed chunk: {}", path.string(), error.what()));
  }
  index.store = std::make_shared<VectorStore>(vectors.size(1));
  index.store->add(chunks, vectors);
  return index;
}

void check_embedder_matches(const LoadedIndex& index, const Embedder& embedder) {
  if (index.embedder != embedder.spec()) {
    throw ValueError(fmt::format(
        "this index was built with the embedder {} but the query embedder is {}; vectors of two "
        "embedders are not comparable: query with the same one, or build the index again",
        index.embedder.dump(), embedder.spec().dump()));
  }
}

}  // namespace g2c::rag
