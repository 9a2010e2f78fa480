// Module 05 course tests: token, learned, sinusoidal and rotary embeddings, and the similarity and
// skip-gram helpers, one for one with the Python edition's tests/test_embeddings.py, plus
// embeddings_match_cpu_on_accelerator of this edition (tests/course_tests.txt). Tests tagged
// [clean] pass on the scaffold.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/embeddings/positional.h"
#include "g2c/embeddings/rotary.h"
#include "g2c/embeddings/similarity.h"
#include "g2c/embeddings/skipgram.h"
#include "g2c/embeddings/token_embedding.h"
#include "torch_test.h"

using g2c::embeddings::LearnedPositionalEmbedding;
using g2c::embeddings::RotaryEmbedding;
using g2c::embeddings::SinusoidalPositionalEmbedding;
using g2c::embeddings::SkipGramEmbeddingModel;
using g2c::embeddings::TokenEmbedding;
using g2c::testing::close;
using torch::indexing::Slice;

// ---- TokenEmbedding -------------------------------------------------------------------------

TEST_CASE("token_emb_weight_shape", "[clean]") {
  TokenEmbedding embedding(100, 16);
  CHECK(embedding->weight.sizes() == torch::IntArrayRef({100, 16}));
}

TEST_CASE("token_emb_requires_grad", "[clean]") {
  TokenEmbedding embedding(100, 16);
  CHECK(embedding->weight.requires_grad());
}

TEST_CASE("token_emb_parameters_yields_weight", "[clean]") {
  TokenEmbedding embedding(100, 16);
  const auto named = embedding->named_parameters();
  REQUIRE(named.size() == 1);
  CHECK(named.begin()->key() == "weight");
  CHECK(named.begin()->value().is_same(embedding->weight));
}

TEST_CASE("token_emb_forward_shape_2d_input") {
  TokenEmbedding embedding(100, 16);
  const auto ids = torch::randint(0, 100, {4, 8}, torch::kLong);
  CHECK(embedding(ids).sizes() == torch::IntArrayRef({4, 8, 16}));
}

TEST_CASE("token_emb_forward_shape_1d_input") {
  TokenEmbedding embedding(100, 16);
  CHECK(embedding(torch::tensor({1, 2, 3}, torch::kLong)).sizes() == torch::IntArrayRef({3, 16}));
}

TEST_CASE("token_emb_forward_lookup_rows") {
  TokenEmbedding embedding(100, 16);
  const auto out = embedding(torch::tensor({3, 5, 7}, torch::kLong));
  CHECK(torch::equal(out[0], embedding->weight[3]));
  CHECK(torch::equal(out[1], embedding->weight[5]));
  CHECK(torch::equal(out[2], embedding->weight[7]));
}

TEST_CASE("token_emb_backward_routes_to_weight") {
  TokenEmbedding embedding(100, 16);
  embedding(torch::tensor({3, 5, 7}, torch::kLong)).sum().backward();
  const auto grad = embedding->weight.grad();
  REQUIRE(grad.defined());
  CHECK(close(grad[3], torch::ones({16})));
  CHECK(close(grad[0], torch::zeros({16})));
}

// ---- LearnedPositionalEmbedding -------------------------------------------------------------

TEST_CASE("learned_pos_weight_shape", "[clean]") {
  LearnedPositionalEmbedding positions(128, 16);
  CHECK(positions->weight.sizes() == torch::IntArrayRef({128, 16}));
}

TEST_CASE("learned_pos_requires_grad", "[clean]") {
  LearnedPositionalEmbedding positions(128, 16);
  CHECK(positions->weight.requires_grad());
}

TEST_CASE("learned_pos_forward_shape") {
  LearnedPositionalEmbedding positions(128, 16);
  CHECK(positions(10).sizes() == torch::IntArrayRef({10, 16}));
}

TEST_CASE("learned_pos_forward_returns_prefix") {
  LearnedPositionalEmbedding positions(128, 16);
  CHECK(torch::equal(positions(10), positions->weight.index({Slice(0, 10)})));
}

TEST_CASE("learned_pos_forward_seq_len_one") {
  LearnedPositionalEmbedding positions(128, 16);
  const auto out = positions(1);
  CHECK(out.sizes() == torch::IntArrayRef({1, 16}));
  CHECK(torch::equal(out[0], positions->weight[0]));
}

// ---- SinusoidalPositionalEmbedding ----------------------------------------------------------

TEST_CASE("sinusoidal_odd_dim_raises", "[clean]") {
  CHECK_THROWS_AS(SinusoidalPositionalEmbedding(128, 7), g2c::ValueError);
  CHECK_THROWS_WITH(SinusoidalPositionalEmbedding(128, 7),
                    Catch::Contains("embedding_dim must be even for sinusoidal encoding"));
}

TEST_CASE("sinusoidal_weight_shape") {
  SinusoidalPositionalEmbedding positions(128, 16);
  CHECK(positions->weight.sizes() == torch::IntArrayRef({128, 16}));
}

TEST_CASE("sinusoidal_no_parameters") {
  SinusoidalPositionalEmbedding positions(128, 16);
  CHECK(positions->parameters().empty());
}

TEST_CASE("sinusoidal_no_grad_on_table") {
  SinusoidalPositionalEmbedding positions(128, 16);
  CHECK_FALSE(positions->weight.requires_grad());
}

TEST_CASE("sinusoidal_position_zero_values") {
  SinusoidalPositionalEmbedding positions(128, 8);
  const auto row = positions->weight[0];
  CHECK(close(row.index({Slice(0, torch::indexing::None, 2)}), torch::zeros({4}), 1e-6));
  CHECK(close(row.index({Slice(1, torch::indexing::None, 2)}), torch::ones({4}), 1e-6));
}

TEST_CASE("sinusoidal_value_range") {
  SinusoidalPositionalEmbedding positions(128, 16);
  CHECK(positions->weight.abs().max().item<double>() <= 1.0 + 1e-6);
}

TEST_CASE("sinusoidal_known_value_at_pos_one_dim_zero") {
  SinusoidalPositionalEmbedding positions(128, 16);
  CHECK(positions->weight[1][0].item<double>() == within(std::sin(1.0), 1e-5));
}

TEST_CASE("sinusoidal_known_value_at_pos_one_dim_one") {
  SinusoidalPositionalEmbedding positions(128, 16);
  CHECK(positions->weight[1][1].item<double>() == within(std::cos(1.0), 1e-5));
}

TEST_CASE("sinusoidal_forward_returns_prefix") {
  SinusoidalPositionalEmbedding positions(128, 16);
  CHECK(torch::equal(positions(10), positions->weight.index({Slice(0, 10)})));
}

// ---- RotaryEmbedding ------------------------------------------------------------------------

TEST_CASE("rotary_odd_dim_raises", "[clean]") {
  CHECK_THROWS_AS(RotaryEmbedding(128, 7), g2c::ValueError);
  CHECK_THROWS_WITH(RotaryEmbedding(128, 7),
                    Catch::Contains("embedding_dim must be even for RoPE"));
}

TEST_CASE("rotary_construction_runs") {
  RotaryEmbedding rope(128, 16);
  CHECK(rope->embedding_dim == 16);
}

TEST_CASE("rotary_no_parameters") {
  RotaryEmbedding rope(128, 16);
  CHECK(rope->parameters().empty());
}

TEST_CASE("rotary_cos_sin_shapes") {
  RotaryEmbedding rope(128, 16);
  CHECK(rope->cos.sizes() == torch::IntArrayRef({128, 16}));
  CHECK(rope->sin.sizes() == torch::IntArrayRef({128, 16}));
}

TEST_CASE("rotary_cos_at_position_zero_is_one") {
  RotaryEmbedding rope(128, 16);
  CHECK(close(rope->cos[0], torch::ones({16}), 1e-6));
  CHECK(close(rope->sin[0], torch::zeros({16}), 1e-6));
}

TEST_CASE("rotary_pair_j_turns_at_base_to_the_minus_2j_over_d") {
  // An edition addition: the other tests hold for any frequencies; this one checks them.
  const std::int64_t D = 8;
  const double base = 100.0;
  const auto [cos, sin] = g2c::embeddings::RotaryEmbeddingImpl::build_cos_sin(3, D, base);
  for (std::int64_t j = 0; j < D / 2; ++j) {
    const double theta = std::pow(base, -2.0 * static_cast<double>(j) / static_cast<double>(D));
    for (std::int64_t position = 1; position < 3; ++position) {
      const double angle = static_cast<double>(position) * theta;
      INFO("pair " << j << " at position " << position << ": expected angle " << angle
                   << " = position * base^(-2j/D); your cos " << cos[position][j].item<double>()
                   << "\nThe exponents are 0, 2, 4, ... over D (torch::arange(0, D, 2) / D), "
                      "one per pair, and column j + D/2 repeats column j");
      CHECK(cos[position][j].item<double>() == Approx(std::cos(angle)).margin(1e-6));
      CHECK(sin[position][j + D / 2].item<double>() == Approx(std::sin(angle)).margin(1e-6));
    }
  }
}

TEST_CASE("rotary_forward_preserves_shape") {
  RotaryEmbedding rope(128, 16);
  CHECK(rope(torch::randn({2, 10, 16})).sizes() == torch::IntArrayRef({2, 10, 16}));
}

TEST_CASE("rotary_forward_at_position_zero_is_identity") {
  RotaryEmbedding rope(128, 16);
  const auto x = torch::randn({1, 1, 16});
  CHECK(close(rope(x), x, 1e-6));
}

TEST_CASE("rotary_forward_preserves_norm") {
  RotaryEmbedding rope(128, 16);
  const auto x = torch::randn({2, 10, 16});
  CHECK(close(rope(x).norm(2, {-1}), x.norm(2, {-1}), 1e-5));
}

TEST_CASE("rotary_forward_distinct_at_different_positions") {
  RotaryEmbedding rope(128, 16);
  const auto x = torch::randn({16}).expand({1, 4, 16}).contiguous();  // one vector at T = 4 slots
  const auto out = rope(x);
  CHECK_FALSE(torch::allclose(out[0][0], out[0][1], /*rtol=*/0.0, /*atol=*/1e-3));
}

TEST_CASE("rotary_relative_position_property") {
  torch::manual_seed(0);
  RotaryEmbedding rope(128, 16);
  const auto q = torch::randn({16});
  const auto k = torch::randn({16});
  const auto rotated_q = rope(q.expand({1, 10, 16}).contiguous())[0];  // q at every position
  const auto rotated_k = rope(k.expand({1, 10, 16}).contiguous())[0];  // k at every position
  auto score = [&](int m, int n) { return torch::dot(rotated_q[m], rotated_k[n]).item<double>(); };
  const double reference = score(0, 2);
  CHECK(score(3, 5) == within(reference, 1e-4));
  CHECK(score(7, 9) == within(reference, 1e-4));
}

// ---- skip-gram and similarity helpers -------------------------------------------------------

TEST_CASE("skipgram_model_construction_parameters") {
  SkipGramEmbeddingModel model(20, 8);
  const auto parameters = model->parameters();
  REQUIRE(parameters.size() == 3);
  CHECK(parameters[0].sizes() == torch::IntArrayRef({20, 8}));
  CHECK(parameters[1].sizes() == torch::IntArrayRef({8, 20}));
  CHECK(parameters[2].sizes() == torch::IntArrayRef({20}));
}

TEST_CASE("make_skipgram_pairs_window_one") {
  const auto pairs =
      g2c::embeddings::make_skipgram_pairs(torch::tensor({10, 20, 30}, torch::kLong), 1);
  CHECK(torch::equal(pairs.centers, torch::tensor({10, 20, 20, 30}, torch::kLong)));
  CHECK(torch::equal(pairs.contexts, torch::tensor({20, 10, 30, 20}, torch::kLong)));
}

TEST_CASE("make_skipgram_pairs_rejects_bad_window") {
  const auto ids = torch::tensor({1, 2, 3}, torch::kLong);
  CHECK_THROWS_AS(g2c::embeddings::make_skipgram_pairs(ids, 0), g2c::ValueError);
  CHECK_THROWS_WITH(g2c::embeddings::make_skipgram_pairs(ids, 0),
                    Catch::Contains("window must be at least 1"));
}

TEST_CASE("skipgram_model_forward_shape") {
  SkipGramEmbeddingModel model(10, 4);
  CHECK(model(torch::tensor({1, 2, 3}, torch::kLong)).sizes() == torch::IntArrayRef({3, 10}));
}

TEST_CASE("train_skipgram_reduces_loss") {
  torch::manual_seed(0);
  const auto ids = torch::arange(10, torch::kLong).repeat({20});  // 0 1 … 9 0 1 … 9 …
  const auto pairs = g2c::embeddings::make_skipgram_pairs(ids, 1);
  SkipGramEmbeddingModel model(10, 16);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(0);
  const auto losses = g2c::embeddings::train_skipgram(model, pairs.centers, pairs.contexts,
                                                      /*steps=*/80, /*batch_size=*/8,
                                                      /*lr=*/0.2, generator);
  REQUIRE(losses.size() == 80);
  const double first = std::accumulate(losses.begin(), losses.begin() + 10, 0.0) / 10;
  const double last = std::accumulate(losses.end() - 10, losses.end(), 0.0) / 10;
  INFO("mean of the first 10 losses " << first << ", of the last 10 " << last);
  CHECK(last < first);
}

TEST_CASE("normalized_unit_norm_and_zero_safe") {
  const auto unit = g2c::embeddings::normalized(torch::tensor({3.0, 4.0}));
  CHECK(close(unit, torch::tensor({0.6, 0.8}), 1e-6));
  CHECK(unit.norm().item<double>() == within(1.0, 1e-6));
  const auto zero = g2c::embeddings::normalized(torch::zeros({3}));
  CHECK_FALSE(zero.isnan().any().item<bool>());
  CHECK(close(zero, torch::zeros({3})));
}

TEST_CASE("load_glove_subset") {
  const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  const auto dir = std::filesystem::temp_directory_path() / ("g2c_glove_" + std::to_string(stamp));
  std::filesystem::create_directories(dir);
  const auto path = dir / "glove.txt";
  std::ofstream(path) << "king 1.0 2.0 3.0\nqueen 4.0 5.0 6.0\napple 7.0 8.0 9.0\n";
  const auto vectors = g2c::embeddings::load_glove_subset(path, {"apple", "king", "missing"});
  std::filesystem::remove_all(dir);
  REQUIRE(vectors.size() == 2);
  CHECK(vectors[0].first == "king");
  CHECK(vectors[1].first == "apple");
  CHECK(close(vectors[0].second, torch::tensor({1.0, 2.0, 3.0})));
  CHECK(close(vectors[1].second, torch::tensor({7.0, 8.0, 9.0})));
}

TEST_CASE("nearest_by_cosine_excludes_and_sorts") {
  const g2c::embeddings::WordVectors vectors{{"a", torch::tensor({1.0, 0.0})},
                                             {"b", torch::tensor({0.0, 1.0})},
                                             {"c", torch::tensor({1.0, 1.0})},
                                             {"d", torch::tensor({2.0, 0.1})}};
  const auto result =
      g2c::embeddings::nearest_by_cosine(torch::tensor({1.0, 0.0}), vectors, {"a"}, 3);
  REQUIRE(result.size() == 3);
  CHECK(result[0].first == "d");
  CHECK(result[1].first == "c");
  CHECK(result[2].first == "b");
  CHECK(result[1].second == within(1.0 / std::sqrt(2.0), 1e-6));
  CHECK(result[0].second >= result[1].second);
  CHECK(result[1].second >= result[2].second);
}

TEST_CASE("analogy_uses_vector_arithmetic") {
  const g2c::embeddings::WordVectors vectors{{"king", torch::tensor({1.0, 1.0, 0.0})},
                                             {"man", torch::tensor({1.0, 0.0, 0.0})},
                                             {"woman", torch::tensor({0.0, 0.0, 1.0})},
                                             {"queen", torch::tensor({0.0, 1.0, 1.0})},
                                             {"apple", torch::tensor({1.0, 0.0, 0.2})}};
  const auto result = g2c::embeddings::analogy("king", "man", "woman", vectors, 2);
  REQUIRE(result.size() == 2);
  CHECK(result[0].first == "queen");
  CHECK(result[0].second == within(1.0, 1e-6));
  for (const auto& [word, score] : result) {
    CHECK(word != "king");
    CHECK(word != "man");
    CHECK(word != "woman");
  }
}

// ---- On an accelerator ----------------------------------------------------------------------

// An addition of this edition, run where CUDA or MPS exists: every embedding on the accelerator
// must match the CPU. A table or an index built on the CPU inside forward fails here.
TEST_CASE("embeddings_match_cpu_on_accelerator", "[accelerator]") {
  const std::optional<torch::Device> device = g2c::testing::accelerator_device();
  if (!device) G2C_SKIP(g2c::testing::kNoAccelerator);
  INFO("on " << *device
             << ": every tensor your code creates must live on the device of its "
                "input or of the module's weights (torch::arange(T, x.device()), ...)");
  torch::manual_seed(0);
  TokenEmbedding tokens(50, 8);
  LearnedPositionalEmbedding learned(16, 8);
  SinusoidalPositionalEmbedding sinusoidal(16, 8);
  RotaryEmbedding rope(16, 8);
  const auto ids = torch::randint(0, 50, {2, 10}, torch::kLong);
  const auto x = torch::randn({2, 10, 8});
  const auto tokens_cpu = tokens(ids), learned_cpu = learned(10), sinusoidal_cpu = sinusoidal(10),
             rope_cpu = rope(x), unit_cpu = g2c::embeddings::normalized(x);
  tokens->to(*device);
  learned->to(*device);
  sinusoidal->to(*device);
  rope->to(*device);
  const std::vector<std::pair<std::string, std::pair<torch::Tensor, torch::Tensor>>> outputs{
      {"TokenEmbedding", {tokens(ids.to(*device)), tokens_cpu}},
      {"LearnedPositionalEmbedding", {learned(10), learned_cpu}},
      {"SinusoidalPositionalEmbedding", {sinusoidal(10), sinusoidal_cpu}},
      {"RotaryEmbedding", {rope(x.to(*device)), rope_cpu}},
      {"normalized", {g2c::embeddings::normalized(x.to(*device)), unit_cpu}}};
  for (const auto& [name, pair] : outputs) {
    INFO(name);
    CHECK(pair.first.device().type() == device->type());
    CHECK(close(pair.first.cpu(), pair.second, 1e-5));
  }
}
