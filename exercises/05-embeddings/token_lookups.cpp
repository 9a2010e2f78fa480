// Exercise 05.1 — token lookups. An embedding is a table: looking up ids [3, 5, 7] returns rows
// 3, 5 and 7 of weight (V, D), for ids of any shape. The gradient flows back only to the rows that
// were used, once per use.
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/embeddings/token_embedding.h"

namespace exercise_05_token_lookups {

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 05, exercise 1: token ids become rows of the embedding table"};
  g2c::exercises::CommonOptions options;
  options.out = "results/05-embeddings";
  std::int64_t vocab_size = 10;  // V: small enough to print the whole table
  std::int64_t embedding_dim = 8;
  std::vector<std::int64_t> ids{3, 5, 7, 3};  // 3 twice: its row gets gradient twice
  g2c::exercises::add_common_options(app, options);
  app.add_option("--vocab", vocab_size, "Vocabulary size V");
  app.add_option("--dim", embedding_dim, "Embedding dimension D");
  app.add_option("--ids", ids, "Token ids to look up");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    g2c::embeddings::TokenEmbedding embedding(vocab_size, embedding_dim);
    embedding->to(device);
    const auto id_tensor = torch::tensor(ids, torch::kLong).to(device);  // (N)
    const auto rows = embedding(id_tensor);                              // (N, D)
    bool rows_match = true;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const bool same = torch::equal(rows[static_cast<std::int64_t>(i)], embedding->weight[ids[i]]);
      rows_match = rows_match && same;
      fmt::print("id {:>3} -> row {:>3} of weight: {}\n", ids[i], ids[i],
                 same ? "equal" : "DIFFERENT");
    }
    const auto batch = id_tensor.repeat({2, 1});  // (2, N)
    const auto batched = embedding(batch);        // (2, N, D)
    fmt::print("ids ({}) -> ({}); ids ({}) -> ({})\n", fmt::join(id_tensor.sizes(), ", "),
               fmt::join(rows.sizes(), ", "), fmt::join(batch.sizes(), ", "),
               fmt::join(batched.sizes(), ", "));
    rows.sum().backward();
    // d(sum)/d(weight[i]) is a row of ones times the number of times id i was looked up.
    const auto uses = embedding->weight.grad().sum(/*dim=*/1) / static_cast<double>(embedding_dim);
    fmt::print("gradient per row / D (= uses of each id): {}\n",
               fmt::join(g2c::exercises::vector_json(uses).get<std::vector<double>>(), " "));

    auto result = g2c::exercises::run_metadata("05_token_lookups", options, device);
    result["config"] = {{"vocab_size", vocab_size}, {"embedding_dim", embedding_dim}, {"ids", ids}};
    result["weight"] = g2c::exercises::matrix_json(embedding->weight);
    result["lookups"] = g2c::exercises::matrix_json(rows);
    result["rows_match"] = rows_match;
    result["shapes"] = {{"ids_1d", id_tensor.sizes().vec()},
                        {"out_1d", rows.sizes().vec()},
                        {"ids_2d", batch.sizes().vec()},
                        {"out_2d", batched.sizes().vec()}};
    std::vector<std::int64_t> token_ids(static_cast<std::size_t>(vocab_size));
    std::iota(token_ids.begin(), token_ids.end(), 0);
    result["gradient_uses"] = {{"id", token_ids}, {"uses", g2c::exercises::vector_json(uses)}};
    std::vector<std::string> id_labels;
    for (const auto id : ids) id_labels.push_back(std::to_string(id));
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::heatmaps("token_lookups.png", "Looking up ids returns rows of the table")
             .cmap("coolwarm")
             .add(Panel("/weight").title("weight (V, D)").xlabel("dim").ylabel("id"))
             .add(Panel("/lookups")
                      .title("embedding(ids) (N, D)")
                      .xlabel("dim")
                      .yticklabels(id_labels)),
         Figure::bar("token_gradient_uses.png", "Gradient reaches only the rows that were used",
                     "token id", "grad row sum / D")
             .add(Series("", "/gradient_uses/id", "/gradient_uses/uses"))});
    const auto path = g2c::exercises::save_result(options, "token_lookups.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_05_token_lookups
