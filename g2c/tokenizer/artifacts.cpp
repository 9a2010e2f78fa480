// ids.uint32 files, manifests and artifact directories.
#include "g2c/tokenizer/artifacts.h"

#include <cstdlib>

#include <fmt/format.h>

#include "g2c/core/atomic_file.h"
#include "g2c/core/clock.h"
#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::tokenizer {
namespace fs = std::filesystem;

// --- ids.uint32 ---------------------------------------------------------------------------------

void save_token_ids(const Ids& ids, const fs::path& path) {
  std::string bytes(ids.size() * 4, '\0');
  for (std::size_t i = 0; i < ids.size(); ++i) {
    for (int b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<char>((ids[i] >> (8 * b)) & 0xFF);
  }
  write_file_atomic(path, bytes);
}

Ids parse_token_ids(std::string_view bytes, std::optional<std::size_t> vocab_size,
                    std::string_view where) {
  if (bytes.size() % 4 != 0) {
    throw ValueError(fmt::format(
        "{} has {} bytes, which is not a multiple of 4: a uint32 id file must be (truncated or "
        "not an ids file?)",
        where, bytes.size()));
  }
  Ids ids(bytes.size() / 4);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    TokenId id = 0;
    for (int b = 0; b < 4; ++b) {
      id |= TokenId{static_cast<unsigned char>(bytes[4 * i + b])} << (8 * b);
    }
    if (vocab_size && id >= *vocab_size) {
      throw ValueError(fmt::format("{}: id #{} is {}, outside the vocabulary of {} ids", where, i,
                                   id, *vocab_size));
    }
    ids[i] = id;
  }
  return ids;
}

Ids load_token_ids(const fs::path& path, std::optional<std::size_t> vocab_size) {
  if (!fs::is_regular_file(path)) {
    throw ValueError(fmt::format("token id file not found: {}", path.string()));
  }
  return parse_token_ids(read_file(path), vocab_size, path.string());
}

// --- Artifact directories ---------------------------------------------------------------------

void save_artifact(const BPETokenizer& tokenizer, const Ids& ids,
                   const nlohmann::ordered_json& manifest, const fs::path& dir) {
  if (!manifest.is_object()) throw ValueError("an artifact manifest must be a JSON object");
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= tokenizer.vocab_size()) {
      throw ValueError(
          fmt::format("cannot save artifact {}: id #{} is {}, outside the vocabulary "
                      "of {} ids",
                      dir.string(), i, ids[i], tokenizer.vocab_size()));
    }
  }
  tokenizer.save(dir / kTokenizerFile);
  save_token_ids(ids, dir / kTokenIdsFile);
  // The manifest goes last: its presence says the other two files are complete.
  write_file_atomic(dir / kManifestFile, manifest.dump(2, ' ', /*ensure_ascii=*/true) + "\n");
}

TokenizerArtifact load_artifact(const fs::path& dir, bool with_ids) {
  if (!fs::is_directory(dir)) {
    throw ValueError(fmt::format("tokenizer artifact directory not found: {}", dir.string()));
  }
  TokenizerArtifact artifact{dir, BPETokenizer::load(dir / kTokenizerFile), {}, {}};
  const fs::path manifest_path = dir / kManifestFile;
  if (!fs::is_regular_file(manifest_path)) {
    throw ValueError(fmt::format("{} is missing (an artifact holds {}, {} and {})",
                                 manifest_path.string(), kTokenizerFile, kTokenIdsFile,
                                 kManifestFile));
  }
  try {
    artifact.manifest = nlohmann::json::parse(read_file(manifest_path));
  } catch (const nlohmann::json::exception& error) {
    throw ValueError(
        fmt::format("{} is not valid JSON ({})", manifest_path.string(), error.what()));
  }
  if (!artifact.manifest.is_object()) {
    throw ValueError(fmt::format("{} must hold a JSON object", manifest_path.string()));
  }
  if (with_ids) {
    artifact.ids = load_token_ids(dir / kTokenIdsFile, artifact.tokenizer.vocab_size());
    const auto count = artifact.manifest.find("token_count");
    if (count != artifact.manifest.end() &&
        !(count->is_number_integer() && count->get<std::int64_t>() >= 0 &&
          static_cast<std::size_t>(count->get<std::int64_t>()) == artifact.ids.size())) {
      throw ValueError(fmt::format("{}: token_count is {} but {} holds {} ids",
                                   manifest_path.string(), count->dump(), kTokenIdsFile,
                                   artifact.ids.size()));
    }
  }
  return artifact;
}

fs::path artifacts_root() {
  if (const char* root = std::getenv("G2C_ARTIFACTS_DIR"); root && *root) return fs::path(root);
  return fs::path(G2C_SOURCE_DIR) / "artifacts";
}

fs::path tokenizer_artifact_dir(std::string_view name) {
  return artifacts_root() / "tokenizers" / std::string(name);
}

bool tokenizer_artifact_exists(std::string_view name) {
  return fs::is_regular_file(tokenizer_artifact_dir(name) / kTokenizerFile);
}

TokenizerArtifact load_tokenizer_artifact(std::string_view name, bool with_ids) {
  const fs::path dir = tokenizer_artifact_dir(name);
  if (!tokenizer_artifact_exists(name)) {
    if (name == kShakespeareTokenizer) {
      throw ValueError(fmt::format(
          "the ShakespeareTokenizer artifact is not built ({} is missing). Build it with "
          "`scripts/make_tokenizer_artifacts.sh build/reference` (after `cmake --build "
          "build/reference --target g2c-tokenizer`), or run scripts/setup.sh.",
          (dir / kTokenizerFile).string()));
    }
    throw ValueError(fmt::format(
        "the {} artifact is not available: copy its directory (tokenizer.json, ids.uint32, "
        "manifest.json, e.g. from the Python edition) to {}, or set G2C_ARTIFACTS_DIR to a folder "
        "holding tokenizers/{}/",
        name, dir.string(), name));
  }
  return load_artifact(dir, with_ids);
}

BPETokenizer load_shakespeare_tokenizer() {
  return load_tokenizer_artifact(kShakespeareTokenizer, /*with_ids=*/false).tokenizer;
}

// --- Manifests ----------------------------------------------------------------------------------

std::string fingerprint(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return fmt::format("{:016x}", hash);
}

nlohmann::ordered_json make_manifest(const ManifestInfo& info, const BPETokenizer& tokenizer,
                                     const Ids& ids) {
  const double chars_per_token =
      ids.empty() ? 0.0 : static_cast<double>(info.actual_chars) / static_cast<double>(ids.size());
  nlohmann::ordered_json manifest;
  manifest["name"] = info.name;
  manifest["kind"] = "bpe-tokenizer-artifact";
  manifest["created_at"] = g2c::utc_timestamp();
  manifest["source"] = info.source;
  manifest["requested_vocab_size"] = info.requested_vocab_size;
  manifest["actual_vocab_size"] = tokenizer.vocab_size();
  manifest["special_tokens"] = tokenizer.special_tokens();
  manifest["max_chars"] = info.max_chars ? nlohmann::ordered_json(*info.max_chars) : nullptr;
  manifest["actual_chars"] = info.actual_chars;
  manifest["encoded_sample_chars"] = info.actual_chars;
  manifest["encoded_chars"] = info.actual_chars;
  manifest["encoded_full_training_text"] = true;
  manifest["token_count"] = ids.size();
  manifest["chars_per_token"] = chars_per_token;
  manifest["token_ids_file"] = kTokenIdsFile;
  manifest["token_ids_dtype"] = "uint32";
  manifest["token_ids_kind"] = "encoded_sample";
  manifest["trainer"] = info.trainer;
  // The exact trainer sees the whole text at once: one chunk, none requested.
  manifest["chunk_chars"] = info.actual_chars;
  manifest["requested_chunk_chars"] = nullptr;
  manifest["elapsed_seconds"] = info.elapsed_seconds;
  manifest["notes"] = info.notes;
  manifest["source_fingerprint"] = info.source_fingerprint;
  return manifest;
}

}  // namespace g2c::tokenizer
