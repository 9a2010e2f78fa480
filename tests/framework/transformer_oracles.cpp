// Module 09 framework tests: LayerNorm against torch::layer_norm, the FFN's exact GELU against
// torch::gelu and the erf formula, a Block against a float64 oracle written from the formulas,
// float64 gradient checks, cached generation against the full forward, the parameter count in
// closed form and in the Python order, tying, save/load, CPU vs CUDA, bad input.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/transformer/block.h"
#include "g2c/transformer/ffn.h"
#include "g2c/transformer/kv_cache.h"
#include "g2c/transformer/layer_norm.h"
#include "g2c/transformer/transformer_lm.h"
#include "torch_test.h"

using g2c::attention::LayerKVCache;
using g2c::testing::close;
using g2c::testing::max_abs_diff;
using g2c::transformer::Block;
using g2c::transformer::BlockOptions;
using g2c::transformer::FeedForward;
using g2c::transformer::KVCache;
using g2c::transformer::LayerNorm;
using g2c::transformer::LayerNormOptions;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;

namespace {

// ---- Oracles written from the formulas, in float64 --------------------------------------------

torch::Tensor oracle_layer_norm(const torch::Tensor& x, const torch::Tensor& gamma,
                                const torch::Tensor& beta, double eps) {
  const double d = static_cast<double>(x.size(-1));
  const auto centered = x - x.sum(-1, /*keepdim=*/true) / d;
  const auto var = (centered * centered).sum(-1, /*keepdim=*/true) / d;
  return centered / (var + eps).sqrt() * gamma + beta;
}

torch::Tensor oracle_gelu(const torch::Tensor& h) {
  return 0.5 * h * (1.0 + torch::erf(h / std::sqrt(2.0)));
}

torch::Tensor oracle_softmax(const torch::Tensor& scores) {
  const auto shifted = scores - std::get<0>(scores.max(-1, /*keepdim=*/true));
  const auto e = shifted.exp();
  return e / e.sum(-1, /*keepdim=*/true);
}

/// Multi-head attention one head at a time, on column slices of the projections.
torch::Tensor oracle_attention(const torch::Tensor& x, g2c::attention::MultiHeadAttention& attn) {
  const auto b = x.size(0), t = x.size(1), d_model = x.size(2);
  const auto heads = attn->num_heads, d = d_model / heads;
  const auto q = x.matmul(attn->q_proj->W) + attn->q_proj->b;  // (B, T, D)
  const auto k = x.matmul(attn->k_proj->W) + attn->k_proj->b;
  const auto v = x.matmul(attn->v_proj->W) + attn->v_proj->b;
  auto blocked = torch::zeros({t, t}, torch::kBool);
  for (std::int64_t i = 0; i < t; ++i) {
    for (std::int64_t j = i + 1; j < t; ++j) blocked[i][j] = attn->causal;
  }
  std::vector<torch::Tensor> per_head;
  for (std::int64_t h = 0; h < heads; ++h) {
    const auto qh = q.narrow(-1, h * d, d), kh = k.narrow(-1, h * d, d),
               vh = v.narrow(-1, h * d, d);
    auto scores = qh.bmm(kh.transpose(1, 2)) / std::sqrt(static_cast<double>(d));  // (B, T, T)
    scores = scores.masked_fill(blocked, -std::numeric_limits<double>::infinity());
    per_head.push_back(oracle_softmax(scores).bmm(vh));  // (B, T, d)
  }
  (void)b;
  return torch::cat(per_head, -1).matmul(attn->out_proj->W) + attn->out_proj->b;
}

torch::Tensor oracle_block(const torch::Tensor& x, Block& block) {
  const auto h = x + oracle_attention(
                         oracle_layer_norm(x, block->ln1->gamma, block->ln1->beta, block->ln1->eps),
                         block->attn);
  const auto n2 = oracle_layer_norm(h, block->ln2->gamma, block->ln2->beta, block->ln2->eps);
  const auto& ffn = block->ffn;
  return h + oracle_gelu(n2.matmul(ffn->fc1->W) + ffn->fc1->b).matmul(ffn->fc2->W) + ffn->fc2->b;
}

/// Every parameter set to random values (LayerNorm's ones and zeros would hide swapped roles).
void randomize(torch::nn::Module& module, double scale = 0.5) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) p.copy_(torch::randn_like(p) * scale);
}

std::int64_t numel(const std::vector<torch::Tensor>& parameters) {
  std::int64_t total = 0;
  for (const auto& p : parameters) total += p.numel();
  return total;
}

/// Greedy decoding of `count` tokens after `prompt` (1, P), recomputing the full forward each step.
std::vector<std::int64_t> greedy_full(TransformerLM& model, std::vector<std::int64_t> tokens,
                                      std::int64_t count) {
  torch::NoGradGuard no_grad;
  for (std::int64_t i = 0; i < count; ++i) {
    const auto ids = torch::tensor(tokens, torch::kLong).unsqueeze(0).to(model->device());
    tokens.push_back(model(ids)[0][-1].argmax().item<std::int64_t>());
  }
  return tokens;
}

/// The same with forward_cached: the prompt fed one token at a time, then one step per new token.
std::vector<std::int64_t> greedy_cached(TransformerLM& model, std::vector<std::int64_t> tokens,
                                        std::int64_t count) {
  torch::NoGradGuard no_grad;
  auto cache = model->empty_kv_cache();
  torch::Tensor logits;
  const auto step = [&](std::int64_t token) {
    const auto ids = torch::tensor({token}, torch::kLong).view({1, 1}).to(model->device());
    logits = model->forward_cached(ids, cache);  // (1, 1, V)
  };
  for (const auto token : tokens) step(token);
  for (std::int64_t i = 0; i < count; ++i) {
    tokens.push_back(logits[0][0].argmax().item<std::int64_t>());
    if (i + 1 < count) step(tokens.back());
  }
  return tokens;
}

}  // namespace

// ---- LayerNorm and the FFN against LibTorch ---------------------------------------------------

TEST_CASE("layer_norm_matches_torch_layer_norm", "[transformer]") {
  const auto dtype = GENERATE(torch::kFloat, torch::kDouble);
  const auto shape = GENERATE(std::vector<std::int64_t>{3, 8}, std::vector<std::int64_t>{2, 5, 16},
                              std::vector<std::int64_t>{2, 3, 4, 7});
  torch::manual_seed(91);
  const std::int64_t d = shape.back();
  LayerNorm ln(LayerNormOptions(d).eps(1e-5));
  ln->to(dtype);
  randomize(*ln);
  const auto x = torch::randn(shape, dtype) * 3.0 + 2.0;
  const auto expected = torch::layer_norm(x, {d}, ln->gamma, ln->beta, 1e-5);
  const double tolerance = dtype == torch::kDouble ? 1e-12 : 1e-5;
  const auto ours = ln(x);
  std::cout << "LayerNorm vs torch::layer_norm, " << dtype << " " << x.sizes() << ": max |diff| "
            << max_abs_diff(ours, expected) << "\n";
  CHECK(close(ours, expected, tolerance));
}

TEST_CASE("feed_forward_uses_exact_gelu", "[transformer]") {
  torch::manual_seed(92);
  FeedForward ffn(6, 20);
  ffn->to(torch::kDouble);
  randomize(*ffn);
  const auto x = torch::randn({2, 7, 6}, torch::kDouble);
  const auto h = x.matmul(ffn->fc1->W) + ffn->fc1->b;
  const auto with_torch = torch::gelu(h).matmul(ffn->fc2->W) + ffn->fc2->b;
  const auto with_erf = oracle_gelu(h).matmul(ffn->fc2->W) + ffn->fc2->b;
  const auto with_tanh = torch::gelu(h, "tanh").matmul(ffn->fc2->W) + ffn->fc2->b;
  const auto ours = ffn(x);
  std::cout << "FeedForward: max |ours - torch::gelu| " << max_abs_diff(ours, with_torch)
            << ", max |ours - erf formula| " << max_abs_diff(ours, with_erf)
            << ", max |ours - tanh approximation| " << max_abs_diff(ours, with_tanh) << "\n";
  CHECK(close(ours, with_torch, 1e-12));
  CHECK(close(ours, with_erf, 1e-12));
  CHECK(max_abs_diff(ours, with_tanh) > 1e-6);  // the test can tell the two GELUs apart
}

// ---- Block and TransformerLM against float64 oracles ------------------------------------------

TEST_CASE("block_matches_float64_oracle", "[transformer]") {
  const bool causal = GENERATE(true, false);
  const std::int64_t heads = GENERATE(1, 2, 4);
  torch::manual_seed(93);
  Block block(BlockOptions(8, heads).hidden_dim(12).causal(causal));
  block->to(torch::kDouble);
  randomize(*block);
  const auto x = torch::randn({3, 6, 8}, torch::kDouble);
  const auto expected = oracle_block(x, block);
  const auto ours = block(x);
  std::cout << "Block vs float64 oracle, causal " << causal << ", H " << heads << ": max |diff| "
            << max_abs_diff(ours, expected) << "\n";
  CHECK(close(ours, expected, 1e-12));
}

TEST_CASE("block_float64_gradients_match_finite_differences", "[transformer]") {
  torch::manual_seed(94);
  Block block(BlockOptions(4, 2).hidden_dim(6));
  block->to(torch::kDouble);
  randomize(*block);
  auto x = torch::randn({2, 3, 4}, torch::kDouble).requires_grad_();
  const auto target = torch::randn({2, 3, 4}, torch::kDouble);
  auto objective = [&] { return (block(x) - target).pow(2).sum(); };
  std::vector<torch::Tensor> checked = block->parameters();
  checked.push_back(x);
  g2c::testing::check_gradients(objective, checked, 1e-7);
}

TEST_CASE("transformer_lm_float64_gradients_match_finite_differences", "[transformer]") {
  torch::manual_seed(95);
  TransformerLM model(TransformerLMOptions(5, 4, 2, 2, 4).hidden_dim(8));
  model->to(torch::kDouble);
  randomize(*model);
  const auto ids = torch::tensor({{0, 3, 1, 3}, {4, 4, 2, 0}}, torch::kLong);
  const auto weights = torch::randn({2, 4, 5}, torch::kDouble);
  // A weighted sum of log-probabilities: every logit, position and parameter matters.
  auto objective = [&] { return (torch::log_softmax(model(ids), -1) * weights).sum(); };
  g2c::testing::check_gradients(objective, model->parameters(), 1e-7);
}

// ---- The cached path --------------------------------------------------------------------------

TEST_CASE("forward_cached_matches_forward_over_many_steps", "[transformer]") {
  const std::int64_t seed = GENERATE(1, 2, 3);
  const std::int64_t layers = GENERATE(1, 3);
  const std::int64_t steps = 64;
  torch::manual_seed(seed);
  TransformerLM model(TransformerLMOptions(20, 16, layers, 4, steps));
  randomize(*model, 0.3);
  torch::NoGradGuard no_grad;
  const auto ids = torch::randint(0, 20, {2, steps}, torch::kLong);
  const auto full = model(ids);
  auto cache = model->empty_kv_cache();
  double worst = 0.0;
  for (std::int64_t t = 0; t < steps; ++t) {
    const auto step = model->forward_cached(ids.narrow(1, t, 1), cache);
    worst = std::max(worst, max_abs_diff(step, full.narrow(1, t, 1)));
  }
  INFO("seed " << seed << ", " << layers << " layers: max |cached - full| over " << steps
               << " steps = " << worst);
  std::cout << "forward_cached vs forward, seed " << seed << ", L " << layers << ": max |diff| "
            << worst << " over " << steps << " steps\n";
  CHECK(worst < 1e-5);
  CHECK(cache.length() == steps);
  for (const auto& layer : cache.layers) {
    CHECK(layer.k.sizes() == torch::IntArrayRef({2, 4, steps, 4}));
  }
  CHECK_THROWS_AS(model->forward_cached(ids.narrow(1, 0, 1), cache), g2c::ValueError);
}

TEST_CASE("cached_greedy_generation_matches_full_forward", "[transformer]") {
  torch::manual_seed(96);
  TransformerLM model(TransformerLMOptions(16, 16, 2, 2, 72));
  randomize(*model, 0.4);
  const std::vector<std::int64_t> prompt{3, 1, 4, 1, 5, 9};
  const auto full = greedy_full(model, prompt, 66);
  const auto cached = greedy_cached(model, prompt, 66);
  CHECK(full.size() == 72);
  std::size_t agree = 0;
  while (agree < full.size() && agree < cached.size() && full[agree] == cached[agree]) ++agree;
  std::cout << "greedy generation, 66 new tokens: cached and full agree on " << agree << " of "
            << full.size() << " tokens\n";
  CHECK(cached == full);
}

TEST_CASE("forward_cached_reads_the_position_from_the_cache", "[transformer]") {
  // Two steps with the same token must give different logits: the second sits at position 1.
  torch::manual_seed(97);
  TransformerLM model(TransformerLMOptions(10, 8, 1, 2, 8));
  randomize(*model);
  torch::NoGradGuard no_grad;
  auto cache = model->empty_kv_cache();
  const auto token = torch::tensor({{4}}, torch::kLong);
  const auto first = model->forward_cached(token, cache);
  const auto second = model->forward_cached(token, cache);
  const auto full = model(torch::tensor({{4, 4}}, torch::kLong));
  CHECK(close(second[0][0], full[0][1], 1e-5));
  CHECK(max_abs_diff(first, second) > 1e-3);
}

// ---- Parameters: count, order, tying ----------------------------------------------------------

TEST_CASE("parameter_count_matches_closed_form", "[transformer]") {
  struct Case {
    std::int64_t v, d, l, h, t, hidden, expected;  // expected: the lesson's table (0: formula only)
  };
  const auto c = GENERATE(Case{100, 32, 2, 4, 32, 0, 29796}, Case{100, 64, 4, 4, 32, 0, 208612},
                          Case{500, 64, 2, 4, 64, 0, 136692}, Case{12, 8, 2, 2, 16, 0, 0},
                          Case{7, 6, 3, 3, 5, 10, 0}, Case{50, 48, 8, 4, 32, 0, 0});
  TransformerLM model(TransformerLMOptions(c.v, c.d, c.l, c.h, c.t).hidden_dim(c.hidden));
  const auto actual = numel(model->parameters());
  INFO("V " << c.v << ", D " << c.d << ", L " << c.l << ", T " << c.t << ", hidden " << c.hidden
            << ": counted " << actual);
  CHECK(actual == g2c::transformer::parameter_count(model->options));
  if (c.expected != 0) CHECK(actual == c.expected);
  const std::int64_t block = numel(model->blocks[0]->parameters());
  const std::int64_t hidden = c.hidden == 0 ? 4 * c.d : c.hidden;
  CHECK(block == 4 * (c.d * c.d + c.d) + 2 * c.d * hidden + hidden + c.d + 4 * c.d);
  if (c.hidden == 0) CHECK(block == 12 * c.d * c.d + 13 * c.d);
}

TEST_CASE("parameters_follow_the_python_order", "[transformer]") {
  TransformerLM model(TransformerLMOptions(12, 8, 2, 2, 16));
  std::vector<std::string> names;
  for (const auto& named : model->named_parameters()) names.push_back(named.key());
  std::vector<std::string> expected{"token_embed.weight", "pos_embed.weight"};
  for (const std::string block : {"blocks.0.", "blocks.1."}) {
    for (const std::string name :
         {"ln1.gamma", "ln1.beta", "attn.q_proj.W", "attn.q_proj.b", "attn.k_proj.W",
          "attn.k_proj.b", "attn.v_proj.W", "attn.v_proj.b", "attn.out_proj.W", "attn.out_proj.b",
          "ln2.gamma", "ln2.beta", "ffn.fc1.W", "ffn.fc1.b", "ffn.fc2.W", "ffn.fc2.b"}) {
      expected.push_back(block + name);
    }
  }
  for (const std::string name : {"ln_final.gamma", "ln_final.beta", "head.bias"}) {
    expected.push_back(name);
  }
  CHECK(names == expected);
  CHECK(model->parameters().back().is_same(model->head_bias));
}

TEST_CASE("head_is_tied_to_the_token_table", "[transformer]") {
  torch::manual_seed(98);
  TransformerLM model(TransformerLMOptions(12, 8, 1, 2, 16));
  // Exactly one (V, D) tensor among the parameters: the head has no matrix of its own.
  std::int64_t tables = 0;
  for (const auto& p : model->parameters()) {
    if (p.sizes() == torch::IntArrayRef({12, 8})) ++tables;
  }
  CHECK(tables == 1);
  // Rows of tokens absent from the input still get a gradient: through the head.
  model(torch::tensor({{0, 1, 2}}, torch::kLong)).logsumexp(-1).sum().backward();
  const auto grad = model->token_embed->weight.grad();
  REQUIRE(grad.defined());
  CHECK(grad.narrow(/*dim=*/0, 3, 9).abs().sum().item<double>() > 0.0);
}

TEST_CASE("transformer_lm_with_zero_blocks_is_embeddings_norm_and_tied_head", "[transformer]") {
  // num_layers 0: token + position embeddings, ln_final and the tied head, no mixing between
  // positions. Checked against LibTorch's own layer_norm on the model's tensors, in float64.
  torch::manual_seed(99);
  TransformerLM model(TransformerLMOptions(17, 16, 0, 2, 64));
  CHECK(model->blocks.empty());
  CHECK(numel(model->parameters()) == g2c::transformer::parameter_count(model->options));
  CHECK(numel(model->parameters()) == 17 * 16 + 64 * 16 + 2 * 16 + 17);
  model->to(torch::kFloat64);
  const auto ids = torch::randint(0, 17, {3, 9}, torch::kLong);
  const auto& table = model->token_embed->weight;
  const auto x = table.index_select(0, ids.flatten()).reshape({3, 9, 16}) +
                 model->pos_embed->weight.narrow(0, 0, 9);  // (B, T, D)
  const auto normed = torch::layer_norm(x, {16}, model->ln_final->gamma, model->ln_final->beta,
                                        model->ln_final->eps);
  const auto expected = torch::matmul(normed, table.t()) + model->head_bias;  // (B, T, V)
  CHECK(max_abs_diff(model(ids), expected) < 1e-12);
  // No mixing: a position's logits depend on its own token alone.
  auto changed = ids.clone();
  changed[0][4] = (ids[0][4].item<std::int64_t>() + 1) % 17;
  const auto diff = (model(changed) - model(ids)).abs().sum(-1);  // (B, T)
  CHECK(diff[0][4].item<double>() > 0);
  CHECK(diff.sum().item<double>() == diff[0][4].item<double>());
}

// ---- Persistence and devices ------------------------------------------------------------------

TEST_CASE("save_load_round_trip_keeps_logits", "[transformer]") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("g2c_transformer_" + std::to_string(::getpid()) + ".pt");
  torch::manual_seed(99);
  TransformerLM saved(TransformerLMOptions(12, 8, 2, 2, 16));
  randomize(*saved);
  torch::save(saved, path.string());
  torch::manual_seed(100);
  TransformerLM loaded(TransformerLMOptions(12, 8, 2, 2, 16));
  const auto ids = torch::randint(0, 12, {2, 7}, torch::kLong);
  CHECK_FALSE(torch::equal(loaded(ids), saved(ids)));
  torch::load(loaded, path.string());
  std::filesystem::remove(path);
  CHECK(torch::equal(loaded(ids), saved(ids)));
  CHECK(loaded->head_bias.is_same(loaded->head->bias));
}

TEST_CASE("cpu_and_cuda_agree", "[transformer]") {
  if (!torch::cuda::is_available()) G2C_SKIP("no CUDA device on this machine");
  torch::manual_seed(101);
  TransformerLM on_cpu(TransformerLMOptions(30, 32, 2, 4, 64));
  randomize(*on_cpu, 0.3);
  torch::manual_seed(101);
  TransformerLM on_cuda(TransformerLMOptions(30, 32, 2, 4, 64));
  randomize(*on_cuda, 0.3);
  on_cuda->to(torch::kCUDA);
  const auto ids = torch::randint(0, 30, {3, 40}, torch::kLong);
  const auto difference = max_abs_diff(on_cuda(ids.to(torch::kCUDA)).cpu(), on_cpu(ids));
  INFO("max |cuda - cpu| forward = " << difference);
  std::cout << "cuda vs cpu forward: max |diff| " << difference << "\n";
  CHECK(difference < 1e-4);
  const std::vector<std::int64_t> prompt{1, 2, 3};
  CHECK(greedy_cached(on_cuda, prompt, 40) == greedy_cached(on_cpu, prompt, 40));
}

// ---- Bad input --------------------------------------------------------------------------------

TEST_CASE("transformer_rejects_bad_input", "[transformer]") {
  TransformerLM model(TransformerLMOptions(12, 8, 2, 2, 16));
  CHECK_THROWS_WITH(model(torch::zeros({5}, torch::kLong)), Catch::Contains("(5)"));
  CHECK_THROWS_WITH(model(torch::full({2, 3}, 12, torch::kLong)), Catch::Contains("vocab_size=12"));
  CHECK_THROWS_AS(model(torch::zeros({2, 3})), g2c::ValueError);  // float ids
  CHECK_THROWS_WITH(model(torch::zeros({1, 17}, torch::kLong)), Catch::Contains("max_seq_len 16"));
  CHECK_THROWS_WITH(TransformerLM(TransformerLMOptions(12, 10, 1, 4, 8)),
                    Catch::Contains("D=10") && Catch::Contains("H=4"));
  CHECK_THROWS_AS(TransformerLM(TransformerLMOptions(12, 8, -1, 2, 8)), g2c::ValueError);
  CHECK_THROWS_WITH(TransformerLM(TransformerLMOptions(12, 8, 0, 2, 8))->empty_kv_cache(),
                    Catch::Contains("no blocks"));
  CHECK_THROWS_AS(LayerNorm(0), g2c::ValueError);
  CHECK_THROWS_AS(LayerNorm(LayerNormOptions(4).eps(0.0)), g2c::ValueError);
  CHECK_THROWS_AS(FeedForward(0), g2c::ValueError);
  CHECK_THROWS_WITH(Block(8, 2)(torch::randn({2, 5, 6})), Catch::Contains("(B=2, T=5, D=6)"));
  CHECK_THROWS_WITH(LayerNorm(8)(torch::randn({2, 5})), Catch::Contains("(2, 5)"));

  auto wrong_depth = KVCache::empty(3);
  CHECK_THROWS_WITH(model->forward_cached(torch::zeros({1, 1}, torch::kLong), wrong_depth),
                    Catch::Contains("3 layers"));
  auto cache = model->empty_kv_cache();
  CHECK_THROWS_WITH(model->forward_cached(torch::zeros({2, 3}, torch::kLong), cache),
                    Catch::Contains("(B=2, T=3)"));
}

TEST_CASE("kv_caches_reject_inconsistent_state", "[transformer]") {
  CHECK_THROWS_AS(KVCache::empty(0), g2c::ValueError);
  auto cache = KVCache::empty(2);
  cache.layers[0].append(torch::zeros({1, 2, 3, 4}), torch::zeros({1, 2, 3, 4}));
  CHECK_THROWS_WITH(cache.length(), Catch::Contains("inconsistent"));
  cache.clear();
  CHECK(cache.length() == 0);

  CHECK_THROWS_AS(LayerKVCache(torch::zeros({1, 2, 3, 4}), torch::Tensor()), g2c::ValueError);
  CHECK_THROWS_AS(LayerKVCache(torch::zeros({1, 2, 3, 4}), torch::zeros({1, 2, 3, 5})),
                  g2c::ValueError);
  CHECK_THROWS_AS(
      LayerKVCache(torch::zeros({1, 2, 3, 4}), torch::zeros({1, 2, 3, 4}, torch::kDouble)),
      g2c::ValueError);
  CHECK(LayerKVCache(torch::Tensor(), torch::Tensor()).length() == 0);
  LayerKVCache half;
  half.k = torch::zeros({1, 2, 3, 4});  // v left empty by hand
  CHECK_THROWS_WITH(half.append(torch::zeros({1, 2, 1, 4}), torch::zeros({1, 2, 1, 4})),
                    Catch::Contains("both or neither"));
}
