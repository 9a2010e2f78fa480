// Tokenizer files and artifact directories, interoperable with the Python edition.
//
// clang-format off
//   artifacts/tokenizers/<Name>/
//     tokenizer.json   {"format": "g2c.bpe", "version": 2, "special_tokens": [...], "merges": [...]}
//     ids.uint32       the encoded training sample: raw little-endian uint32 ids, no header
//     manifest.json    provenance: vocab sizes, characters, token count, chars per token, ...
// clang-format on
//
// The course builds one artifact: ShakespeareTokenizer (vocab 4096, course special tokens, the
// first 1,000,000 characters of TinyShakespeare), made by `scripts/setup.sh` or by
// `scripts/make_tokenizer_artifacts.sh build/reference`. G2CTokenizer (vocab 16384, trained on
// the course's large corpus) cannot be built offline; put its directory under
// artifacts/tokenizers/G2CTokenizer (e.g. from the Python edition) and it loads the same way.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "g2c/tokenizer/bpe.h"

namespace g2c::tokenizer {

inline constexpr std::string_view kShakespeareTokenizer = "ShakespeareTokenizer";
inline constexpr std::string_view kG2CTokenizer = "G2CTokenizer";
inline constexpr std::string_view kTokenizerFile = "tokenizer.json";
inline constexpr std::string_view kTokenIdsFile = "ids.uint32";
inline constexpr std::string_view kManifestFile = "manifest.json";

// --- ids.uint32 ---------------------------------------------------------------------------------

/// Writes ids as raw little-endian uint32 values, atomically. Example: [0, 255, 256, 4096] ->
/// 16 bytes.
void save_token_ids(const Ids& ids, const std::filesystem::path& path);
/// Reads an ids.uint32 file. ValueError when it cannot be read, its size is not a multiple of 4,
/// or (when `vocab_size` is given) an id is >= vocab_size.
Ids load_token_ids(const std::filesystem::path& path,
                   std::optional<std::size_t> vocab_size = std::nullopt);
/// The same on bytes in memory; `where` names the source in error messages.
Ids parse_token_ids(std::string_view bytes, std::optional<std::size_t> vocab_size = std::nullopt,
                    std::string_view where = "ids.uint32");

// --- Artifact directories ---------------------------------------------------------------------

/// A loaded artifact directory.
struct TokenizerArtifact {
  std::filesystem::path dir;
  BPETokenizer tokenizer;
  Ids ids;                  // the encoded sample (empty when loaded without ids)
  nlohmann::json manifest;  // manifest.json as written
};

/// Writes tokenizer.json, ids.uint32 and manifest.json into `dir` (created if needed), each
/// atomically. ValueError if `manifest` is not an object or an id is outside the vocabulary.
void save_artifact(const BPETokenizer& tokenizer, const Ids& ids,
                   const nlohmann::ordered_json& manifest, const std::filesystem::path& dir);

/// Reads an artifact directory. ValueError naming the file and the problem when a file is
/// missing or malformed, an id is out of range, or the manifest's token_count disagrees with the
/// ids. `with_ids = false` skips ids.uint32 (tokenizer and manifest only).
TokenizerArtifact load_artifact(const std::filesystem::path& dir, bool with_ids = true);

/// Where artifacts live: $G2C_ARTIFACTS_DIR if set, else <project>/artifacts.
std::filesystem::path artifacts_root();
/// artifacts_root()/tokenizers/<name>.
std::filesystem::path tokenizer_artifact_dir(std::string_view name);
/// True when <dir>/tokenizer.json exists for that artifact name.
bool tokenizer_artifact_exists(std::string_view name);

/// Loads artifacts/tokenizers/<name>. When it does not exist the ValueError says how to make it:
/// for ShakespeareTokenizer, run `scripts/make_tokenizer_artifacts.sh build/reference` (or
/// scripts/setup.sh); for others, copy the directory there.
TokenizerArtifact load_tokenizer_artifact(std::string_view name, bool with_ids = false);

/// The ShakespeareTokenizer (vocab 4096, course special tokens), or a ValueError with the command
/// that builds it. Encode with encode_with_vocab_size(text, 2048) for a 2048-entry model.
BPETokenizer load_shakespeare_tokenizer();

// --- Manifests ----------------------------------------------------------------------------------

/// What a manifest records about how an artifact was made.
struct ManifestInfo {
  std::string name;    // e.g. "ShakespeareTokenizer"
  std::string source;  // the corpus file name, e.g. "tinyshakespeare.txt"
  std::size_t requested_vocab_size = 0;
  std::optional<std::size_t> max_chars;  // characters of the corpus used (none: all)
  std::size_t actual_chars = 0;          // characters trained on
  std::string trainer = "g2c-cpp train_fast (exact)";
  double elapsed_seconds = 0.0;
  std::string notes;
  std::string source_fingerprint;  // fnv1a64 of the training text, hex (for up-to-date checks)
};

/// The spec's manifest fields (name, kind = "bpe-tokenizer-artifact", created_at, source,
/// requested/actual vocab size, special_tokens, max_chars, actual_chars, encoded sample fields,
/// token_count, chars_per_token, token_ids_file/dtype/kind, trainer, chunk fields,
/// elapsed_seconds, notes), for `tokenizer` and the training sample's `ids`.
nlohmann::ordered_json make_manifest(const ManifestInfo& info, const BPETokenizer& tokenizer,
                                     const Ids& ids);

/// 64-bit FNV-1a of `bytes` as 16 hex digits: a cheap fingerprint of a training text.
std::string fingerprint(std::string_view bytes);

}  // namespace g2c::tokenizer
