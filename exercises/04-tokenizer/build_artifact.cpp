// Exercise 04.6 — build the ShakespeareTokenizer artifact: train to vocab 4096 on the first
// 1,000,000 characters of TinyShakespeare with the course special tokens, showing progress, and
// write tokenizer.json + ids.uint32 + manifest.json. By default the artifact goes to
// <out>/ShakespeareTokenizer; --install writes it where the course looks for it
// (artifacts/tokenizers/ShakespeareTokenizer). --reference trains with your train_step.
#include <chrono>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "g2c/core/progress.h"
#include "g2c/tokenizer/artifacts.h"
#include "g2c/tokenizer/bpe.h"
#include "g2c/tokenizer/utf8.h"

namespace exercise_04_build_artifact {

using namespace g2c::tokenizer;

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 04, exercise 6: build the ShakespeareTokenizer artifact"};
  g2c::exercises::CommonOptions options;
  options.out = "results/04-tokenizer";
  std::size_t vocab_size = 4096;
  std::size_t max_chars = 1000000;
  bool install = false;
  bool reference = false;
  std::size_t progress_every = 50;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--vocab-size", vocab_size, "Target vocabulary size");
  app.add_option("--max-chars", max_chars, "Characters of TinyShakespeare to train on");
  app.add_option("--progress-every", progress_every, "Merges between progress records").positive();
  app.add_flag("--install", install,
               "Write to artifacts/tokenizers/ShakespeareTokenizer (what the exercises load)");
  app.add_flag("--reference", reference,
               "Train with your train_step (slow: try --vocab-size 512 --max-chars 100000)");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const std::string corpus = g2c::exercises::load_tinyshakespeare();
    const std::string text(utf8_prefix(corpus, max_chars));
    const std::size_t chars = utf8_length(text);
    BPETokenizer tokenizer = BPETokenizer::with_course_special_tokens();
    g2c::Progress progress("merges",
                           static_cast<std::int64_t>(vocab_size - tokenizer.base_vocab_size()),
                           !options.quiet);
    nlohmann::json curve = {
        {"merges", {0}}, {"tokens", {tokenizer.encode_base(text).size()}}, {"seconds", {0.0}}};
    const auto report = [&](const TrainProgress& p) {
      curve["merges"].push_back(p.merges);
      curve["tokens"].push_back(p.tokens);
      curve["seconds"].push_back(p.elapsed_seconds);
      progress.update(static_cast<std::int64_t>(p.merges),
                      fmt::format("tokens {}  last {}", p.tokens, p.last_token_repr.value_or("-")));
    };
    const auto start = std::chrono::steady_clock::now();
    Ids ids;
    if (reference) {
      tokenizer.train(text, vocab_size, report, progress_every);
      ids = tokenizer.encode_fast(text);
    } else {
      ids = tokenizer.train_fast(text, vocab_size, report, progress_every);
    }
    progress.finish(fmt::format("tokens {}", ids.size()));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    ManifestInfo info;
    info.name = std::string(kShakespeareTokenizer);
    info.source = "tinyshakespeare.txt";
    info.requested_vocab_size = vocab_size;
    info.max_chars = max_chars;
    info.actual_chars = chars;
    info.trainer = reference ? "g2c-cpp train (reference)" : "g2c-cpp train_fast (exact)";
    info.elapsed_seconds = seconds;
    info.source_fingerprint = fingerprint(text);
    info.notes = "Built by the module 04 exercise 04_build_artifact.";
    const auto dir = install ? tokenizer_artifact_dir(kShakespeareTokenizer)
                             : options.out / std::string(kShakespeareTokenizer);
    const auto manifest = make_manifest(info, tokenizer, ids);
    save_artifact(tokenizer, ids, manifest, dir);
    fmt::print("wrote {}: vocab {}, {} characters -> {} tokens ({:.3f} chars/token) in {:.2f} s\n",
               dir.string(), tokenizer.vocab_size(), chars, ids.size(),
               static_cast<double>(chars) / static_cast<double>(ids.size()), seconds);

    auto result = g2c::exercises::run_metadata("04_build_artifact", options, device);
    result["config"] = {{"vocab_size", vocab_size},
                        {"max_chars", max_chars},
                        {"install", install},
                        {"reference", reference},
                        {"progress_every", progress_every}};
    result["artifact_dir"] = dir.string();
    result["manifest"] = nlohmann::json::parse(manifest.dump());
    result["progress"] = curve;
    result["figures"] = g2c::exercises::figures(
        {g2c::exercises::Figure::line("build_artifact.png",
                                      "ShakespeareTokenizer training: the corpus shrinks",
                                      "merges learned", "tokens in the training text")
             .add(g2c::exercises::Series("tokens", "/progress/merges", "/progress/tokens"))});
    const auto path = g2c::exercises::save_result(options, "build_artifact.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_04_build_artifact
