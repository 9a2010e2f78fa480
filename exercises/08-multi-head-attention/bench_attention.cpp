// Benchmark: forward + backward time of module 07's SelfAttention and module 08's
// MultiHeadAttention (D = 128, H = 4, B = 8) at several T, next to the same layers with their
// attention core replaced by LibTorch's fused at::scaled_dot_product_attention.
#include <algorithm>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/timing.h"
#include "g2c/attention/multi_head.h"
#include "g2c/attention/self_attention.h"

namespace exercise_08_bench_attention {

namespace {

using g2c::exercises::median_ms;

/// The layer's projections around the fused kernel: (B, T, D) -> (B, T, D) with H heads.
torch::Tensor fused_layer(g2c::nn::Linear& q_proj, g2c::nn::Linear& k_proj, g2c::nn::Linear& v_proj,
                          g2c::nn::Linear& out_proj, const torch::Tensor& x, std::int64_t heads) {
  const auto b = x.size(0), t = x.size(1), d = x.size(2);
  auto split = [&](const torch::Tensor& y) {
    return y.view({b, t, heads, d / heads}).transpose(1, 2);
  };
  const auto mixed = at::scaled_dot_product_attention(split(q_proj(x)), split(k_proj(x)),
                                                      split(v_proj(x)), {}, 0.0,
                                                      /*is_causal=*/true);  // (B, H, T, d)
  return out_proj(mixed.transpose(1, 2).reshape({b, t, d}));
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Forward + backward time of SelfAttention and MultiHeadAttention against the fused kernel"};
  g2c::exercises::CommonOptions options;
  options.out = "results/08-multi-head-attention";
  std::vector<std::int64_t> lengths{256, 1024};
  std::int64_t dim = 128, heads = 4, batch = 8;
  int repeats = 5;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--lengths", lengths, "Sequence lengths T");
  app.add_option("--repeats", repeats, "Timed runs (median kept)").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    g2c::attention::SelfAttention single(dim);
    g2c::attention::MultiHeadAttention multi(dim, heads);
    single->to(device);
    multi->to(device);
    auto sync = [&] {
      if (device.is_cuda()) torch::cuda::synchronize();
    };
    nlohmann::json rows = nlohmann::json::array();
    fmt::print("forward + backward, D = {}, B = {}, median of {} (ms)\n", dim, batch, repeats);
    fmt::print("{:>6} {:>14} {:>14} {:>16} {:>16}\n", "T", "SelfAttention", "fused, H=1",
               "MultiHead H=4", "fused, H=4");
    for (const auto t : lengths) {
      const auto x =
          torch::randn({batch, t, dim}, torch::TensorOptions().device(device)).requires_grad_();
      const double ours_single = median_ms(
          [&] {
            single(x).sum().backward();
            sync();
          },
          repeats);
      const double fused_single = median_ms(
          [&] {
            fused_layer(single->q_proj, single->k_proj, single->v_proj, single->out_proj, x, 1)
                .sum()
                .backward();
            sync();
          },
          repeats);
      const double ours_multi = median_ms(
          [&] {
            multi(x).sum().backward();
            sync();
          },
          repeats);
      const double fused_multi = median_ms(
          [&] {
            fused_layer(multi->q_proj, multi->k_proj, multi->v_proj, multi->out_proj, x, heads)
                .sum()
                .backward();
            sync();
          },
          repeats);
      fmt::print("{:>6} {:>14.1f} {:>14.1f} {:>16.1f} {:>16.1f}\n", t, ours_single, fused_single,
                 ours_multi, fused_multi);
      rows.push_back({{"length", t},
                      {"self_attention_ms", ours_single},
                      {"fused_single_head_ms", fused_single},
                      {"multi_head_ms", ours_multi},
                      {"fused_multi_head_ms", fused_multi}});
    }
    auto result = g2c::exercises::run_metadata("08_bench_attention", options, device);
    result["config"] = {{"embedding_dim", dim}, {"num_heads", heads},
                        {"batch_size", batch},  {"lengths", lengths},
                        {"repeats", repeats},   {"threads", at::get_num_threads()}};
    result["rows"] = rows;
    result["figures"] = nlohmann::json::array();
    g2c::exercises::save_result(options, "bench_attention.json", result);
  });
}

}  // namespace exercise_08_bench_attention
