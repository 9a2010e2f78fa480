// Exercise 05.2 — the sinusoidal table as a heatmap. Each pair of columns is a sine/cosine clock
// ticking at its own frequency, from one turn every 2π positions (columns 0, 1) to almost frozen
// (the last columns). Nearby positions get similar rows; the similarity of rows falls off with
// distance, the same at every absolute position.
#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/embeddings/positional.h"
#include "g2c/embeddings/similarity.h"

namespace exercise_05_sinusoidal_table {

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 05, exercise 2: the sinusoidal positional table"};
  g2c::exercises::CommonOptions options;
  options.out = "results/05-embeddings";
  std::int64_t max_seq_len = 64;
  std::int64_t embedding_dim = 64;
  std::vector<std::int64_t> columns{0, 1, 8, 9, 32, 33};  // fast, medium and slow clocks
  g2c::exercises::add_common_options(app, options);
  app.add_option("--max-seq-len", max_seq_len, "Positions in the table (M)");
  app.add_option("--dim", embedding_dim, "Embedding dimension D (even)");
  app.add_option("--columns", columns, "Columns drawn as curves over the positions");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    g2c::embeddings::SinusoidalPositionalEmbedding positions(max_seq_len, embedding_dim);
    positions->to(device);
    const auto table = positions(max_seq_len);              // (M, D)
    const auto unit = g2c::embeddings::normalized(table);   // (M, D)
    const auto similarity = torch::matmul(unit, unit.t());  // (M, M) cosine of rows
    fmt::print("table ({}, {}), values in [{:.3f}, {:.3f}]; row 0 = [0, 1, 0, 1, ...]\n",
               table.size(0), table.size(1), table.min().item<double>(),
               table.max().item<double>());
    fmt::print(
        "cosine(row 10, row 11) = {:.4f}, cosine(row 40, row 41) = {:.4f}, "
        "cosine(row 10, row 30) = {:.4f}\n",
        similarity[10 % max_seq_len][11 % max_seq_len].item<double>(),
        similarity[40 % max_seq_len][41 % max_seq_len].item<double>(),
        similarity[10 % max_seq_len][30 % max_seq_len].item<double>());

    auto result = g2c::exercises::run_metadata("05_sinusoidal_table", options, device);
    result["config"] = {{"max_seq_len", max_seq_len}, {"embedding_dim", embedding_dim}};
    result["table"] = g2c::exercises::matrix_json(table);
    result["row_similarity"] = g2c::exercises::matrix_json(similarity);
    std::vector<std::int64_t> position_index(static_cast<std::size_t>(max_seq_len));
    for (std::int64_t p = 0; p < max_seq_len; ++p) position_index[p] = p;
    result["positions"] = position_index;
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    using g2c::exercises::Series;
    auto clocks =
        Figure::line("sinusoidal_columns.png", "Columns of the table: clocks at different speeds",
                     "position", "value");
    result["columns"] = nlohmann::json::object();
    for (const auto column : columns) {
      if (column < 0 || column >= embedding_dim) continue;
      const auto key = std::to_string(column);
      result["columns"][key] = g2c::exercises::vector_json(table.select(1, column));
      clocks.add(Series(fmt::format("column {} ({})", column, column % 2 ? "cos" : "sin"),
                        "/positions", "/columns/" + key));
    }
    result["figures"] = g2c::exercises::figures(
        {Figure::heatmaps("sinusoidal_table.png", "Sinusoidal positional encoding")
             .add(Panel("/table")
                      .title("PE (position, dim)")
                      .xlabel("dim")
                      .ylabel("position")
                      .cmap("RdBu"))
             .add(Panel("/row_similarity")
                      .title("cosine(PE[i], PE[j])")
                      .xlabel("position j")
                      .ylabel("position i")),
         clocks});
    const auto path = g2c::exercises::save_result(options, "sinusoidal_table.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_05_sinusoidal_table
