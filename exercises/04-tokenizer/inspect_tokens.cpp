// Exercise 04.5 — what did the tokenizer learn? Early merges are short, frequent fragments
// ("e ", "th"); late ones are whole words and phrases ("?\n\nMessenger"). Lists both ends, the
// average token length along the merge order, and the most frequent tokens of the encoded corpus.
// Uses the ShakespeareTokenizer artifact when it is built, else trains the same tokenizer.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "g2c/tokenizer/artifacts.h"
#include "g2c/tokenizer/bpe.h"
#include "g2c/tokenizer/utf8.h"

namespace exercise_04_inspect_tokens {

using namespace g2c::tokenizer;

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 04, exercise 5: early vs late merges and the most frequent tokens"};
  g2c::exercises::CommonOptions options;
  options.out = "results/04-tokenizer";
  std::size_t vocab_size = 2048;
  std::size_t show = 15;
  std::size_t bucket = 128;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--vocab-size", vocab_size, "Vocabulary the corpus is encoded with");
  app.add_option("--show", show, "How many merges and tokens to list");
  app.add_option("--bucket", bucket, "Merges per point of the token-length curve").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const std::string corpus = g2c::exercises::load_tinyshakespeare();
    BPETokenizer tokenizer;
    std::string source;
    if (tokenizer_artifact_exists(kShakespeareTokenizer)) {
      tokenizer = load_shakespeare_tokenizer();
      source = tokenizer_artifact_dir(kShakespeareTokenizer).string();
    } else {
      tokenizer = BPETokenizer::with_course_special_tokens();
      tokenizer.train_fast(utf8_prefix(corpus, 1000000), 4096);
      source = "trained here like the artifact (build it with scripts/make_tokenizer_artifacts.sh)";
    }
    fmt::print("tokenizer: {} (vocab {})\n", source, tokenizer.vocab_size());
    vocab_size = tokenizer.effective_vocab_size(std::min(vocab_size, tokenizer.vocab_size()));
    const auto label = [&](TokenId id) { return python_repr(tokenizer.token_text(id)); };
    const std::vector<Merge>& merges = tokenizer.merges_in_order();
    const std::size_t shown = std::min(show, merges.size());
    nlohmann::json early = nlohmann::json::array();
    nlohmann::json late = nlohmann::json::array();
    fmt::print("\n{:<38} {}\n", "first merges", "last merges");
    for (std::size_t i = 0; i < shown; ++i) {
      const Merge& first = merges[i];
      const Merge& last = merges[merges.size() - shown + i];
      fmt::print("{:>5} {:<32} {:>5} {}\n", first.id, label(first.id), last.id, label(last.id));
      early.push_back({{"id", first.id}, {"token", tokenizer.token_text(first.id)}});
      late.push_back({{"id", last.id}, {"token", tokenizer.token_text(last.id)}});
    }

    // Average length in bytes of the tokens created by each run of `bucket` merges.
    nlohmann::json lengths = {{"merge_id", nlohmann::json::array()},
                              {"mean_bytes", nlohmann::json::array()}};
    for (std::size_t start = 0; start < merges.size(); start += bucket) {
      const std::size_t end = std::min(start + bucket, merges.size());
      double total = 0;
      for (std::size_t i = start; i < end; ++i) total += tokenizer.vocab()[merges[i].id].size();
      lengths["merge_id"].push_back(merges[start].id);
      lengths["mean_bytes"].push_back(total / static_cast<double>(end - start));
    }

    const Ids ids = tokenizer.encode_at_vocab(corpus, vocab_size);
    std::vector<std::size_t> frequency(vocab_size, 0);
    for (const TokenId id : ids) ++frequency[id];
    std::vector<TokenId> order(vocab_size);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](TokenId a, TokenId b) { return frequency[a] > frequency[b]; });
    const std::size_t used =
        std::count_if(frequency.begin(), frequency.end(), [](std::size_t f) { return f > 0; });
    fmt::print("\nTinyShakespeare at vocab {}: {} tokens, {} of {} ids used\n", vocab_size,
               ids.size(), used, vocab_size);
    nlohmann::json top = {{"label", nlohmann::json::array()},
                          {"id", nlohmann::json::array()},
                          {"count", nlohmann::json::array()},
                          {"share", nlohmann::json::array()}};
    for (std::size_t rank = 0; rank < std::min(show, order.size()); ++rank) {
      const TokenId id = order[rank];
      const double share = static_cast<double>(frequency[id]) / static_cast<double>(ids.size());
      fmt::print("{:>3}. {:>5} {:<20} {:>7} ({:.2f} %)\n", rank + 1, id, label(id), frequency[id],
                 100.0 * share);
      top["label"].push_back(label(id));
      top["id"].push_back(id);
      top["count"].push_back(frequency[id]);
      top["share"].push_back(share);
    }

    auto result = g2c::exercises::run_metadata("04_inspect_tokens", options, device);
    result["config"] = {{"vocab_size", vocab_size}, {"show", show}, {"bucket", bucket}};
    result["tokenizer"] = source;
    result["early_merges"] = early;
    result["late_merges"] = late;
    result["token_length"] = lengths;
    result["corpus_tokens"] = ids.size();
    result["ids_used"] = used;
    result["most_frequent"] = top;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("token_length.png", "Later merges make longer tokens", "merge id",
                      fmt::format("mean bytes per token ({} merges per point)", bucket))
             .add(Series("mean token length", "/token_length/merge_id", "/token_length/mean_bytes")
                      .marker("o")),
         Figure::bar("most_frequent.png",
                     fmt::format("Most frequent tokens at vocab {}", vocab_size), "token",
                     "share of all tokens")
             .rotate_labels(60)
             .add(Series("share", "/most_frequent/label", "/most_frequent/share"))});
    const auto path = g2c::exercises::save_result(options, "inspect_tokens.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_04_inspect_tokens
