// Module 07 framework tests: SelfAttention and scaled_dot_product_attention against LibTorch's
// fused at::scaled_dot_product_attention, float64 gradients, permutation equivariance, the
// quadratic weights tensor, bad input and devices.
#include <cmath>

#include <torch/torch.h>

#include "g2c/attention/scaled_dot_product.h"
#include "g2c/attention/self_attention.h"
#include "g2c/core/errors.h"
#include "torch_test.h"

using g2c::attention::SelfAttention;
using g2c::testing::close;
using g2c::testing::max_abs_diff;

namespace {

/// The layer's computation redone with LibTorch's fused attention and the layer's own projections.
torch::Tensor fused_reference(SelfAttention& attention, const torch::Tensor& x) {
  const auto q = attention->q_proj(x), k = attention->k_proj(x), v = attention->v_proj(x);
  const auto mixed = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0,
                                                      /*is_causal=*/attention->causal);
  return attention->out_proj(mixed);
}

}  // namespace

TEST_CASE("self_attention_matches_fused_sdpa", "[attention]") {
  const bool causal = GENERATE(true, false);
  const auto dtype = GENERATE(torch::kFloat, torch::kDouble);
  torch::manual_seed(11);
  SelfAttention attention(16, causal);
  attention->to(dtype);
  const auto x = torch::randn({3, 7, 16}, dtype);
  const auto ours = attention(x);
  const auto theirs = fused_reference(attention, x);
  const double difference = max_abs_diff(ours, theirs);
  INFO("causal " << causal << ", dtype " << dtype << ", max |difference| = " << difference);
  CHECK(difference < (dtype == torch::kDouble ? 1e-12 : 1e-5));
}

TEST_CASE("self_attention_float64_gradients_match_finite_differences", "[attention]") {
  torch::manual_seed(12);
  SelfAttention attention(4);
  attention->to(torch::kDouble);
  auto x = torch::randn({2, 3, 4}, torch::kDouble).requires_grad_();
  const auto target = torch::randn({2, 3, 4}, torch::kDouble);
  auto objective = [&] { return (attention(x) - target).pow(2).sum(); };
  std::vector<torch::Tensor> checked = attention->parameters();
  checked.push_back(x);
  g2c::testing::check_gradients(objective, checked, 1e-7);
}

TEST_CASE("non_causal_attention_is_permutation_equivariant_until_positions_are_added",
          "[attention]") {
  torch::manual_seed(13);
  SelfAttention attention(8, /*causal=*/false);
  const auto x = torch::randn({1, 6, 8});
  const auto permutation = torch::tensor({3, 0, 5, 1, 4, 2}, torch::kLong);
  const auto permuted_output = attention(x.index_select(1, permutation));
  const auto output_permuted = attention(x).index_select(1, permutation);
  INFO("max |difference| without positions = " << max_abs_diff(permuted_output, output_permuted));
  CHECK(close(permuted_output, output_permuted, 1e-6));

  // A positional table added to the input ties each vector to its slot: equivariance breaks.
  const auto positions = torch::randn({1, 6, 8});
  const auto with_positions = attention(x.index_select(1, permutation) + positions);
  const auto expected_if_equivariant = attention(x + positions).index_select(1, permutation);
  CHECK(max_abs_diff(with_positions, expected_if_equivariant) > 1e-3);
}

TEST_CASE("attention_weights_grow_quadratically_with_length", "[attention]") {
  SelfAttention attention(8);
  for (const std::int64_t length : {16, 64, 256}) {
    const auto weights = attention->attention_weights(torch::randn({2, length, 8}));
    CHECK(weights.numel() == 2 * length * length);
  }
}

TEST_CASE("self_attention_rejects_bad_shapes_with_the_shapes", "[attention]") {
  SelfAttention attention(4);
  CHECK_THROWS_AS(attention(torch::randn({5, 4})), g2c::ValueError);
  CHECK_THROWS_WITH(attention(torch::randn({2, 5, 6})),
                    Catch::Contains("(B=2, T=5, D=6)") && Catch::Contains("D=4"));
  CHECK_THROWS_AS(attention->attention_weights(torch::randn({2, 5, 6})), g2c::ValueError);
  CHECK_THROWS_AS(SelfAttention(0), g2c::ValueError);
}

TEST_CASE("sdpa_function_matches_fused_with_masks_and_cross_attention", "[attention]") {
  torch::manual_seed(14);
  const auto q = torch::randn({2, 3, 5, 4}, torch::kDouble);  // (B, H, T_q, d)
  const auto k = torch::randn({2, 3, 7, 4}, torch::kDouble);  // (B, H, T_k, d)
  const auto v = torch::randn({2, 3, 7, 6}, torch::kDouble);  // (B, H, T_k, d_v)
  auto padding =
      torch::zeros({2, 1, 1, 7}, torch::kBool);  // batch 1: its last two keys are padding
  padding.index_put_({1, 0, 0, torch::indexing::Slice(5, 7)}, true);
  const auto square = torch::rand({5, 7}) > 0.7;
  for (const auto& mask : {torch::Tensor(), square, square.expand({2, 5, 7}).contiguous(),
                           (square.expand({2, 1, 5, 7}) | padding).contiguous()}) {
    auto [ours, weights] = g2c::attention::scaled_dot_product_attention(q, k, v, mask);
    CHECK(ours.sizes() == torch::IntArrayRef({2, 3, 5, 6}));
    CHECK(weights.sizes() == torch::IntArrayRef({2, 3, 5, 7}));
    // at:: takes a mask where true = may attend; ours is true = blocked.
    torch::Tensor allowed;
    if (mask.defined()) allowed = (mask.dim() == 3 ? mask.unsqueeze(1) : mask).logical_not();
    const auto fully_blocked = mask.defined()
                                   ? (mask.dim() == 3 ? mask.unsqueeze(1) : mask).all(-1, true)
                                   : torch::zeros({1}, torch::kBool);
    auto theirs = allowed.defined() ? at::scaled_dot_product_attention(q, k, v, allowed)
                                    : at::scaled_dot_product_attention(q, k, v);
    theirs =
        theirs.masked_fill(fully_blocked, 0.0);  // the fused kernel gives NaN there; ours gives 0
    INFO("mask " << (mask.defined() ? mask.sizes() : torch::IntArrayRef{})
                 << ", max |difference| = " << max_abs_diff(ours, theirs));
    CHECK(close(ours, theirs, 1e-12));
  }
}

TEST_CASE("sdpa_fully_masked_row_gives_zeros_not_nan", "[attention]") {
  auto q = torch::randn({1, 3, 4}, torch::kDouble).requires_grad_();
  const auto k = torch::randn({1, 3, 4}, torch::kDouble);
  const auto v = torch::randn({1, 3, 4}, torch::kDouble);
  auto mask = torch::zeros({3, 3}, torch::kBool);
  mask[1].fill_(true);  // query 1 may look nowhere
  auto [output, weights] = g2c::attention::scaled_dot_product_attention(q, k, v, mask);
  CHECK(torch::isfinite(output).all().item<bool>());
  CHECK(output[0][1].abs().max().item<double>() == 0.0);
  CHECK(weights[0][1].abs().max().item<double>() == 0.0);
  CHECK(weights[0][0].sum().item<double>() == Approx(1.0));
  output.sum().backward();
  CHECK(torch::isfinite(q.grad()).all().item<bool>());
}

TEST_CASE("sdpa_rejects_mismatched_inputs", "[attention]") {
  const auto q = torch::randn({2, 5, 4});
  CHECK_THROWS_AS(g2c::attention::scaled_dot_product_attention(q, torch::randn({2, 5, 3}),
                                                               torch::randn({2, 5, 4})),
                  g2c::ValueError);
  CHECK_THROWS_AS(g2c::attention::scaled_dot_product_attention(q, q, q, torch::zeros({5, 5})),
                  g2c::ValueError);
  CHECK_THROWS_WITH(
      g2c::attention::scaled_dot_product_attention(q, q, q, torch::zeros({4, 5}, torch::kBool)),
      Catch::Contains("T_q=5"));
}

TEST_CASE("self_attention_cpu_and_cuda_agree", "[attention]") {
  if (!torch::cuda::is_available()) G2C_SKIP("CUDA is not available on this machine");
  torch::manual_seed(15);
  SelfAttention attention(32);
  const auto x = torch::randn({4, 64, 32});
  const auto on_cpu = attention(x);
  attention->to(torch::Device(torch::kCUDA));
  const auto on_cuda = attention(x.to(torch::kCUDA)).cpu();
  INFO("max |difference| = " << max_abs_diff(on_cpu, on_cuda));
  CHECK(close(on_cpu, on_cuda, 1e-4));
}
