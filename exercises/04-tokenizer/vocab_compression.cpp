// Exercise 04.4 — vocabulary size against compression on TinyShakespeare. One tokenizer trained to
// the largest size gives every smaller one too: the encoding capped at K merges is exactly what a
// tokenizer trained to K would produce (encode_at_vocab). Reports tokens and characters per token
// on the training part and on held-out text.
#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/tokenizer/bpe.h"
#include "g2c/tokenizer/utf8.h"

namespace exercise_04_vocab_compression {

using namespace g2c::tokenizer;

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 04, exercise 4: vocabulary size vs compression on TinyShakespeare"};
  g2c::exercises::CommonOptions options;
  options.out = "results/04-tokenizer";
  std::vector<std::size_t> sizes{264, 300, 384, 512, 768, 1024, 1536, 2048, 3072, 4096};
  double train_fraction = 0.9;
  std::string trainer = "fast";
  g2c::exercises::add_common_options(app, options);
  app.add_option("--sizes", sizes, "Vocabulary sizes (the largest is trained)");
  app.add_option("--train-fraction", train_fraction, "Share of the corpus to train on")
      .range(0.05, 0.95);
  app.add_option("--trainer", trainer,
                 "fast (train_fast, ~1 s) or reference (your train: minutes; try --sizes 264 300 "
                 "384 512)")
      .one_of({"fast", "reference"});
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const std::string corpus = g2c::exercises::load_tinyshakespeare();
    const std::size_t split = static_cast<std::size_t>(corpus.size() * train_fraction);
    const std::string train_text = corpus.substr(0, split);
    const std::string held_out = corpus.substr(split);
    std::sort(sizes.begin(), sizes.end());
    BPETokenizer tokenizer = BPETokenizer::with_course_special_tokens();
    if (sizes.front() < tokenizer.base_vocab_size()) {
      throw g2c::ValueError(fmt::format("vocabulary sizes start at {} (256 bytes + 8 specials)",
                                        tokenizer.base_vocab_size()));
    }
    g2c::Progress progress("train", static_cast<std::int64_t>(sizes.back() - 264), !options.quiet);
    const auto report = [&](const TrainProgress& p) {
      progress.update(static_cast<std::int64_t>(p.merges), fmt::format("tokens {}", p.tokens));
    };
    if (trainer == "fast") {
      tokenizer.train_fast(train_text, sizes.back(), report, 20);
    } else {
      tokenizer.train(train_text, sizes.back(), report, 5);
    }
    progress.finish();
    const double train_chars = static_cast<double>(utf8_length(train_text));
    const double held_chars = static_cast<double>(utf8_length(held_out));
    nlohmann::json table = {{"vocab_size", nlohmann::json::array()},
                            {"train_tokens", nlohmann::json::array()},
                            {"train_chars_per_token", nlohmann::json::array()},
                            {"held_out_tokens", nlohmann::json::array()},
                            {"held_out_chars_per_token", nlohmann::json::array()}};
    fmt::print("{:>6} {:>12} {:>10} {:>12} {:>10}\n", "vocab", "train tok", "chars/tok", "held-out",
               "chars/tok");
    for (const std::size_t size : sizes) {
      const std::size_t vocab = std::min(size, tokenizer.vocab_size());
      const std::size_t train_tokens = tokenizer.encode_at_vocab(train_text, vocab).size();
      const std::size_t held_tokens = tokenizer.encode_at_vocab(held_out, vocab).size();
      table["vocab_size"].push_back(size);
      table["train_tokens"].push_back(train_tokens);
      table["train_chars_per_token"].push_back(train_chars / train_tokens);
      table["held_out_tokens"].push_back(held_tokens);
      table["held_out_chars_per_token"].push_back(held_chars / held_tokens);
      fmt::print("{:>6} {:>12} {:>10.3f} {:>12} {:>10.3f}\n", size, train_tokens,
                 train_chars / train_tokens, held_tokens, held_chars / held_tokens);
    }

    auto result = g2c::exercises::run_metadata("04_vocab_compression", options, device);
    result["config"] = {{"sizes", sizes}, {"train_fraction", train_fraction}, {"trainer", trainer}};
    result["train_chars"] = train_chars;
    result["held_out_chars"] = held_chars;
    result["table"] = table;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("chars_per_token.png",
                      "Characters per token against vocabulary size (TinyShakespeare)",
                      "vocabulary size", "characters per token")
             .logx()
             .add(Series("training text", "/table/vocab_size", "/table/train_chars_per_token")
                      .marker("o"))
             .add(Series("held-out text", "/table/vocab_size", "/table/held_out_chars_per_token")
                      .marker("s")
                      .style("--"))
             .hline(1.0, "bytes (vocab 256)"),
         Figure::line("tokens.png", "Tokens in the training text against vocabulary size",
                      "vocabulary size", "tokens")
             .logx()
             .add(
                 Series("training text", "/table/vocab_size", "/table/train_tokens").marker("o"))});
    const auto path = g2c::exercises::save_result(options, "vocab_compression.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_04_vocab_compression
