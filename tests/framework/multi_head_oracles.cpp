// Module 08 framework tests: MultiHeadAttention against torch::nn::MultiheadAttention (our four
// projections copied into its packed weights) and at::scaled_dot_product_attention, float64
// gradients, masks combined, the KV cache over many steps, bad input.
#include <limits>
#include <vector>

#include <torch/torch.h>

#include "g2c/attention/multi_head.h"
#include "g2c/attention/scaled_dot_product.h"
#include "g2c/core/errors.h"
#include "torch_test.h"

using g2c::attention::LayerKVCache;
using g2c::attention::MultiHeadAttention;
using g2c::testing::close;
using g2c::testing::max_abs_diff;
using torch::indexing::Slice;

namespace {

/// LibTorch's layer holding exactly our parameters: its weights are (out, in), ours (in, out).
torch::nn::MultiheadAttention torch_copy(MultiHeadAttention& ours) {
  torch::nn::MultiheadAttention theirs(
      torch::nn::MultiheadAttentionOptions(ours->embedding_dim, ours->num_heads));
  theirs->to(ours->q_proj->W.scalar_type());
  torch::NoGradGuard no_grad;
  theirs->in_proj_weight.copy_(
      torch::cat({ours->q_proj->W.t(), ours->k_proj->W.t(), ours->v_proj->W.t()}));
  theirs->in_proj_bias.copy_(torch::cat({ours->q_proj->b, ours->k_proj->b, ours->v_proj->b}));
  theirs->out_proj->weight.copy_(ours->out_proj->W.t());
  theirs->out_proj->bias.copy_(ours->out_proj->b);
  return theirs;
}

}  // namespace

TEST_CASE("multi_head_matches_torch_multihead_attention", "[attention]") {
  const bool causal = GENERATE(true, false);
  const std::int64_t heads = GENERATE(1, 2, 8);
  torch::manual_seed(21);
  MultiHeadAttention ours(16, heads, causal);
  ours->to(torch::kDouble);
  auto theirs = torch_copy(ours);
  const auto x = torch::randn({3, 6, 16}, torch::kDouble);  // (B, T, D)
  const auto xt = x.transpose(0, 1);                        // LibTorch's layout: (T, B, D)
  // LibTorch's C++ layer adds attn_mask to the scores, so it takes -inf where ours says blocked.
  torch::Tensor blocked;
  if (causal) {
    blocked = torch::zeros({6, 6}, torch::kDouble)
                  .masked_fill(g2c::attention::causal_mask(6, torch::kCPU),
                               -std::numeric_limits<double>::infinity());
  }
  auto [their_output, their_weights] =
      theirs->forward(xt, xt, xt, /*key_padding_mask=*/torch::Tensor(), /*need_weights=*/true,
                      /*attn_mask=*/blocked, /*average_attn_weights=*/false);
  const auto our_output = ours(x);
  const auto our_weights = ours->attention_weights(x);  // (B, H, T, T)
  INFO("causal " << causal << ", H " << heads << ", max |output difference| = "
                 << max_abs_diff(our_output, their_output.transpose(0, 1)));
  CHECK(close(our_output, their_output.transpose(0, 1), 1e-12));
  CHECK(close(our_weights, their_weights, 1e-12));
}

TEST_CASE("multi_head_matches_fused_sdpa_per_head", "[attention]") {
  torch::manual_seed(22);
  MultiHeadAttention ours(24, 3);
  const auto x = torch::randn({2, 9, 24});
  auto split = [](const torch::Tensor& t) {
    return t.view({2, 9, 3, 8}).transpose(1, 2);
  };  // (B, H, T, d)
  const auto mixed =
      at::scaled_dot_product_attention(split(ours->q_proj(x)), split(ours->k_proj(x)),
                                       split(ours->v_proj(x)), {}, 0.0, /*is_causal=*/true);
  const auto expected = ours->out_proj(mixed.transpose(1, 2).reshape({2, 9, 24}));
  INFO("max |difference| = " << max_abs_diff(ours(x), expected));
  CHECK(close(ours(x), expected, 1e-5));
}

TEST_CASE("multi_head_float64_gradients_match_finite_differences", "[attention]") {
  torch::manual_seed(23);
  MultiHeadAttention attention(4, 2);
  attention->to(torch::kDouble);
  auto x = torch::randn({1, 3, 4}, torch::kDouble).requires_grad_();
  const auto target = torch::randn({1, 3, 4}, torch::kDouble);
  auto objective = [&] { return (attention(x) - target).pow(2).sum(); };
  std::vector<torch::Tensor> checked = attention->parameters();
  checked.push_back(x);
  g2c::testing::check_gradients(objective, checked, 1e-7);
}

TEST_CASE("padding_and_causal_masks_combine", "[attention]") {
  torch::manual_seed(24);
  const auto q = torch::randn({2, 2, 5, 4}), k = torch::randn({2, 2, 5, 4}),
             v = torch::randn({2, 2, 5, 4});
  auto padding = torch::zeros({2, 1, 1, 5}, torch::kBool);
  padding.index_put_({0, 0, 0, Slice(3, 5)}, true);  // sequence 0 has 3 real tokens
  const auto mask = g2c::attention::causal_mask(5, torch::kCPU) | padding;  // (B, 1, T, T)
  auto [output, weights] = g2c::attention::scaled_dot_product_attention(q, k, v, mask);
  CHECK(weights.index({0, Slice(), Slice(), Slice(3, 5)}).abs().max().item<double>() ==
        0.0);                                                             // no padding key used
  CHECK(weights.triu(/*diagonal=*/1).abs().max().item<double>() == 0.0);  // no future key used
  CHECK(close(weights.sum(-1), torch::ones({2, 2, 5}), 1e-6));
}

TEST_CASE("cross_attention_shapes", "[attention]") {
  const auto q = torch::randn({2, 4, 3, 8});    // 3 queries
  const auto kv = torch::randn({2, 4, 11, 8});  // attend over 11 keys of another sequence
  auto [output, weights] = g2c::attention::scaled_dot_product_attention(q, kv, kv);
  CHECK(output.sizes() == torch::IntArrayRef({2, 4, 3, 8}));
  CHECK(weights.sizes() == torch::IntArrayRef({2, 4, 3, 11}));
}

TEST_CASE("kv_cache_matches_full_forward_over_many_steps", "[attention]") {
  torch::manual_seed(25);
  MultiHeadAttention attention(32, 4);
  const auto x = torch::randn({3, 40, 32});
  const auto full = attention(x);
  LayerKVCache cache;
  double worst = 0.0;
  for (std::int64_t t = 0; t < 40; ++t) {
    const auto step = attention->forward_cached(x.index({Slice(), Slice(t, t + 1)}), cache);
    worst = std::max(worst, max_abs_diff(step, full.index({Slice(), Slice(t, t + 1)})));
  }
  INFO("max |cached - full| over 40 steps = " << worst);
  CHECK(worst < 1e-5);
  CHECK(cache.length() == 40);
  CHECK(cache.k.sizes() == torch::IntArrayRef({3, 4, 40, 8}));
}

// The cache's buffer (g2c/attention/layer_kv_cache.h): the same keys and values as concatenation,
// written in place into room reserved once, copies that do not write into each other, and a cache
// built with gradients that still backpropagates.
TEST_CASE("kv_cache_buffer_holds_what_concatenation_would", "[attention]") {
  torch::NoGradGuard no_grad;
  torch::manual_seed(26);
  const std::int64_t reserved = GENERATE(std::int64_t{0}, std::int64_t{16});
  LayerKVCache cache;
  cache.capacity = reserved;
  std::vector<torch::Tensor> keys, values;
  const void* storage = nullptr;
  bool moved_within_reservation = false;
  for (std::int64_t t = 0; t < 12; ++t) {
    keys.push_back(torch::randn({2, 3, t % 3 == 0 ? 2 : 1, 4}));
    values.push_back(torch::randn_like(keys.back()));
    cache.append(keys.back(), values.back());
    if (storage != nullptr && cache.k.data_ptr() != storage && cache.length() <= reserved) {
      moved_within_reservation = true;
    }
    storage = cache.k.data_ptr();
  }
  CHECK(torch::equal(cache.k, torch::cat(keys, 2)));
  CHECK(torch::equal(cache.v, torch::cat(values, 2)));
  INFO("with room reserved for " << reserved << " positions, appending must not reallocate");
  CHECK_FALSE(moved_within_reservation);
}

TEST_CASE("kv_cache_copies_do_not_write_into_each_other", "[attention]") {
  torch::NoGradGuard no_grad;
  LayerKVCache original;
  original.capacity = 8;
  original.append(torch::zeros({1, 1, 2, 2}), torch::zeros({1, 1, 2, 2}));
  LayerKVCache copy = original;
  original.append(torch::ones({1, 1, 1, 2}), torch::ones({1, 1, 1, 2}));
  copy.append(torch::full({1, 1, 1, 2}, 2.0), torch::full({1, 1, 1, 2}, 2.0));
  CHECK(original.k[0][0][2][0].item<double>() == 1.0);
  CHECK(copy.k[0][0][2][0].item<double>() == 2.0);
}

TEST_CASE("kv_cache_built_with_gradients_backpropagates", "[attention]") {
  torch::manual_seed(27);
  MultiHeadAttention attention(8, 2);
  const auto x = torch::randn({1, 4, 8}, torch::requires_grad());
  LayerKVCache cache;
  cache.capacity = 4;
  torch::Tensor total = torch::zeros({});
  for (std::int64_t t = 0; t < 4; ++t) {
    total = total + attention->forward_cached(x.index({Slice(), Slice(t, t + 1)}), cache).sum();
  }
  CHECK_NOTHROW(total.backward());
  REQUIRE(x.grad().defined());
  const auto expected_x = x.detach().clone().requires_grad_();
  attention(expected_x).sum().backward();
  CHECK(close(x.grad(), expected_x.grad(), 1e-5));
}

TEST_CASE("kv_cache_rejects_mismatched_appends", "[attention]") {
  LayerKVCache cache;
  cache.append(torch::zeros({1, 2, 1, 4}), torch::zeros({1, 2, 1, 4}));
  CHECK_THROWS_AS(cache.append(torch::zeros({1, 3, 1, 4}), torch::zeros({1, 3, 1, 4})),
                  g2c::ValueError);
  CHECK_THROWS_AS(cache.append(torch::zeros({1, 2, 1, 4}, torch::kDouble),
                               torch::zeros({1, 2, 1, 4}, torch::kDouble)),
                  g2c::ValueError);
  CHECK_THROWS_AS(cache.append(torch::zeros({1, 2, 4}), torch::zeros({1, 2, 4})), g2c::ValueError);
  CHECK(cache.length() == 1);
}

TEST_CASE("multi_head_rejects_bad_shapes", "[attention]") {
  MultiHeadAttention attention(8, 2);
  CHECK_THROWS_WITH(attention(torch::randn({2, 5, 6})), Catch::Contains("(B=2, T=5, D=6)"));
  CHECK_THROWS_WITH(MultiHeadAttention(10, 4), Catch::Contains("D=10") && Catch::Contains("H=4"));
}
