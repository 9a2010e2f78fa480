// Module 17 — chunks: the unit a retriever indexes, finds and cites. A document is cut into
// overlapping windows of characters; each window is a Chunk that remembers where it came from
// (`source`, for the citation) and where it sits in the document ([start, end), in characters),
// so document.substr(start, end - start) is exactly its text.
//
//   chunk_text("abcdefghijklmno", {.source = "doc.md", .chunk_size = 10, .chunk_overlap = 3})
//     -> "abcdefghij" [0, 10)   "hijklmno" [7, 15)        stride = 10 - 3 = 7
//
// Why overlap: a sentence that answers a question may straddle a boundary; with an overlap at
// least as long as the sentence it is whole in one of the two chunks. Why this size: too small
// and the answer is split across chunks, too large and its one sentence is drowned in the rest of
// the chunk's vector. 1,500 characters (some 300-400 tokens of English) with 150 of overlap is the
// default here; module 17's exercise measures smaller ones.
//
// A character is a Unicode code point, as a Python str counts them: "héllo" is 5 characters and
// 6 bytes, and a chunk never cuts a character's UTF-8 bytes in two (character_offsets below).
// Plain C++, no LibTorch. Chunk is provided; chunk_text is yours (g2c/rag/chunk.cpp).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace g2c::rag {

/// One retrievable slice of a document. A value: its text, source and position never change once
/// made (there are getters and no setters), since a chunk whose text changed after it was
/// embedded would no longer match its vector. `metadata` (a section name, a page, a date) is
/// free-form and stays writable; each chunk has its own copy.
class Chunk {
 public:
  /// ValueError for an empty text, a negative start, or an end other than start + the text's
  /// length in characters. Example: Chunk("abc", "s", 10, 13) is the characters 10..12 of "s".
  Chunk(std::string text, std::string source, std::int64_t start, std::int64_t end,
        nlohmann::json metadata = nlohmann::json::object());

  const std::string& text() const { return text_; }
  const std::string& source() const { return source_; }
  std::int64_t start() const { return start_; }
  std::int64_t end() const { return end_; }  // exclusive
  nlohmann::json& metadata() { return metadata_; }
  const nlohmann::json& metadata() const { return metadata_; }

  bool operator==(const Chunk& other) const = default;

 private:
  std::string text_;
  std::string source_;
  std::int64_t start_;
  std::int64_t end_;
  nlohmann::json metadata_;
};

/// "Chunk(source='doc.md', start=0, end=10, text='abcdefghij')", the text cut at 60 characters.
std::ostream& operator<<(std::ostream& stream, const Chunk& chunk);

/// A chunk as a retriever returns it: `score` its similarity to the query (cosine for the dense
/// retriever, BM25's score for the lexical one), `rank` its place, 1 for the best.
struct RetrievedChunk {
  Chunk chunk;
  double score;
  std::int64_t rank;
  bool operator==(const RetrievedChunk& other) const = default;
};

/// chunk_text's settings: the Python edition's keyword arguments, by the same names.
struct ChunkOptions {
  std::string source;                                  // attached to every chunk
  std::int64_t chunk_size = 1500;                      // characters per chunk, > 0
  std::int64_t chunk_overlap = 150;                    // characters shared with the previous one
  nlohmann::json metadata = nlohmann::json::object();  // copied into every chunk
};

/// Your work. `text` cut into chunks of options.chunk_size characters, each starting
/// chunk_size - chunk_overlap characters after the previous one, in reading order: the first
/// starts at 0, the last ends at the end of the text, and no chunk is empty. A text of at most
/// chunk_size characters is one chunk. ValueError for an empty text, chunk_size <= 0,
/// chunk_overlap < 0 or chunk_overlap >= chunk_size, naming the setting.
/// Example: 15 characters, size 10, overlap 3 -> [0, 10) and [7, 15).
std::vector<Chunk> chunk_text(std::string_view text, const ChunkOptions& options);

/// The chunks' texts, in order: what an embedder takes. Provided.
std::vector<std::string> chunk_texts(const std::vector<Chunk>& chunks);

/// The byte offset of every character of `text` (a code point of its UTF-8; an ill-formed byte
/// counts as one character), followed by text.size(): characters [i, j) are the bytes
/// [offsets[i], offsets[j]). Provided. Example: "h\xC3\xA9!" -> {0, 1, 3, 4}.
std::vector<std::size_t> character_offsets(std::string_view text);

}  // namespace g2c::rag
