// Exercise 09.3 — the residual stream is the default: Block(8, 2, hidden 16), seed 0, with
// attn.out_proj and ffn.fc2 zeroed, returns its input exactly (max |y - x| ≤ 1e-6). The same block
// left as initialised moves every position: its sublayers *add* to x, they do not replace it.
#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/transformer/block.h"

namespace exercise_09_residual_identity {

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 09, exercise 3: a block whose sublayers output zero is the identity"};
  g2c::exercises::CommonOptions options;
  options.out = "results/09-transformer";
  g2c::exercises::add_common_options(app, options);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto on = torch::TensorOptions().device(device);
    g2c::transformer::Block block(g2c::transformer::BlockOptions(8, 2).hidden_dim(16));
    block->to(device);
    torch::NoGradGuard no_grad;
    const auto x = torch::randn({2, 4, 8}, on);                    // (B, T, D)
    const auto moved = (block(x) - x).abs().amax(/*dim=*/{0, 2});  // (T), as initialised
    block->attn->out_proj->W.zero_();
    block->attn->out_proj->b.zero_();
    block->ffn->fc2->W.zero_();
    block->ffn->fc2->b.zero_();
    const auto zeroed = (block(x) - x).abs().amax(/*dim=*/{0, 2});  // (T)
    const double worst = zeroed.max().item<double>();
    fmt::print("{:>10} {:>22} {:>22}\n", "position", "max |y - x| as init", "max |y - x| zeroed");
    for (std::int64_t t = 0; t < 4; ++t) {
      fmt::print("{:>10} {:>22.4f} {:>22.2e}\n", t, moved[t].item<double>(),
                 zeroed[t].item<double>());
    }
    fmt::print("with out_proj and fc2 zeroed: max |y - x| = {:.2e} ({})\n", worst,
               worst <= 1e-6 ? "the identity" : "NOT the identity: check the residual additions");
    auto result = g2c::exercises::run_metadata("09_residual_identity", options, device);
    result["config"] = {
        {"embedding_dim", 8}, {"num_heads", 2}, {"hidden_dim", 16}, {"shape", {2, 4, 8}}};
    result["positions"] = {0, 1, 2, 3};
    result["max_change_initialised"] = g2c::exercises::vector_json(moved);
    result["max_change_zeroed"] = g2c::exercises::vector_json(zeroed);
    result["max_abs_difference"] = worst;
    result["identity"] = worst <= 1e-6;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::bar("residual_identity.png", "How far a block moves each position", "position",
                     "max |block(x) - x|")
             .add(Series("as initialised", "/positions", "/max_change_initialised"))
             .add(Series("out_proj and fc2 zeroed", "/positions", "/max_change_zeroed"))});
    const auto path = g2c::exercises::save_result(options, "residual_identity.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_09_residual_identity
