// Exercise 08 — padding: a batch of sentences of different lengths, padded at the end to one
// length T, through an (untrained, non-causal) MultiHeadAttention with and without the padding
// mask. Without it every real token spends part of its attention on padding and its output
// changes with the batch it was put in; with it the output of each sentence equals the output of
// the sentence alone. Heatmaps of one head (no mask, padding_mask, causal + padding) and the
// output at the padded positions. Characters as tokens: no data needed.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/attention/masks.h"
#include "g2c/attention/multi_head.h"
#include "g2c/attention/scaled_dot_product.h"
#include "g2c/core/errors.h"

namespace exercise_08_padding {

namespace {

struct Config {
  std::vector<std::string> sentences{"to be or not", "the cat sat", "a dog", "hi"};
  std::int64_t embedding_dim = 32;
  std::int64_t num_heads = 4;
  std::int64_t head = 0;  // the head drawn in the heatmaps
  // Scales the random embeddings: larger scores make each head's pattern visible (std ~1 of the
  // scores instead of ~0.3 at scale 1).
  double embedding_scale = 2.0;
};

constexpr std::int64_t kPadId = 0;  // characters get 1, 2, … in byte order

/// One readable symbol per token: "␣" for a space, "∅" for padding, \xNN for other bytes.
std::string label(char c) {
  if (c == ' ') return "␣";
  if (c >= 33 && c <= 126) return std::string(1, c);
  return fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
}

/// Mean over the real queries of sentence b of the weight its heads put on padding keys.
double padding_share(const torch::Tensor& weights, std::int64_t b, std::int64_t length) {
  // weights (B, H, T, T): rows [0, length), columns [length, T)
  using torch::indexing::Slice;
  return weights.index({b, Slice(), Slice(0, length), Slice(length, torch::indexing::None)})
      .sum(/*dim=*/-1)
      .mean()
      .item<double>();
}

/// Mean L2 norm of the outputs (B, T, D) of sentence b at its padded positions; none: nullopt.
std::optional<double> padded_norm(const torch::Tensor& output, std::int64_t b,
                                  std::int64_t length) {
  if (length == output.size(1)) return std::nullopt;
  using torch::indexing::Slice;
  return output.index({b, Slice(length, torch::indexing::None)})
      .norm(2, /*dim=*/-1)
      .mean()
      .item<double>();
}

nlohmann::json or_null(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 08: padding. Sentences of different lengths in one batch, attention with and "
      "without the padding mask"};
  g2c::exercises::CommonOptions options;
  options.out = "results/08-multi-head-attention";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--sentences", config.sentences, "The batch, one sentence per argument");
  app.add_option("--dim", config.embedding_dim, "Embedding dimension D").positive();
  app.add_option("--heads", config.num_heads, "Heads H (must divide D)").positive();
  app.add_option("--head", config.head, "The head drawn in the heatmaps").non_negative();
  return g2c::run_cli(app, argc, argv, [&] {
    if (config.head >= config.num_heads) {
      throw g2c::ValueError(fmt::format("--head {} does not exist with --heads {} (0 to {})",
                                        config.head, config.num_heads, config.num_heads - 1));
    }
    for (const auto& sentence : config.sentences) {
      if (sentence.empty()) throw g2c::ValueError("--sentences: every sentence needs a character");
    }
    const auto device = g2c::exercises::prepare(options);

    // Characters as tokens, id 0 for padding; every sentence padded at the end to the longest.
    std::map<char, std::int64_t> vocabulary;
    for (const auto& sentence : config.sentences) {
      for (const char c : sentence) vocabulary.emplace(c, 0);
    }
    std::int64_t next_id = kPadId + 1;
    for (auto& [c, id] : vocabulary) id = next_id++;
    const auto batch = static_cast<std::int64_t>(config.sentences.size());
    std::int64_t T = 0;
    for (const auto& sentence : config.sentences) {
      T = std::max<std::int64_t>(T, static_cast<std::int64_t>(sentence.size()));
    }
    auto ids = torch::full({batch, T}, kPadId, torch::kLong);  // (B, T)
    std::vector<std::int64_t> lengths;
    std::vector<std::vector<std::string>> labels;
    for (std::int64_t b = 0; b < batch; ++b) {
      const auto& sentence = config.sentences[static_cast<std::size_t>(b)];
      lengths.push_back(static_cast<std::int64_t>(sentence.size()));
      labels.emplace_back(static_cast<std::size_t>(T), "∅");
      for (std::size_t t = 0; t < sentence.size(); ++t) {
        ids[b][static_cast<std::int64_t>(t)] = vocabulary.at(sentence[t]);
        labels.back()[t] = label(sentence[t]);
      }
    }
    ids = ids.to(device);
    const auto length_tensor = torch::tensor(lengths, torch::kLong).to(device);  // (B)

    // An untrained encoder layer: random token and position embeddings (the padding id has one
    // too, as in any model that does not zero it), a non-causal MultiHeadAttention.
    torch::NoGradGuard no_grad;
    const auto vocab_size = next_id;
    const auto token_table =
        torch::randn({vocab_size, config.embedding_dim}, torch::device(device)) *
        config.embedding_scale;
    const auto position_table =
        torch::randn({T, config.embedding_dim}, torch::device(device)) * config.embedding_scale;
    const auto x = token_table.index({ids}) + position_table;  // (B, T, D)
    g2c::attention::MultiHeadAttention attention(
        g2c::attention::MultiHeadAttentionOptions(config.embedding_dim, config.num_heads)
            .causal(false));
    attention->to(device);
    attention->eval();

    const auto keys = g2c::attention::padding_mask(length_tensor, T);  // (B, 1, 1, T)
    // Padding queries blocked as well: their rows are empty (zero weights, never NaN).
    const auto keys_and_queries = g2c::attention::combine_masks(keys, keys.transpose(-1, -2));
    const auto decoder =
        g2c::attention::combine_masks(g2c::attention::causal_mask(T, device), keys);  // (B,1,T,T)
    const auto weights_none =
        attention->attention_weights_masked(x, torch::Tensor());  // (B, H, T, T)
    const auto weights_padding = attention->attention_weights_masked(x, keys);
    const auto weights_decoder = attention->attention_weights_masked(x, decoder);
    const auto output_none = attention->forward_masked(x, torch::Tensor());  // (B, T, D)
    const auto output_padding = attention->forward_masked(x, keys);
    const auto output_both = attention->forward_masked(x, keys_and_queries);

    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    nlohmann::json sentences = nlohmann::json::array();
    auto heatmaps = Figure::heatmaps("padding_weights.png",
                                     fmt::format("Head {} of an untrained layer: padding without "
                                                 "and with the mask",
                                                 config.head))
                        .columns(3)
                        .panel_size(4.6, 4.0);
    fmt::print("{:<16} {:>6} {:>22} {:>26} {:>30}\n", "sentence", "tokens", "weight on padding",
               "max |padded - alone|", "output norm at padding");
    fmt::print("{:<16} {:>6} {:>22} {:>26} {:>30}\n", "", "", "no mask -> mask", "no mask -> mask",
               "none / keys / keys+queries");
    using torch::indexing::Slice;
    for (std::int64_t b = 0; b < batch; ++b) {
      const auto length = lengths[static_cast<std::size_t>(b)];
      const auto& text = config.sentences[static_cast<std::size_t>(b)];
      // The sentence alone, unpadded: what its outputs should be whatever batch it is put in.
      const auto alone = attention->forward_masked(x.index({Slice(b, b + 1), Slice(0, length)}),
                                                   torch::Tensor());  // (1, length, D)
      auto distance = [&](const torch::Tensor& output) {
        return (output.index({Slice(b, b + 1), Slice(0, length)}) - alone)
            .abs()
            .max()
            .item<double>();
      };
      const double share_none = padding_share(weights_none, b, length);
      const double share_padding = padding_share(weights_padding, b, length);
      const double diff_none = distance(output_none), diff_padding = distance(output_padding);
      const auto norm_none = padded_norm(output_none, b, length);
      const auto norm_padding = padded_norm(output_padding, b, length);
      const auto norm_both = padded_norm(output_both, b, length);
      fmt::print(
          "{:<16} {:>3}/{:<2} {:>9.1f}% -> {:>5.1f}% {:>12.3g} -> {:>9.2g} {:>30}\n",
          fmt::format("\"{}\"", text), length, T, 100 * share_none, 100 * share_padding, diff_none,
          diff_padding,
          norm_none ? fmt::format("{:.3f} / {:.3f} / {:.3f}", *norm_none, *norm_padding, *norm_both)
                    : std::string("(no padding)"));
      const auto b_text = std::to_string(b);
      nlohmann::json entry;
      entry["text"] = text;
      entry["length"] = length;
      entry["tokens"] = labels[static_cast<std::size_t>(b)];
      entry["padding_weight_share"] = {{"no_mask", share_none}, {"padding_mask", share_padding}};
      entry["max_diff_vs_alone"] = {{"no_mask", diff_none}, {"padding_mask", diff_padding}};
      entry["padded_output_norm"] = {{"no_mask", or_null(norm_none)},
                                     {"padding_mask", or_null(norm_padding)},
                                     {"padding_mask_keys_and_queries", or_null(norm_both)}};
      entry["weights"] = {
          {"no_mask", g2c::exercises::matrix_json(weights_none[b][config.head])},
          {"padding_mask", g2c::exercises::matrix_json(weights_padding[b][config.head])},
          {"causal_and_padding", g2c::exercises::matrix_json(weights_decoder[b][config.head])}};
      sentences.push_back(entry);
      const std::vector<std::pair<std::string, std::string>> columns = {
          {"no_mask", fmt::format("no mask: {:.0f}% on padding", 100 * share_none)},
          {"padding_mask", "padding_mask"},
          {"causal_and_padding", "causal | padding"}};
      for (const auto& [key, title] : columns) {
        heatmaps.add(Panel(fmt::format("/sentences/{}/weights/{}", b_text, key))
                         .title(fmt::format("\"{}\": {}", text, title))
                         .xticklabels(fmt::format("/sentences/{}/tokens", b_text))
                         .yticklabels(fmt::format("/sentences/{}/tokens", b_text))
                         .xlabel("key")
                         .ylabel(fmt::format("query ({} real of {})", length, T))
                         .range(0, 1)
                         .cmap("magma")
                         .fontsize(7));
      }
    }

    auto result = g2c::exercises::run_metadata("08_padding", options, device);
    result["config"] = {{"sentences", config.sentences},
                        {"embedding_dim", config.embedding_dim},
                        {"num_heads", config.num_heads},
                        {"head", config.head},
                        {"embedding_scale", config.embedding_scale},
                        {"seq_len", T},
                        {"pad_id", kPadId},
                        {"vocab_size", vocab_size},
                        {"tokenizer", "char"},
                        {"causal", false}};
    result["sentences"] = sentences;
    result["figures"] = g2c::exercises::figures({heatmaps});
    const auto path = g2c::exercises::save_result(options, "padding.json", result);
    std::fflush(stdout);  // the table before the plotting script's own lines
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_08_padding
