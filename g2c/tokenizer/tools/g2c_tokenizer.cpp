// g2c-tokenizer: train, inspect and use byte-level BPE tokenizers from the command line.
//
//   g2c-tokenizer train --input data/tinyshakespeare.txt --vocab-size 4096
//                       --max-chars 1000000 --out artifacts/tokenizers/ShakespeareTokenizer
//   g2c-tokenizer info artifacts/tokenizers/ShakespeareTokenizer
//   g2c-tokenizer encode artifacts/tokenizers/ShakespeareTokenizer --text "To be, or not to be"
//   g2c-tokenizer decode artifacts/tokenizers/ShakespeareTokenizer --ids 2210 11 440 447
//
// Exit status (g2c/core/cli.h): 0 success, 1 `train --check` found the artifact out of date, 2 bad
// input, 3 a course TODO on the way is still unwritten.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "g2c/core/atomic_file.h"
#include "g2c/core/cli.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/tokenizer/tokenizer.h"

namespace fs = std::filesystem;
using namespace g2c::tokenizer;

namespace {

struct TrainOptions {
  fs::path input;
  std::size_t vocab_size = 4096;
  bool special_tokens = true;            // the course's eight special tokens at 256-263
  std::optional<std::size_t> max_chars;  // characters of the input to train on (default: all)
  fs::path out;
  std::string name;         // default: the output folder's name
  bool reference = false;   // the slow reference trainer instead of train_fast
  bool check = false;       // only say whether `out` is up to date (exit 0 / 1)
  bool if_changed = false;  // skip training when `out` is up to date
  bool quiet = false;
};

struct UseOptions {
  fs::path tokenizer;  // an artifact folder or a tokenizer.json
  std::optional<std::size_t> vocab_size;
  std::optional<std::string> text;
  std::optional<fs::path> input;
  std::optional<fs::path> output;
  std::vector<std::int64_t> ids;
  std::size_t top = 20;
  bool json = false;
};

BPETokenizer load_any(const fs::path& path) {
  return BPETokenizer::load(fs::is_directory(path) ? path / kTokenizerFile : path);
}

std::string training_text(const TrainOptions& options) {
  const std::string text = g2c::read_file(options.input);
  return std::string(options.max_chars ? utf8_prefix(text, *options.max_chars) : text);
}

// True when `out` holds a complete artifact made from the same text with the same settings.
bool up_to_date(const TrainOptions& options, const BPETokenizer& fresh, const std::string& text,
                std::string& why) {
  const fs::path manifest_path = options.out / kManifestFile;
  for (const std::string_view file : {kTokenizerFile, kTokenIdsFile, kManifestFile}) {
    if (!fs::is_regular_file(options.out / file)) {
      why = fmt::format("{} is missing", (options.out / file).string());
      return false;
    }
  }
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(g2c::read_file(manifest_path));
  } catch (const nlohmann::json::exception&) {
    why = manifest_path.string() + " is not valid JSON";
    return false;
  }
  const nlohmann::json max_chars =
      options.max_chars ? nlohmann::json(*options.max_chars) : nlohmann::json(nullptr);
  const std::vector<std::pair<const char*, nlohmann::json>> wanted = {
      {"kind", "bpe-tokenizer-artifact"},
      {"requested_vocab_size", options.vocab_size},
      {"special_tokens", fresh.special_tokens()},
      {"max_chars", max_chars},
      {"source_fingerprint", fingerprint(text)}};
  for (const auto& [field, value] : wanted) {
    if (!manifest.is_object() || !manifest.contains(field) || manifest[field] != value) {
      why = fmt::format(
          "its manifest's {} is {}, wanted {}", field,
          manifest.is_object() && manifest.contains(field) ? manifest[field].dump() : "missing",
          value.dump());
      return false;
    }
  }
  return true;
}

int train(const TrainOptions& options) {
  const std::string text = training_text(options);
  BPETokenizer tokenizer =
      options.special_tokens ? BPETokenizer::with_course_special_tokens() : BPETokenizer();
  std::string why;
  const bool current = up_to_date(options, tokenizer, text, why);
  if (options.check) {
    std::cout << options.out.string()
              << (current ? " is up to date\n" : " is out of date: " + why + "\n");
    return current ? 0 : 1;
  }
  if (options.if_changed && current) {
    std::cout << options.out.string() << " is up to date; nothing to do\n";
    return 0;
  }
  const std::string name = options.name.empty() ? options.out.filename().string() : options.name;
  const std::size_t chars = utf8_length(text);
  if (!options.quiet) {
    std::cerr << fmt::format("training {} on {} characters of {} to vocab {} ({})\n", name, chars,
                             options.input.filename().string(), options.vocab_size,
                             options.reference ? "reference trainer" : "fast exact trainer");
  }
  const std::size_t base = tokenizer.base_vocab_size();
  g2c::Progress progress(
      "merges", static_cast<std::int64_t>(options.vocab_size - std::min(options.vocab_size, base)),
      !options.quiet);
  const auto report = [&](const TrainProgress& p) {
    progress.update(static_cast<std::int64_t>(p.merges),
                    fmt::format("tokens {}  last {}", p.tokens, p.last_token_repr.value_or("-")));
  };
  const auto start = std::chrono::steady_clock::now();
  Ids ids;
  if (options.reference) {
    tokenizer.train(text, options.vocab_size, report, 10);
    ids = tokenizer.encode_fast(text);
  } else {
    ids = tokenizer.train_fast(text, options.vocab_size, report, 50);
  }
  progress.finish(fmt::format("tokens {}", ids.size()));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  ManifestInfo info;
  info.name = name;
  info.source = options.input.filename().string();
  info.requested_vocab_size = options.vocab_size;
  info.max_chars = options.max_chars;
  info.actual_chars = chars;
  info.trainer = options.reference ? "g2c-cpp train (reference)" : "g2c-cpp train_fast (exact)";
  info.elapsed_seconds = seconds;
  info.source_fingerprint = fingerprint(text);
  info.notes =
      "Built by g2c-tokenizer (C++ edition). Merges are exactly those of the reference trainer "
      "(ties go to the earliest first occurrence); ids.uint32 is the training text encoded with "
      "every merge. source_fingerprint is the FNV-1a 64 hash of the training text.";
  save_artifact(tokenizer, ids, make_manifest(info, tokenizer, ids), options.out);
  std::cout << fmt::format(
      "wrote {}: vocab {}, {} characters -> {} tokens ({:.3f} chars/token) in {:.2f}s\n",
      options.out.string(), tokenizer.vocab_size(), chars, ids.size(),
      ids.empty() ? 0.0 : static_cast<double>(chars) / static_cast<double>(ids.size()), seconds);
  return 0;
}

int encode(const UseOptions& options) {
  const BPETokenizer tokenizer = load_any(options.tokenizer);
  if (!options.text == !options.input) {
    throw g2c::ValueError("encode needs exactly one of --text or --input");
  }
  const std::string text = options.text ? *options.text : g2c::read_file(*options.input);
  const Ids ids = tokenizer.encode_with_vocab_size(text, options.vocab_size);
  if (options.output) {
    save_token_ids(ids, *options.output);
    std::cout << fmt::format("wrote {} ids to {}\n", ids.size(), options.output->string());
  } else {
    std::cout << fmt::format("{}\n", fmt::join(ids, " "));
  }
  return 0;
}

int decode(const UseOptions& options) {
  const BPETokenizer tokenizer = load_any(options.tokenizer);
  if (options.ids.empty() == !options.input) {
    throw g2c::ValueError("decode needs exactly one of --ids or --input (an ids.uint32 file)");
  }
  Ids ids;
  if (options.input) {
    ids = load_token_ids(*options.input, tokenizer.vocab_size());
  } else {
    for (const std::int64_t id : options.ids) {
      if (id < 0 || static_cast<std::size_t>(id) >= tokenizer.vocab_size()) {
        throw g2c::ValueError(
            fmt::format("id {} is outside the vocabulary [0, {})", id, tokenizer.vocab_size()));
      }
      ids.push_back(static_cast<TokenId>(id));
    }
  }
  std::cout << tokenizer.decode(ids);
  if (options.ids.size()) std::cout << "\n";
  return 0;
}

int info(const UseOptions& options) {
  const bool is_artifact = fs::is_directory(options.tokenizer);
  const BPETokenizer tokenizer = load_any(options.tokenizer);
  nlohmann::json manifest;
  if (is_artifact) manifest = load_artifact(options.tokenizer, /*with_ids=*/false).manifest;
  const std::vector<Merge>& merges = tokenizer.merges_in_order();
  const auto merge_json = [&](const Merge& m) {
    return nlohmann::json{{"id", m.id},
                          {"left", m.pair.left},
                          {"right", m.pair.right},
                          {"token", display_token(tokenizer.vocab()[m.id])}};
  };
  const std::size_t shown = std::min(options.top, merges.size());
  if (options.json) {
    nlohmann::json out = {{"tokenizer", options.tokenizer.string()},
                          {"vocab_size", tokenizer.vocab_size()},
                          {"base_vocab_size", tokenizer.base_vocab_size()},
                          {"special_tokens", tokenizer.special_tokens()},
                          {"merges", merges.size()},
                          {"manifest", manifest},
                          {"first_merges", nlohmann::json::array()},
                          {"last_merges", nlohmann::json::array()}};
    for (std::size_t i = 0; i < shown; ++i) {
      out["first_merges"].push_back(merge_json(merges[i]));
      out["last_merges"].push_back(merge_json(merges[merges.size() - shown + i]));
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("tokenizer   {}\n", options.tokenizer.string());
  std::cout << fmt::format("vocab size  {} (256 bytes + {} special tokens + {} merges)\n",
                           tokenizer.vocab_size(), tokenizer.special_tokens().size(),
                           merges.size());
  if (!tokenizer.special_tokens().empty()) {
    std::cout << fmt::format("specials    {}\n", fmt::join(tokenizer.special_tokens(), " "));
  }
  if (manifest.is_object()) {
    for (const char* field : {"name", "source", "created_at", "max_chars", "actual_chars",
                              "token_count", "chars_per_token", "trainer", "elapsed_seconds"}) {
      if (manifest.contains(field))
        std::cout << fmt::format("{:<11} {}\n", field, manifest[field].dump());
    }
  }
  std::cout << fmt::format("first {} merges:\n", shown);
  for (std::size_t i = 0; i < shown; ++i) {
    const Merge& m = merges[i];
    std::cout << fmt::format("  {:>6}  {}\n", m.id, python_repr(tokenizer.token_text(m.id)));
  }
  std::cout << fmt::format("last {} merges:\n", shown);
  for (std::size_t i = merges.size() - shown; i < merges.size(); ++i) {
    const Merge& m = merges[i];
    std::cout << fmt::format("  {:>6}  {}\n", m.id, python_repr(tokenizer.token_text(m.id)));
  }
  return 0;
}

void add_tokenizer_argument(g2c::CommandLine& command, UseOptions& options) {
  command.add_option("tokenizer", options.tokenizer, "Artifact folder or tokenizer.json")
      .required()
      .existing_path()
      .no_default();
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Train, inspect and use the course's byte-level BPE tokenizers (module 04)",
                       "g2c-tokenizer"};
  app.require_subcommand(1);

  TrainOptions train_options;
  g2c::CommandLine& train_command =
      app.add_subcommand("train", "Train a tokenizer and write an artifact folder");
  train_command.add_option("--input", train_options.input, "Training text (UTF-8)")
      .required()
      .existing_file()
      .no_default();
  train_command.add_option("--vocab-size", train_options.vocab_size, "Target vocabulary size");
  train_command.add_flag("!--no-special-tokens", train_options.special_tokens,
                         "No special tokens (default: the course's eight at ids 256-263)");
  train_command
      .add_option("--max-chars", train_options.max_chars,
                  "Train on the first N characters only (default: all)")
      .no_default();
  train_command.add_option("--out", train_options.out, "Artifact folder to write")
      .required()
      .no_default();
  train_command
      .add_option("--name", train_options.name,
                  "Name recorded in the manifest (default: the folder's name)")
      .no_default();
  train_command.add_flag("--reference", train_options.reference,
                         "Use the slow reference trainer (your train_step) instead of train_fast");
  train_command.add_flag("--check", train_options.check,
                         "Only check: exit 0 if the artifact is up to date, 1 if not");
  train_command.add_flag("--if-changed", train_options.if_changed,
                         "Do nothing when the artifact is already up to date");
  train_command.add_flag("--quiet", train_options.quiet, "No progress display");

  UseOptions use_options;
  g2c::CommandLine& encode_command = app.add_subcommand("encode", "Text -> ids");
  add_tokenizer_argument(encode_command, use_options);
  encode_command.add_option("--text", use_options.text, "Text to encode").no_default();
  encode_command.add_option("--input", use_options.input, "File to encode")
      .existing_file()
      .no_default();
  encode_command
      .add_option("--vocab-size", use_options.vocab_size,
                  "Use only merges below this id (0: bytes and specials only)")
      .no_default();
  encode_command
      .add_option("--output", use_options.output,
                  "Write ids.uint32 here instead of printing the ids")
      .no_default();

  g2c::CommandLine& decode_command = app.add_subcommand("decode", "Ids -> text");
  add_tokenizer_argument(decode_command, use_options);
  decode_command.add_option("--ids", use_options.ids, "Ids to decode").no_default();
  decode_command.add_option("--input", use_options.input, "An ids.uint32 file to decode")
      .existing_file()
      .no_default();

  g2c::CommandLine& info_command = app.add_subcommand("info", "Describe a tokenizer or artifact");
  add_tokenizer_argument(info_command, use_options);
  info_command.add_option("--top", use_options.top, "How many first and last merges to list");
  info_command.add_flag("--json", use_options.json, "Print JSON");

  return g2c::run_cli(app, argc, argv, [&] {
    if (train_command) return train(train_options);
    if (encode_command) return encode(use_options);
    if (decode_command) return decode(use_options);
    return info(use_options);
  });
}
