// Exercise 04.1 — pair counts and the overlap rule. Counts the adjacent pairs of a sequence (in
// order of first occurrence), then merges step by step, printing each decision of the scan: the
// right half of a match is consumed, so [1, 1, 1] with (1, 1) -> 99 gives [99, 1].
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/tokenizer/bpe.h"

namespace exercise_04_pair_counts {

using namespace g2c::tokenizer;

namespace {

std::string to_text(const PairCounts& counts) {
  std::ostringstream out;
  out << counts;
  return out.str();
}

nlohmann::json counts_json(const PairCounts& counts) {
  nlohmann::json out = nlohmann::json::array();
  for (const PairCount& entry : counts) {
    out.push_back({{"pair", {entry.pair.left, entry.pair.right}}, {"count", entry.count}});
  }
  return out;
}

// The scan merge() performs, narrated; returns the trace and checks it against merge().
nlohmann::json trace_merge(const Ids& ids, Pair pair, TokenId new_id) {
  nlohmann::json steps = nlohmann::json::array();
  Ids out;
  std::size_t i = 0;
  fmt::print("merge {} with ({}, {}) -> {}:\n", fmt::join(ids, " "), pair.left, pair.right, new_id);
  while (i < ids.size()) {
    const bool match = i + 1 < ids.size() && ids[i] == pair.left && ids[i + 1] == pair.right;
    out.push_back(match ? new_id : ids[i]);
    const std::string action =
        match ? fmt::format("match at {}: emit {}, skip to {}", i, new_id, i + 2)
              : fmt::format("no match at {}: copy {}", i, ids[i]);
    fmt::print("  i = {}  {:<34} output [{}]\n", i, action, fmt::join(out, ", "));
    steps.push_back({{"i", i}, {"action", action}, {"output", out}});
    i += match ? 2 : 1;
  }
  const Ids expected = BPETokenizer::merge(ids, pair, new_id);
  fmt::print("  BPETokenizer::merge gives [{}] {}\n\n", fmt::join(expected, ", "),
             expected == out ? "(the same)" : "(DIFFERENT: check your merge)");
  return {{"ids", ids},     {"pair", {pair.left, pair.right}}, {"new_id", new_id},
          {"steps", steps}, {"merge_result", expected},        {"agrees", expected == out}};
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 04, exercise 1: pair counts and the [1, 1, 1] overlap rule, step by step"};
  g2c::exercises::CommonOptions options;
  options.out = "results/04-tokenizer";
  std::vector<TokenId> sequence{1, 2, 1, 2, 3, 1, 1, 1};
  std::string text = "aaabdaaabac";
  g2c::exercises::add_common_options(app, options);
  app.add_option("--ids", sequence, "A sequence of ids to count and merge");
  app.add_option("--text", text, "A text whose bytes are counted too");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const PairCounts counts = BPETokenizer::get_pair_counts(sequence);
    fmt::print("ids {}\npair counts, in order of first occurrence: {}\n\n",
               fmt::join(sequence, " "), to_text(counts));
    PairCount best = *counts.begin();
    for (const PairCount& entry : counts) {
      if (entry.count > best.count) best = entry;
    }
    fmt::print("most frequent: ({}, {}) x{} (a tie would go to the pair seen first)\n\n",
               best.pair.left, best.pair.right, best.count);

    const nlohmann::json overlap = trace_merge({1, 1, 1}, {1, 1}, 99);
    const nlohmann::json chain = trace_merge({1, 1, 1, 1}, {1, 1}, 99);
    const nlohmann::json best_merge = trace_merge(sequence, best.pair, 256);

    const BPETokenizer bytes;
    const Ids text_ids = bytes.encode_base(text);
    const PairCounts text_counts = BPETokenizer::get_pair_counts(text_ids);
    fmt::print("\"{}\" as bytes: {}\n", text, fmt::join(text_ids, " "));
    std::vector<std::string> labels;
    std::vector<std::int64_t> values;
    for (const PairCount& entry : text_counts) {
      labels.push_back(fmt::format("{}{}", static_cast<char>(entry.pair.left),
                                   static_cast<char>(entry.pair.right)));
      values.push_back(entry.count);
      fmt::print("  {:>4}  ({}, {})  x{}\n", labels.back(), entry.pair.left, entry.pair.right,
                 entry.count);
    }

    auto result = g2c::exercises::run_metadata("04_pair_counts", options, device);
    result["config"] = {{"ids", sequence}, {"text", text}};
    result["pair_counts"] = counts_json(counts);
    result["most_frequent"] = {{"pair", {best.pair.left, best.pair.right}}, {"count", best.count}};
    result["overlap"] = overlap;
    result["chain"] = chain;
    result["best_merge"] = best_merge;
    result["text_pairs"] = {{"labels", labels}, {"counts", values}};
    result["figures"] = g2c::exercises::figures(
        {g2c::exercises::Figure::bar("pair_counts.png",
                                     fmt::format("Adjacent byte pairs of \"{}\"", text),
                                     "pair (first occurrence order)", "count")
             .add(g2c::exercises::Series("count", "/text_pairs/labels", "/text_pairs/counts"))});
    const auto path = g2c::exercises::save_result(options, "pair_counts.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_04_pair_counts
