// Exercise 05.3 — RoPE's cos/sin tables. Column j and column j + D/2 share one angle, pos · θ_j
// with θ_j = base^(-2j/D): the split-halves pairing. Early columns turn fast (a wavelength of 2π
// positions), the last ones slowly (wavelengths up to ~base).
#include <cmath>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/embeddings/rotary.h"

namespace exercise_05_rope_tables {

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 05, exercise 3: the RoPE cos/sin tables"};
  g2c::exercises::CommonOptions options;
  options.out = "results/05-embeddings";
  std::int64_t max_seq_len = 64;
  std::int64_t embedding_dim = 32;
  double base = 10000.0;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--max-seq-len", max_seq_len, "Positions in the tables (M)");
  app.add_option("--dim", embedding_dim, "Embedding dimension D (even)");
  app.add_option("--base", base, "RoPE base");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    g2c::embeddings::RotaryEmbedding rope(max_seq_len, embedding_dim, base);
    rope->to(device);
    const auto half = embedding_dim / 2;
    // Angle per position of pair j, read back from the table: atan2(sin, cos) at position 1.
    const auto theta =
        torch::atan2(rope->sin[std::min<std::int64_t>(1, max_seq_len - 1)].narrow(0, 0, half),
                     rope->cos[std::min<std::int64_t>(1, max_seq_len - 1)].narrow(0, 0, half));
    const auto wavelength = 2.0 * M_PI / theta.to(torch::kDouble);  // positions per full turn
    const bool halves_match =
        torch::equal(rope->cos.narrow(1, 0, half), rope->cos.narrow(1, half, half)) &&
        torch::equal(rope->sin.narrow(1, 0, half), rope->sin.narrow(1, half, half));
    fmt::print("cos/sin tables ({}, {}); columns j and j + {} identical: {}\n", max_seq_len,
               embedding_dim, half, halves_match ? "yes" : "NO");
    fmt::print("wavelengths: pair 0 {:.2f} positions (2π), pair {} {:.0f} positions\n",
               wavelength[0].item<double>(), half - 1, wavelength[half - 1].item<double>());

    auto result = g2c::exercises::run_metadata("05_rope_tables", options, device);
    result["config"] = {
        {"max_seq_len", max_seq_len}, {"embedding_dim", embedding_dim}, {"base", base}};
    result["cos"] = g2c::exercises::matrix_json(rope->cos);
    result["sin"] = g2c::exercises::matrix_json(rope->sin);
    result["halves_match"] = halves_match;
    std::vector<std::int64_t> pairs(static_cast<std::size_t>(half));
    for (std::int64_t j = 0; j < half; ++j) pairs[j] = j;
    result["pairs"] = {{"pair", pairs},
                       {"theta", g2c::exercises::vector_json(theta)},
                       {"wavelength", g2c::exercises::vector_json(wavelength)}};
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::heatmaps("rope_tables.png", "RoPE tables: column j and j + D/2 share an angle")
             .cmap("RdBu")
             .add(Panel("/cos").title("cos (position, dim)").xlabel("dim").ylabel("position"))
             .add(Panel("/sin").title("sin (position, dim)").xlabel("dim").ylabel("position")),
         Figure::line("rope_wavelengths.png", "Wavelength of each rotating pair", "pair j",
                      "positions per turn")
             .logy()
             .add(Series("", "/pairs/pair", "/pairs/wavelength").marker("o"))});
    const auto path = g2c::exercises::save_result(options, "rope_tables.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_05_rope_tables
