// bench_tokenizer: the module 04 performance numbers, printed and written as JSON.
//
//   build/reference/bin/bench_tokenizer            # TinyShakespeare from $G2C_DATA_DIR or data/
//
// Measures, on one thread: train_fast to vocab 4096 on the whole corpus (time and peak memory),
// encode_fast of the whole corpus at vocab 4096, the reference train and encode against the fast
// ones on a 100 KB sample at vocab 512 (checking that they agree), and the chars per token of the
// ShakespeareTokenizer (the artifact when built, else the same training) at vocab 2048 and 4096.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "g2c/core/atomic_file.h"
#include "g2c/core/cli.h"
#include "g2c/core/errors.h"
#include "g2c/core/memory.h"
#include "g2c/tokenizer/tokenizer.h"

namespace fs = std::filesystem;
using namespace g2c::tokenizer;

namespace {

struct Config {
  fs::path input;                         // default: $G2C_DATA_DIR or <project>/data
  fs::path out = "results/04-tokenizer";  // where bench_tokenizer.json goes
  std::size_t full_vocab = 4096;
  std::size_t sample_bytes = 100000;  // the reference trainer is O(merges * n): keep it small
  std::size_t sample_vocab = 512;
  std::size_t artifact_chars = 1000000;  // the ShakespeareTokenizer's training prefix
  int repeats = 3;                       // best of N for the fast timings
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Best wall time of `repeats` runs of `body`.
double best_of(int repeats, const std::function<void()>& body) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body();
    best = std::min(best, seconds_since(start));
  }
  return best;
}

fs::path default_input() {
  if (const char* dir = std::getenv("G2C_DATA_DIR"); dir && *dir) {
    return fs::path(dir) / "tinyshakespeare.txt";
  }
  return fs::path(G2C_SOURCE_DIR) / "data" / "tinyshakespeare.txt";
}

int run(const Config& config) {
  const fs::path input = config.input.empty() ? default_input() : config.input;
  if (!fs::is_regular_file(input)) {
    throw g2c::ValueError(fmt::format(
        "{} not found: run scripts/setup.sh, set G2C_DATA_DIR, or pass --input", input.string()));
  }
  const std::string text = g2c::read_file(input);
  const double rss_before = g2c::resident_mib();
  std::cout << fmt::format("corpus: {} ({} bytes)\n", input.string(), text.size());

  // 1. train_fast on the whole corpus, first, so that the process's peak memory is its own.
  BPETokenizer full = BPETokenizer::with_course_special_tokens();
  auto start = std::chrono::steady_clock::now();
  const Ids trained_ids = full.train_fast(text, config.full_vocab);
  const double first_train = seconds_since(start);
  const double peak_after_train = g2c::peak_resident_mib();
  const double train_seconds = std::min(first_train, best_of(config.repeats - 1, [&] {
                                          BPETokenizer again =
                                              BPETokenizer::with_course_special_tokens();
                                          again.train_fast(text, config.full_vocab);
                                        }));
  std::cout << fmt::format(
      "train_fast  full corpus -> vocab {}: {:.3f} s, peak RSS {:.0f} MiB ({:.0f} MiB above the "
      "{:.0f} MiB before training)\n",
      config.full_vocab, train_seconds, peak_after_train, peak_after_train - rss_before,
      rss_before);

  // 2. encode_fast of the whole corpus.
  Ids encoded;
  const double encode_seconds = best_of(config.repeats, [&] { encoded = full.encode_fast(text); });
  const bool encode_agrees = encoded == trained_ids;
  std::cout << fmt::format(
      "encode_fast full corpus at vocab {}: {:.3f} s ({:.1f} MB/s), {} tokens, equals the "
      "training sequence: {}\n",
      config.full_vocab, encode_seconds, text.size() / encode_seconds / 1e6, encoded.size(),
      encode_agrees ? "yes" : "NO");

  // 3. Reference against fast on a sample.
  const std::string sample = text.substr(0, config.sample_bytes);
  BPETokenizer reference = BPETokenizer::with_course_special_tokens();
  start = std::chrono::steady_clock::now();
  reference.train(sample, config.sample_vocab);
  const double reference_train = seconds_since(start);
  BPETokenizer fast = BPETokenizer::with_course_special_tokens();
  const double fast_train = best_of(config.repeats, [&] {
    fast = BPETokenizer::with_course_special_tokens();
    fast.train_fast(sample, config.sample_vocab);
  });
  const bool same_merges = fast == reference;
  Ids reference_ids;
  start = std::chrono::steady_clock::now();
  reference_ids = reference.encode(sample);
  const double reference_encode = seconds_since(start);
  Ids fast_ids;
  const double fast_encode =
      best_of(config.repeats, [&] { fast_ids = reference.encode_fast(sample); });
  const bool same_ids = fast_ids == reference_ids;
  std::cout << fmt::format(
      "sample {} bytes -> vocab {}: train {:.3f} s, train_fast {:.4f} s (x{:.0f}), same merges: "
      "{}\n",
      sample.size(), config.sample_vocab, reference_train, fast_train, reference_train / fast_train,
      same_merges ? "yes" : "NO");
  std::cout << fmt::format(
      "sample {} bytes at vocab {}: encode {:.3f} s, encode_fast {:.4f} s (x{:.0f}), same ids: "
      "{}\n",
      sample.size(), config.sample_vocab, reference_encode, fast_encode,
      reference_encode / fast_encode, same_ids ? "yes" : "NO");

  // 4. Chars per token of the ShakespeareTokenizer.
  BPETokenizer shakespeare;
  std::string source;
  if (tokenizer_artifact_exists(kShakespeareTokenizer)) {
    shakespeare = load_shakespeare_tokenizer();
    source = tokenizer_artifact_dir(kShakespeareTokenizer).string();
  } else {
    shakespeare = BPETokenizer::with_course_special_tokens();
    shakespeare.train_fast(utf8_prefix(text, config.artifact_chars), 4096);
    source = "trained here (no artifact built)";
  }
  const double chars = static_cast<double>(utf8_length(text));
  nlohmann::json chars_per_token = nlohmann::json::object();
  for (const std::size_t vocab : {std::size_t{2048}, std::size_t{4096}}) {
    const std::size_t tokens = shakespeare.encode_at_vocab(text, vocab).size();
    chars_per_token[std::to_string(vocab)] = {{"tokens", tokens},
                                              {"chars_per_token", chars / tokens}};
    std::cout << fmt::format("ShakespeareTokenizer at vocab {}: {} tokens, {:.3f} chars/token\n",
                             vocab, tokens, chars / tokens);
  }

  nlohmann::ordered_json result;
  result["program"] = "bench_tokenizer";
  result["config"] = {{"input", input.string()},
                      {"full_vocab", config.full_vocab},
                      {"sample_bytes", config.sample_bytes},
                      {"sample_vocab", config.sample_vocab},
                      {"artifact_chars", config.artifact_chars},
                      {"repeats", config.repeats}};
  result["device"] = "cpu (one thread)";
  result["seed"] = 0;
  result["corpus_bytes"] = text.size();
  result["train_fast_full"] = {
      {"seconds", train_seconds},     {"vocab_size", full.vocab_size()},
      {"tokens", trained_ids.size()}, {"peak_rss_mib", peak_after_train},
      {"rss_before_mib", rss_before}, {"peak_rss_increase_mib", peak_after_train - rss_before}};
  result["encode_fast_full"] = {{"seconds", encode_seconds},
                                {"tokens", encoded.size()},
                                {"equals_training_sequence", encode_agrees}};
  result["sample"] = {{"bytes", sample.size()},
                      {"vocab_size", config.sample_vocab},
                      {"train_seconds", reference_train},
                      {"train_fast_seconds", fast_train},
                      {"train_speedup", reference_train / fast_train},
                      {"same_merges", same_merges},
                      {"encode_seconds", reference_encode},
                      {"encode_fast_seconds", fast_encode},
                      {"encode_speedup", reference_encode / fast_encode},
                      {"same_ids", same_ids}};
  result["shakespeare_tokenizer"] = {{"source", source}, {"chars_per_token", chars_per_token}};
  result["figures"] = nlohmann::json::array(
      {{{"file", "bench_tokenizer.png"},
        {"kind", "bar"},
        {"title",
         fmt::format("BPE on a {} KB sample, vocab {}", sample.size() / 1000, config.sample_vocab)},
        {"xlabel", "implementation"},
        {"ylabel", "seconds"},
        {"logy", true},
        {"series",
         {{{"label", "seconds"},
           {"x", {"train", "train_fast", "encode", "encode_fast"}},
           {"y", {reference_train, fast_train, reference_encode, fast_encode}}}}}}});
  const fs::path path = config.out / "bench_tokenizer.json";
  g2c::write_json_atomic(path, nlohmann::json::parse(result.dump()));
  std::cout << "wrote " << path.string() << "\n";
  return same_merges && same_ids && encode_agrees ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  g2c::CommandLine app{"Module 04 tokenizer benchmark: fast vs reference, timings and memory",
                       "bench_tokenizer"};
  app.add_option("--input", config.input,
                 "Corpus (default: TinyShakespeare from $G2C_DATA_DIR or data/)")
      .no_default();
  app.add_option("--out", config.out, "Folder for bench_tokenizer.json");
  app.add_option("--full-vocab", config.full_vocab, "Vocab size for the whole-corpus runs");
  app.add_option("--sample-bytes", config.sample_bytes, "Sample size for the reference comparison");
  app.add_option("--sample-vocab", config.sample_vocab, "Vocab size for the reference comparison");
  app.add_option("--repeats", config.repeats, "Best of N for the fast timings").positive();
  return g2c::run_cli(app, argc, argv, [&] { return run(config); });
}
