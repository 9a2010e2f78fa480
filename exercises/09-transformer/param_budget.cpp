// Exercise 09.6 — shape and parameter budget. TransformerLM(V 32, D 32, L 2, H 4, max 16) maps ids
// (3, 10) to logits (3, 10, 32); then, for three configurations, the parameters counted against
// the closed form V·D + T·D + L·(12D² + 13D) + 2D + V, where they live, and what tying the head to
// the token table saves (an untied head would add V·D).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_09_param_budget {

namespace {

std::int64_t numel(const std::vector<torch::Tensor>& parameters) {
  std::int64_t total = 0;
  for (const auto& p : parameters) total += p.numel();
  return total;
}

struct Shape {
  std::int64_t vocab_size, embedding_dim, num_layers, max_seq_len;
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 09, exercise 6: the output shape and where the parameters are"};
  g2c::exercises::CommonOptions options;
  options.out = "results/09-transformer";
  std::int64_t num_heads = 4;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--heads", num_heads, "Heads per block (the count does not depend on it)")
      .positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    g2c::transformer::TransformerLM small(
        g2c::transformer::TransformerLMOptions(32, 32, 2, num_heads, 16));
    small->to(device);
    torch::NoGradGuard no_grad;
    const auto ids =
        torch::randint(0, 32, {3, 10}, torch::TensorOptions(torch::kLong).device(device));
    const auto logits = small(ids);
    fmt::print("TransformerLM(V 32, D 32, L 2, H {}, max 16): ids ({}) -> logits ({})\n\n",
               num_heads, fmt::join(ids.sizes(), ", "), fmt::join(logits.sizes(), ", "));

    const std::vector<Shape> shapes{{100, 32, 2, 32}, {100, 64, 4, 32}, {500, 64, 2, 64}};
    nlohmann::json rows = nlohmann::json::array();
    std::vector<std::string> labels;
    std::vector<double> embeddings, positions, attention, feed_forward, norms, head;
    fmt::print("{:>5} {:>4} {:>3} {:>4} {:>10} {:>10} {:>10} {:>8}\n", "V", "D", "L", "T",
               "counted", "formula", "untied", "saved");
    for (const auto& s : shapes) {
      const g2c::transformer::TransformerLMOptions model_options(
          s.vocab_size, s.embedding_dim, s.num_layers, num_heads, s.max_seq_len);
      g2c::transformer::TransformerLM model(model_options);
      const std::int64_t counted = numel(model->parameters());
      const std::int64_t formula = g2c::transformer::parameter_count(model_options);
      const std::int64_t untied = counted + s.vocab_size * s.embedding_dim;
      const double saved = 100.0 * static_cast<double>(untied - counted) / untied;
      fmt::print("{:>5} {:>4} {:>3} {:>4} {:>10} {:>10} {:>10} {:>7.1f}%\n", s.vocab_size,
                 s.embedding_dim, s.num_layers, s.max_seq_len, counted, formula, untied, saved);
      std::int64_t attn = 0, ffn = 0, ln = 0;
      for (auto& block : model->blocks) {
        attn += numel(block->attn->parameters());
        ffn += numel(block->ffn->parameters());
        ln += numel(block->ln1->parameters()) + numel(block->ln2->parameters());
      }
      ln += numel(model->ln_final->parameters());
      labels.push_back(fmt::format("V{} D{} L{} T{}", s.vocab_size, s.embedding_dim, s.num_layers,
                                   s.max_seq_len));
      embeddings.push_back(static_cast<double>(model->token_embed->weight.numel()));
      positions.push_back(static_cast<double>(model->pos_embed->weight.numel()));
      attention.push_back(static_cast<double>(attn));
      feed_forward.push_back(static_cast<double>(ffn));
      norms.push_back(static_cast<double>(ln));
      head.push_back(static_cast<double>(model->head_bias.numel()));
      rows.push_back({{"vocab_size", s.vocab_size},
                      {"embedding_dim", s.embedding_dim},
                      {"num_layers", s.num_layers},
                      {"max_seq_len", s.max_seq_len},
                      {"counted", counted},
                      {"formula", formula},
                      {"untied", untied},
                      {"tying_saves_percent", saved},
                      {"token_embedding", model->token_embed->weight.numel()},
                      {"positions", model->pos_embed->weight.numel()},
                      {"attention", attn},
                      {"feed_forward", ffn},
                      {"layer_norms", ln},
                      {"head_bias", model->head_bias.numel()}});
    }
    auto result = g2c::exercises::run_metadata("09_param_budget", options, device);
    result["config"] = {{"num_heads", num_heads}};
    result["shape_check"] = {{"ids", ids.sizes().vec()}, {"logits", logits.sizes().vec()}};
    result["budget"] = rows;
    result["labels"] = labels;
    result["parts"] = {{"token_embedding", embeddings}, {"positions", positions},
                       {"attention", attention},        {"feed_forward", feed_forward},
                       {"layer_norms", norms},          {"head_bias", head}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    auto figure =
        Figure::bar("param_budget.png",
                    "Where the parameters live (tied head: no V×D output matrix)", "", "parameters")
            .logy()
            .width(9);
    for (const std::string part : {"token_embedding", "positions", "attention", "feed_forward",
                                   "layer_norms", "head_bias"}) {
      figure.add(Series(part, "/labels", "/parts/" + part));
    }
    result["figures"] = g2c::exercises::figures({figure});
    const auto path = g2c::exercises::save_result(options, "param_budget.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_09_param_budget
