// Exercise 05.4 — RoPE's relative-position property, measured. For a query q at position m and a
// key k at position n, rope(q)_m · rope(k)_n depends only on n − m. Slide the pair along the
// sequence at a fixed offset: with RoPE the score does not move (up to float rounding); with
// sinusoidal positions *added* to q and k it does.
#include <algorithm>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/core/errors.h"
#include "g2c/embeddings/positional.h"
#include "g2c/embeddings/rotary.h"

namespace exercise_05_rope_relative {

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 05, exercise 4: RoPE scores depend only on the relative position"};
  g2c::exercises::CommonOptions options;
  options.out = "results/05-embeddings";
  std::int64_t max_seq_len = 128;
  std::int64_t embedding_dim = 64;
  std::int64_t max_offset = 16;  // offsets n − m = 0 … max_offset
  std::int64_t trials = 50;      // random (q, k) pairs; the spread is the largest over them
  g2c::exercises::add_common_options(app, options);
  app.add_option("--max-seq-len", max_seq_len, "Positions (M)");
  app.add_option("--dim", embedding_dim, "Embedding dimension D (even)");
  app.add_option("--max-offset", max_offset, "Largest offset n - m");
  app.add_option("--trials", trials, "Random (q, k) pairs");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (max_offset < 0 || max_offset >= max_seq_len || trials < 1) {
      throw g2c::ValueError("need 0 <= --max-offset < --max-seq-len and --trials >= 1");
    }
    g2c::embeddings::RotaryEmbedding rope(max_seq_len, embedding_dim);
    g2c::embeddings::SinusoidalPositionalEmbedding sinusoidal(max_seq_len, embedding_dim);
    rope->to(device);
    sinusoidal->to(device);
    const auto on = torch::TensorOptions().device(device);
    const auto table = sinusoidal(max_seq_len);  // (M, D)
    std::vector<double> rope_spread(max_offset + 1, 0.0), added_spread(max_offset + 1, 0.0);
    std::vector<double> first_trial_score;  // rope score against the offset, for one (q, k)
    for (std::int64_t trial = 0; trial < trials; ++trial) {
      const auto q = torch::randn({embedding_dim}, on);
      const auto k = torch::randn({embedding_dim}, on);
      const auto rq = rope(q.expand({max_seq_len, embedding_dim}).contiguous());  // (M, D)
      const auto rk = rope(k.expand({max_seq_len, embedding_dim}).contiguous());  // (M, D)
      const auto aq = q + table;                                                  // (M, D)
      const auto ak = k + table;                                                  // (M, D)
      for (std::int64_t offset = 0; offset <= max_offset; ++offset) {
        const auto count = max_seq_len - offset;
        // Scores at (m, m + offset) for every m: (count)
        const auto rope_scores = (rq.narrow(0, 0, count) * rk.narrow(0, offset, count)).sum(-1);
        const auto added_scores = (aq.narrow(0, 0, count) * ak.narrow(0, offset, count)).sum(-1);
        rope_spread[offset] =
            std::max(rope_spread[offset], (rope_scores.max() - rope_scores.min()).item<double>());
        added_spread[offset] = std::max(added_spread[offset],
                                        (added_scores.max() - added_scores.min()).item<double>());
        if (trial == 0) first_trial_score.push_back(rope_scores[0].item<double>());
      }
    }
    fmt::print("{:>7} {:>22} {:>26}\n", "offset", "RoPE score spread", "added sinusoidal spread");
    for (std::int64_t offset = 0; offset <= max_offset; ++offset) {
      fmt::print("{:>7} {:>22.3e} {:>26.3e}\n", offset, rope_spread[offset], added_spread[offset]);
    }
    const double rope_worst = *std::max_element(rope_spread.begin(), rope_spread.end());
    const double added_worst = *std::max_element(added_spread.begin(), added_spread.end());
    fmt::print("largest spread: RoPE {:.2e} (float rounding), added positions {:.2f}\n", rope_worst,
               added_worst);

    auto result = g2c::exercises::run_metadata("05_rope_relative", options, device);
    result["config"] = {{"max_seq_len", max_seq_len},
                        {"embedding_dim", embedding_dim},
                        {"max_offset", max_offset},
                        {"trials", trials}};
    std::vector<std::int64_t> offsets(static_cast<std::size_t>(max_offset + 1));
    for (std::int64_t o = 0; o <= max_offset; ++o) offsets[o] = o;
    result["offsets"] = offsets;
    result["rope_spread"] = rope_spread;
    result["added_spread"] = added_spread;
    result["rope_score_by_offset"] = first_trial_score;
    result["summary"] = {{"rope_max_spread", rope_worst}, {"added_max_spread", added_worst}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("rope_relative.png", "Spread of q·k as the pair slides along the sequence",
                      "offset n − m", "max − min score over positions")
             .logy()
             .add(Series("RoPE (rotated q, k)", "/offsets", "/rope_spread").marker("o"))
             .add(Series("sinusoidal added to q, k", "/offsets", "/added_spread").marker("s")),
         Figure::line("rope_score_by_offset.png",
                      "RoPE score of one (q, k) pair against the offset", "offset n − m",
                      "rope(q)·rope(k)")
             .add(Series("", "/offsets", "/rope_score_by_offset").marker("o"))});
    const auto path = g2c::exercises::save_result(options, "rope_relative.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_05_rope_relative
