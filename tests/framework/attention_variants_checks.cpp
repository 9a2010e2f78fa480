// Module 08 framework checks of the attention variants other courses teach (multi_head.h's masked,
// cross-attention and packed paths, g2c/attention/masks.h): against torch::nn::MultiheadAttention
// holding the same weights (attn_mask, key_padding_mask, cross-attention with T_q != T_k, dropout
// in eval), against at::scaled_dot_product_attention for both mask conventions, fully blocked
// rows, dropout statistics, packed QKV against three projections, and bad input. None of them
// calls the student's forward(x) or attention_weights(x): they pass on day one.
#include <cmath>
#include <limits>

#include <torch/torch.h>

#include "g2c/attention/masks.h"
#include "g2c/attention/multi_head.h"
#include "g2c/attention/scaled_dot_product.h"
#include "g2c/core/errors.h"
#include "torch_test.h"

using g2c::attention::causal_mask;
using g2c::attention::combine_masks;
using g2c::attention::fit_mask;
using g2c::attention::MultiHeadAttention;
using g2c::attention::MultiHeadAttentionOptions;
using g2c::attention::padding_mask;
using g2c::testing::close;
using g2c::testing::max_abs_diff;
using torch::indexing::Slice;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A float64 layer with random biases (Linear starts them at zero, which would hide a bias
/// routed to the wrong projection).
MultiHeadAttention make_layer(const MultiHeadAttentionOptions& options) {
  MultiHeadAttention layer(options);
  layer->to(torch::kDouble);
  torch::NoGradGuard no_grad;
  for (auto* linear : {&layer->q_proj, &layer->k_proj, &layer->v_proj, &layer->out_proj}) {
    (*linear)->b.copy_(torch::randn_like((*linear)->b) * 0.1);
  }
  return layer;
}

/// LibTorch's layer holding exactly our parameters: in_proj packs q, k, v as (3D, D) rows, the
/// transpose of our (D, D) columns side by side.
torch::nn::MultiheadAttention torch_copy(MultiHeadAttention& ours, double dropout = 0.0) {
  torch::nn::MultiheadAttention theirs(
      torch::nn::MultiheadAttentionOptions(ours->embedding_dim, ours->num_heads).dropout(dropout));
  theirs->to(torch::kDouble);
  torch::NoGradGuard no_grad;
  const auto [W, b] = ours->pack_qkv();  // (D, 3D), (3D)
  theirs->in_proj_weight.copy_(W.t());
  theirs->in_proj_bias.copy_(b);
  theirs->out_proj->weight.copy_(ours->out_proj->W.t());
  theirs->out_proj->bias.copy_(ours->out_proj->b);
  return theirs;
}

/// LibTorch's float attn_mask is added to the scores: -inf where ours says blocked.
torch::Tensor additive(const torch::Tensor& blocked) {
  return torch::zeros(blocked.sizes(), torch::kDouble).masked_fill(blocked, -kInf);
}

/// {output (B, T_q, D), weights (B, H, T_q, T_k)} of LibTorch's layer, batch-first.
std::pair<torch::Tensor, torch::Tensor> torch_forward(torch::nn::MultiheadAttention& theirs,
                                                      const torch::Tensor& x_q,
                                                      const torch::Tensor& x_kv,
                                                      const torch::Tensor& key_padding = {},
                                                      const torch::Tensor& attn_mask = {}) {
  const auto q = x_q.transpose(0, 1), kv = x_kv.transpose(0, 1);  // LibTorch's (T, B, D)
  auto [output, weights] = theirs->forward(q, kv, kv, key_padding, /*need_weights=*/true, attn_mask,
                                           /*average_attn_weights=*/false);
  return {output.transpose(0, 1), weights};
}

/// The lesson's computation with three separate projections, on raw parameters: x (B, T, D) ->
/// (B, T, D) through the course's scaled_dot_product_attention with `blocked`.
torch::Tensor three_projections(MultiHeadAttention& layer, const torch::Tensor& x,
                                const torch::Tensor& blocked) {
  const auto B = x.size(0), T = x.size(1), H = layer->num_heads, d = layer->head_dim;
  auto heads = [&](const g2c::nn::Linear& proj) {  // (B, T, D) -> (B, H, T, d)
    return (torch::matmul(x, proj->W) + proj->b).view({B, T, H, d}).transpose(1, 2);
  };
  const auto mixed = g2c::attention::scaled_dot_product_attention(
                         heads(layer->q_proj), heads(layer->k_proj), heads(layer->v_proj), blocked)
                         .first;  // (B, H, T, d)
  const auto merged = mixed.transpose(1, 2).reshape({B, T, H * d});
  return torch::matmul(merged, layer->out_proj->W) + layer->out_proj->b;
}

}  // namespace

TEST_CASE("masked_forward_matches_torch_multihead_attention", "[attention][variants]") {
  const bool causal = GENERATE(false, true);
  const int layout = GENERATE(2, 3, 4);  // the mask as (T, T), (B, T, T) or (B, 1, T, T)
  torch::manual_seed(31);
  const std::int64_t B = 3, T = 6, D = 16, H = 4;
  auto ours = make_layer(MultiHeadAttentionOptions(D, H).causal(causal));
  auto theirs = torch_copy(ours);
  const auto x = torch::randn({B, T, D}, torch::kDouble);
  // A random pattern that never blocks the diagonal, so that no row is fully blocked (LibTorch
  // gives NaN there).
  const auto pattern = (torch::rand({B, T, T}) < 0.4) & ~torch::eye(T, torch::kBool);  // (B,T,T)
  const auto mask = layout == 2 ? pattern[0] : layout == 3 ? pattern : pattern.unsqueeze(1);
  auto full = layout == 2 ? pattern[0].expand({B, T, T}) : pattern;  // (B, T, T)
  if (causal) full = full | causal_mask(T, torch::kCPU);
  // LibTorch's C++ layer takes a (T, T) attn_mask only: one call per sequence, with its pattern.
  std::vector<torch::Tensor> outputs, weights;
  for (std::int64_t b = 0; b < B; ++b) {
    const auto x_b = x.index({Slice(b, b + 1)});  // (1, T, D)
    auto [output_b, weights_b] = torch_forward(theirs, x_b, x_b, {}, additive(full[b]));
    outputs.push_back(output_b);
    weights.push_back(weights_b);
  }
  const auto expected = torch::cat(outputs), expected_weights = torch::cat(weights);
  const auto output = ours->forward_masked(x, mask);
  INFO("causal " << causal << ", mask layout " << layout
                 << "-D, max |difference| = " << max_abs_diff(output, expected));
  CHECK(close(output, expected, 1e-12));
  CHECK(close(ours->attention_weights_masked(x, mask), expected_weights, 1e-12));
}

TEST_CASE("key_padding_mask_matches_torch_multihead_attention", "[attention][variants]") {
  const bool causal = GENERATE(false, true);
  torch::manual_seed(32);
  const std::int64_t B = 3, T = 6, D = 12, H = 3;
  auto ours = make_layer(MultiHeadAttentionOptions(D, H).causal(causal));
  auto theirs = torch_copy(ours);
  const auto x = torch::randn({B, T, D}, torch::kDouble);
  const auto lengths = torch::tensor({6, 4, 1}, torch::kLong);
  const auto padding = padding_mask(lengths, T);  // (B, 1, 1, T)
  const auto [expected, expected_weights] =
      torch_forward(theirs, x, x, /*key_padding=*/padding.view({B, T}),
                    causal ? additive(causal_mask(T, torch::kCPU)) : torch::Tensor());
  const auto output = ours->forward_masked(x, padding);
  INFO("causal " << causal << ", max |difference| = " << max_abs_diff(output, expected));
  CHECK(close(output, expected, 1e-12));
  CHECK(close(ours->attention_weights_masked(x, padding), expected_weights, 1e-12));
  // The 0/1 convention (1 = attend), float and integer, converts to the same mask.
  CHECK(torch::equal(ours->forward_masked(x, (~padding).to(torch::kDouble)), output));
  CHECK(torch::equal(ours->forward_masked(x, (~padding).to(torch::kInt)), output));
}

TEST_CASE("cross_attention_matches_torch_multihead_attention", "[attention][variants]") {
  const int masking = GENERATE(0, 1, 2);  // none, key padding, a (T_q, T_k) pattern
  torch::manual_seed(33);
  const std::int64_t B = 3, T_q = 3, T_k = 7, D = 16, H = 2;
  // A causal layer: cross-attention ignores it (queries and keys are different sequences).
  auto ours = make_layer(MultiHeadAttentionOptions(D, H).causal(true));
  auto theirs = torch_copy(ours);
  const auto x_q = torch::randn({B, T_q, D}, torch::kDouble);
  const auto x_kv = torch::randn({B, T_k, D}, torch::kDouble);
  torch::Tensor mask, key_padding, attn_mask;
  if (masking == 1) {
    mask = padding_mask(torch::tensor({7, 5, 2}, torch::kLong), T_k);  // (B, 1, 1, T_k)
    key_padding = mask.view({B, T_k});
  } else if (masking == 2) {
    mask = (torch::rand({T_q, T_k}) < 0.5).index_put_({Slice(), 0}, false);  // key 0 always open
    attn_mask = additive(mask);
  }
  const auto [expected, expected_weights] =
      torch_forward(theirs, x_q, x_kv, key_padding, attn_mask);
  const auto output = ours->forward_cross(x_q, x_kv, mask);
  REQUIRE(output.sizes() == torch::IntArrayRef({B, T_q, D}));
  INFO("masking " << masking << ", max |difference| = " << max_abs_diff(output, expected));
  CHECK(close(output, expected, 1e-12));
  const auto weights = ours->attention_weights_cross(x_q, x_kv, mask);
  CHECK(weights.sizes() == torch::IntArrayRef({B, H, T_q, T_k}));
  CHECK(close(weights, expected_weights, 1e-12));
}

TEST_CASE("attention_dropout_in_eval_matches_torch_multihead_attention", "[attention][variants]") {
  torch::manual_seed(34);
  const std::int64_t B = 2, T = 5, D = 8, H = 2;
  auto ours = make_layer(MultiHeadAttentionOptions(D, H).causal(false).dropout(0.3));
  auto theirs = torch_copy(ours, /*dropout=*/0.3);
  ours->eval();
  theirs->eval();
  const auto x = torch::randn({B, T, D}, torch::kDouble);
  const auto padding = padding_mask(torch::tensor({5, 3}, torch::kLong), T);
  const auto expected = torch_forward(theirs, x, x, padding.view({B, T})).first;
  CHECK(close(ours->forward_masked(x, padding), expected, 1e-12));
}

TEST_CASE("mask_conventions_match_fused_sdpa", "[attention][variants]") {
  torch::manual_seed(35);
  const std::int64_t B = 2, H = 2, T = 5, d = 4;
  const auto q = torch::randn({B, H, T, d}, torch::kDouble);
  const auto k = torch::randn({B, H, T, d}, torch::kDouble);
  const auto v = torch::randn({B, H, T, d}, torch::kDouble);
  // 1 = attend; the diagonal always, so that the fused kernel has no empty row.
  const auto attend = (torch::rand({B, 1, T, T}) < 0.6) | torch::eye(T, torch::kBool);
  // at::scaled_dot_product_attention's boolean mask says true = attend: the other convention.
  const auto expected = at::scaled_dot_product_attention(q, k, v, attend);
  const std::vector<std::pair<const char*, torch::Tensor>> conventions = {
      {"boolean, true = blocked", ~attend},
      {"float64 0/1", attend.to(torch::kDouble)},
      {"float32 0/1", attend.to(torch::kFloat)},
      {"int64 0/1", attend.to(torch::kLong)},
      {"boolean (B, T, T)", ~attend.squeeze(1)}};
  for (const auto& [name, mask] : conventions) {
    INFO(name);
    const auto output =
        g2c::attention::scaled_dot_product_attention(q, k, v, fit_mask(mask, B, T, T)).first;
    CHECK(close(output, expected, 1e-12));
  }
  // A (T, T) pattern broadcast over the batch, in both conventions.
  const auto pattern = attend[0][0];  // (T, T)
  const auto expected_2d = at::scaled_dot_product_attention(q, k, v, pattern);
  CHECK(close(
      g2c::attention::scaled_dot_product_attention(q, k, v, fit_mask(~pattern, B, T, T)).first,
      expected_2d, 1e-12));
  CHECK(close(g2c::attention::scaled_dot_product_attention(
                  q, k, v, fit_mask(pattern.to(torch::kDouble), B, T, T))
                  .first,
              expected_2d, 1e-12));
}

TEST_CASE("fully_masked_rows_give_zeros_not_nan", "[attention][variants]") {
  torch::manual_seed(36);
  const std::int64_t B = 2, T = 4, D = 8, H = 2;
  auto layer = make_layer(MultiHeadAttentionOptions(D, H).causal(false));
  const auto x = torch::randn({B, T, D}, torch::kDouble).requires_grad_();

  SECTION("a sequence of length 0: every key of it is padding") {
    const auto mask = padding_mask(torch::tensor({4, 0}, torch::kLong), T);
    const auto output = layer->forward_masked(x, mask);
    const auto weights = layer->attention_weights_masked(x, mask);
    CHECK(torch::isfinite(output).all().item<bool>());
    CHECK(weights[1].abs().max().item<double>() == 0.0);  // zero weights
    // A zero mix: the layer's output is out_proj's bias there, exactly.
    CHECK(torch::equal(output[1].detach(), layer->out_proj->b.detach().expand({T, D})));
    output.pow(2).sum().backward();
    for (const auto& p : layer->parameters()) CHECK(torch::isfinite(p.grad()).all().item<bool>());
    CHECK(torch::isfinite(x.grad()).all().item<bool>());
  }

  SECTION("padding queries blocked too: their rows are empty, the real ones unchanged") {
    const auto keys = padding_mask(torch::tensor({4, 2}, torch::kLong), T);  // (B, 1, 1, T)
    const auto both = combine_masks(keys, keys.transpose(-1, -2));           // (B, 1, T, T)
    REQUIRE(both.sizes() == torch::IntArrayRef({B, 1, T, T}));
    const auto output = layer->forward_masked(x, both);
    CHECK(torch::isfinite(output).all().item<bool>());
    CHECK(layer->attention_weights_masked(x, both)
              .index({1, Slice(), Slice(2, T)})
              .abs()
              .max()
              .item<double>() == 0.0);
    CHECK(close(output.index({1, Slice(2, T)}), layer->out_proj->b.expand({2, D}), 0.0));
    CHECK(close(output.index({1, Slice(0, 2)}),
                layer->forward_masked(x, keys).index({1, Slice(0, 2)}), 1e-12));
  }
}

TEST_CASE("attention_dropout_is_identity_in_eval", "[attention][variants]") {
  torch::manual_seed(37);
  auto layer = make_layer(MultiHeadAttentionOptions(8, 2).dropout(0.5));
  const auto x = torch::randn({2, 6, 8}, torch::kDouble);
  layer->eval();
  const auto with_dropout = layer->forward_masked(x, torch::Tensor());
  const auto weights = layer->attention_weights_masked(x, torch::Tensor());
  layer->options.dropout(0.0);
  CHECK(torch::equal(with_dropout, layer->forward_masked(x, torch::Tensor())));
  layer->train();  // p = 0 in training: no draw at all
  CHECK(torch::equal(weights, layer->attention_weights_masked(x, torch::Tensor())));
}

TEST_CASE("attention_dropout_statistics_in_training", "[attention][variants]") {
  torch::manual_seed(38);
  const double p = 0.25;
  const std::int64_t B = 64, T = 16, D = 16, H = 4;
  auto layer = make_layer(MultiHeadAttentionOptions(D, H).causal(false).dropout(p));
  const auto x = torch::randn({B, T, D}, torch::kDouble);
  layer->eval();
  const auto clean = layer->attention_weights_masked(x, torch::Tensor());  // (B, H, T, T), all > 0
  layer->train();
  const auto dropped = layer->attention_weights_masked(x, torch::Tensor());
  const auto zeroed = (dropped == 0);
  const double rate = zeroed.to(torch::kDouble).mean().item<double>();
  INFO("zeroed " << rate << " of " << dropped.numel() << " weights, expected " << p);
  CHECK(std::abs(rate - p) < 0.01);  // ~6 standard deviations at 65,536 draws
  // The survivors are scaled by 1 / (1 - p), so the mean weight (1 / T) is preserved.
  CHECK(close(dropped.masked_select(~zeroed), clean.masked_select(~zeroed) / (1.0 - p), 1e-12));
  const double mean_row_sum = dropped.sum(-1).mean().item<double>();
  INFO("mean row sum " << mean_row_sum);
  CHECK(std::abs(mean_row_sum - 1.0) < 0.01);
  CHECK_FALSE(
      torch::equal(dropped, layer->attention_weights_masked(x, torch::Tensor())));  // fresh draws

  // The output averaged over many draws approaches the output without dropout.
  const auto small = x.index({Slice(0, 4)});
  layer->eval();
  const auto expected = layer->forward_masked(small, torch::Tensor());
  layer->train();
  const auto one_draw = max_abs_diff(layer->forward_masked(small, torch::Tensor()), expected);
  auto sum = torch::zeros_like(expected);
  const int draws = 400;
  for (int i = 0; i < draws; ++i) sum += layer->forward_masked(small, torch::Tensor()).detach();
  const double averaged = max_abs_diff(sum / draws, expected);
  INFO("max |output - eval output|: one draw " << one_draw << ", mean of " << draws << " draws "
                                               << averaged);
  CHECK(averaged < one_draw / 5);
}

TEST_CASE("packed_qkv_equals_three_projections", "[attention][variants]") {
  torch::manual_seed(39);
  const std::int64_t B = 2, T = 7, D = 12, H = 3;
  auto layer = make_layer(MultiHeadAttentionOptions(D, H));
  const auto x = torch::randn({B, T, D}, torch::kDouble);
  const auto [W, b] = layer->pack_qkv();
  REQUIRE(W.sizes() == torch::IntArrayRef({D, 3 * D}));
  REQUIRE(b.sizes() == torch::IntArrayRef({3 * D}));

  // nanoGPT's c_attn: Linear(D, 3D), then split in three along the features.
  torch::nn::Linear c_attn(D, 3 * D);
  c_attn->to(torch::kDouble);
  {
    torch::NoGradGuard no_grad;
    c_attn->weight.copy_(W.t());
    c_attn->bias.copy_(b);
  }
  const auto qkv = c_attn(x).split(D, /*dim=*/-1);
  const std::vector<g2c::nn::Linear> projections = {layer->q_proj, layer->k_proj, layer->v_proj};
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("chunk " << i);
    CHECK(close(qkv[i], torch::matmul(x, projections[i]->W) + projections[i]->b, 1e-12));
  }

  // The packed forward against the lesson's three projections, values and gradients.
  const auto blocked = causal_mask(T, torch::kCPU);
  const auto packed = layer->forward_masked(x, torch::Tensor());
  INFO("max |packed - three projections| = " << max_abs_diff(packed,
                                                             three_projections(layer, x, blocked)));
  CHECK(close(packed, three_projections(layer, x, blocked), 1e-12));
  packed.pow(2).sum().backward();
  std::vector<torch::Tensor> packed_grads;
  for (const auto& param : layer->parameters()) {
    packed_grads.push_back(param.grad().clone());
    param.grad().zero_();
  }
  three_projections(layer, x, blocked).pow(2).sum().backward();
  const auto params = layer->parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    INFO("parameter " << i);
    CHECK(close(packed_grads[i], params[i].grad(), 1e-12));
  }

  // load_packed_qkv is the inverse.
  auto other = make_layer(MultiHeadAttentionOptions(D, H));
  other->load_packed_qkv(W, b);
  const auto [W2, b2] = other->pack_qkv();
  CHECK(torch::equal(W2, W));
  CHECK(torch::equal(b2, b));
}

TEST_CASE("padding_mask_and_combine_masks", "[attention][variants]") {
  const auto lengths = torch::tensor({3, 1, 0}, torch::kLong);
  const auto mask = padding_mask(lengths, 4);
  REQUIRE(mask.sizes() == torch::IntArrayRef({3, 1, 1, 4}));
  const auto expected = torch::tensor({0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1}).to(torch::kBool);
  CHECK(torch::equal(mask.reshape({-1}), expected));
  const auto ids = torch::tensor({{5, 7, 2, 0}, {9, 0, 0, 0}, {0, 0, 0, 0}}, torch::kLong);
  CHECK(torch::equal(g2c::attention::padding_mask_from_ids(ids, /*pad_id=*/0), mask));

  // causal | padding: the decoder mask of a padded batch, (B, 1, T, T).
  const auto causal = causal_mask(4, torch::kCPU);
  const auto combined = combine_masks(causal, mask);
  REQUIRE(combined.sizes() == torch::IntArrayRef({3, 1, 4, 4}));
  CHECK(torch::equal(combined, causal.expand({3, 1, 4, 4}) | mask.expand({3, 1, 4, 4})));
  // A (B, T, T) mask meets a key mask batch to batch, not batch to head.
  const auto per_batch = torch::zeros({3, 4, 4}, torch::kBool);
  CHECK(combine_masks(per_batch, mask).sizes() == torch::IntArrayRef({3, 1, 4, 4}));
  CHECK(torch::equal(combine_masks(per_batch, mask), mask.expand({3, 1, 4, 4})));
  // 0/1 in, course convention out; an undefined side passes the other through.
  CHECK(torch::equal(combine_masks((~causal).to(torch::kFloat), torch::Tensor()), causal));
  CHECK_FALSE(combine_masks(torch::Tensor(), torch::Tensor()).defined());
  CHECK_THROWS_WITH(combine_masks(torch::zeros({4, 5}, torch::kBool), mask),
                    Catch::Contains("(4, 5)") && Catch::Contains("(3, 1, 1, 4)"));
}

TEST_CASE("attention_variants_reject_bad_input", "[attention][variants]") {
  auto layer = make_layer(MultiHeadAttentionOptions(8, 2));
  const auto x = torch::randn({2, 5, 8}, torch::kDouble);
  // A mask of the wrong shape: both shapes in the message.
  CHECK_THROWS_AS(layer->forward_masked(x, torch::zeros({5, 4}, torch::kBool)), g2c::ValueError);
  CHECK_THROWS_WITH(layer->forward_masked(x, torch::zeros({5, 4}, torch::kBool)),
                    Catch::Contains("(5, 4)") && Catch::Contains("(B=2, T=5, D=8)"));
  CHECK_THROWS_WITH(layer->forward_masked(x, torch::zeros({3, 5, 5}, torch::kBool)),
                    Catch::Contains("(3, 5, 5)") && Catch::Contains("(B=2, T=5, D=8)"));
  CHECK_THROWS_WITH(layer->forward_masked(x, torch::zeros({2, 2, 5, 5}, torch::kBool)),
                    Catch::Contains("(2, 2, 5, 5)"));
  // A (B, T) key padding mask as LibTorch takes it: refused, it is not a (T_q, T_k) pattern.
  CHECK_THROWS_AS(layer->forward_masked(x, torch::zeros({2, 5}, torch::kBool)), g2c::ValueError);
  // Float masks hold 0 and 1 only; additive masks are named as such; uint8 is ambiguous.
  CHECK_THROWS_WITH(layer->forward_masked(x, torch::full({5, 5}, 0.5)),
                    Catch::Contains("only 0 and 1"));
  const auto additive_mask = additive(causal_mask(5, torch::kCPU));
  CHECK_THROWS_WITH(layer->forward_masked(x, additive_mask), Catch::Contains("additive"));
  CHECK_THROWS_AS(layer->forward_masked(x, torch::ones({5, 5}, torch::kByte)), g2c::ValueError);
  // Cross-attention: batch sizes differ, or the wrong D.
  CHECK_THROWS_WITH(
      layer->forward_cross(x, torch::randn({3, 7, 8}, torch::kDouble), torch::Tensor()),
      Catch::Contains("(B=2, T_q=5, D=8)") && Catch::Contains("(B=3, T_k=7, D=8)"));
  CHECK_THROWS_AS(layer->forward_cross(x, torch::randn({2, 7, 6}, torch::kDouble), torch::Tensor()),
                  g2c::ValueError);
  CHECK_THROWS_WITH(layer->forward_cross(x, torch::randn({2, 7, 8}, torch::kDouble),
                                         torch::zeros({5, 5}, torch::kBool)),
                    Catch::Contains("(5, 5)") && Catch::Contains("T_k=7"));
  // padding_mask: lengths out of range, or not integers.
  CHECK_THROWS_AS(padding_mask(torch::tensor({6}, torch::kLong), 5), g2c::ValueError);
  CHECK_THROWS_AS(padding_mask(torch::tensor({-1}, torch::kLong), 5), g2c::ValueError);
  CHECK_THROWS_AS(padding_mask(torch::tensor({2.0}), 5), g2c::ValueError);
  // Dropout outside [0, 1); a packed weight of the wrong shape.
  layer->options.dropout(1.0);
  CHECK_THROWS_WITH(layer->forward_masked(x, torch::Tensor()), Catch::Contains("dropout"));
  layer->options.dropout(0.0);
  CHECK_THROWS_AS(layer->load_packed_qkv(torch::zeros({8, 8}), torch::zeros({24})),
                  g2c::ValueError);
}
