// Exercise 04.2 — train on "the the the" and print every merge: the pair, its count, the new token
// and the sequence after the step, until the target vocabulary or until no pair is left.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/tokenizer/bpe.h"
#include "g2c/tokenizer/utf8.h"

namespace exercise_04_train_the_the {

using namespace g2c::tokenizer;

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 04, exercise 2: train on \"the the the\" and print every merge"};
  g2c::exercises::CommonOptions options;
  options.out = "results/04-tokenizer";
  std::string text = "the the the";
  std::size_t vocab_size = 270;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--text", text, "Training text");
  app.add_option("--vocab-size", vocab_size, "Target vocabulary size (256 + merges)");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    BPETokenizer tokenizer;
    const auto label = [&](TokenId id) { return python_repr(tokenizer.token_text(id)); };
    Ids ids = tokenizer.encode_base(text);
    fmt::print("{:>4} tokens: {}\n", ids.size(), fmt::join(ids, " "));
    nlohmann::json merges = nlohmann::json::array();
    std::vector<std::size_t> lengths{ids.size()};
    while (tokenizer.vocab_size() < vocab_size) {
      const auto new_id = static_cast<TokenId>(tokenizer.vocab_size());
      const std::optional<TrainStep> step = tokenizer.train_step(ids, new_id);
      if (!step) {
        fmt::print("no adjacent pair left: training stops at vocab {}\n", tokenizer.vocab_size());
        break;
      }
      ids = step->ids;
      lengths.push_back(ids.size());
      std::vector<std::string> pieces;
      for (const TokenId id : ids) pieces.push_back(label(id));
      fmt::print("merge {:>3}: {} + {} -> {} (x{})  now {} tokens: {}\n", new_id,
                 label(step->pair.left), label(step->pair.right), label(new_id), step->count,
                 ids.size(), fmt::join(pieces, " "));
      merges.push_back({{"id", new_id},
                        {"pair", {step->pair.left, step->pair.right}},
                        {"count", step->count},
                        {"token", tokenizer.token_text(new_id)},
                        {"ids_after", ids},
                        {"tokens_after", pieces}});
    }
    std::vector<std::size_t> steps(lengths.size());
    for (std::size_t i = 0; i < steps.size(); ++i) steps[i] = i;

    auto result = g2c::exercises::run_metadata("04_train_the_the", options, device);
    result["config"] = {{"text", text}, {"vocab_size", vocab_size}};
    result["merges"] = merges;
    result["sequence_length"] = {{"step", steps}, {"tokens", lengths}};
    result["final_vocab_size"] = tokenizer.vocab_size();
    result["figures"] = g2c::exercises::figures(
        {g2c::exercises::Figure::line("train_the_the.png",
                                      fmt::format("Training on \"{}\": the sequence shrinks", text),
                                      "merges learned", "tokens")
             .add(g2c::exercises::Series("sequence length", "/sequence_length/step",
                                         "/sequence_length/tokens")
                      .marker("o"))});
    const auto path = g2c::exercises::save_result(options, "train_the_the.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_04_train_the_the
