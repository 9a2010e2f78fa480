// Module 05 framework tests: TokenEmbedding against torch::nn::functional::embedding, the
// sinusoidal table and RoPE against direct float64 formulas (RoPE as a complex rotation of the
// split-halves pairs), the relative-position property over random positions, buffers and
// devices, float64 gradients, every ValueError path, nearest_by_cosine against a brute-force
// loop, and make_skipgram_pairs against a direct count.
#include <algorithm>
#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <random>

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
using g2c::testing::max_abs_diff;

namespace {

/// RoPE written as complex numbers: pair j is z = x[j] + i·x[j + D/2], rotated by
/// e^{i·pos·θ_j} with θ_j = base^(-2j/D). x is (T, D) float64.
torch::Tensor complex_rope(const torch::Tensor& x, double base) {
  const auto length = x.size(0), dim = x.size(1), half = dim / 2;
  auto out = torch::empty_like(x);
  auto in = x.accessor<double, 2>();
  auto result = out.accessor<double, 2>();
  for (std::int64_t pos = 0; pos < length; ++pos) {
    for (std::int64_t j = 0; j < half; ++j) {
      const double theta = std::pow(base, -2.0 * static_cast<double>(j) / static_cast<double>(dim));
      const std::complex<double> z(in[pos][j], in[pos][j + half]);
      const auto rotated = z * std::polar(1.0, static_cast<double>(pos) * theta);
      result[pos][j] = rotated.real();
      result[pos][j + half] = rotated.imag();
    }
  }
  return out;
}

std::filesystem::path temporary_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("g2c_embeddings_" +
                    std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

}  // namespace

TEST_CASE("token_embedding_matches_functional_embedding", "[embeddings]") {
  const auto dtype = GENERATE(torch::kFloat, torch::kDouble);
  torch::manual_seed(1);
  TokenEmbedding embedding(50, 12);
  embedding->to(dtype);
  for (const auto& ids : {torch::randint(50, {7}, torch::kLong), torch::randint(50, {3, 5}),
                          torch::randint(50, {2, 3, 4}, torch::kInt)}) {
    const auto ours = embedding(ids);
    const auto theirs = torch::nn::functional::embedding(ids.to(torch::kLong), embedding->weight);
    INFO("ids " << ids.sizes() << ", max |difference| = " << max_abs_diff(ours, theirs));
    CHECK(ours.scalar_type() == dtype);
    CHECK(torch::equal(ours, theirs));
  }
}

TEST_CASE("token_embedding_init_bound_uses_embedding_dim", "[embeddings]") {
  torch::manual_seed(2);
  TokenEmbedding embedding(5000, 4);  // bound 1/√4 = 0.5, not 1/√5000
  const double largest = embedding->weight.abs().max().item<double>();
  CHECK(largest <= 0.5);
  CHECK(largest > 0.45);
}

TEST_CASE("sinusoidal_table_matches_float64_formula", "[embeddings]") {
  const std::int64_t length = 200, dim = 24;
  SinusoidalPositionalEmbedding positions(length, dim);
  auto expected = torch::empty({length, dim}, torch::kDouble);
  auto e = expected.accessor<double, 2>();
  for (std::int64_t pos = 0; pos < length; ++pos) {
    for (std::int64_t i = 0; i < dim; i += 2) {
      const double angle = static_cast<double>(pos) /
                           std::pow(10000.0, static_cast<double>(i) / static_cast<double>(dim));
      e[pos][i] = std::sin(angle);
      e[pos][i + 1] = std::cos(angle);
    }
  }
  const double difference = max_abs_diff(positions->weight, expected);
  INFO("max |table - formula| = " << difference);
  CHECK(positions->weight.scalar_type() == torch::kFloat);
  CHECK(difference < 1e-6);
}

TEST_CASE("rope_matches_complex_rotation_of_split_halves", "[embeddings]") {
  const double base = GENERATE(10000.0, 500.0);
  torch::manual_seed(3);
  RotaryEmbedding rope(64, 16, base);
  rope->to(torch::kDouble);
  const auto x = torch::randn({40, 16}, torch::kDouble);
  const auto ours = rope(x);
  const auto theirs = complex_rope(x, base);
  // The tables are built in float64 but stored in float32, hence ~1e-7 rather than 1e-15.
  const double difference = max_abs_diff(ours, theirs);
  INFO("base " << base << ", max |ours - complex rotation| = " << difference);
  CHECK(difference < 1e-6);

  // Batched input (B, H, T, D) rotates every (b, h) slice the same way.
  const auto batched = torch::randn({2, 3, 40, 16}, torch::kDouble);
  CHECK(close(rope(batched)[1][2], complex_rope(batched[1][2], base), 1e-6));
}

TEST_CASE("rope_is_not_the_interleaved_convention", "[embeddings]") {
  RotaryEmbedding rope(8, 4);
  // Only dim 0 set, at position 1: split halves move it into dim 2 (its partner), not dim 1.
  auto x = torch::zeros({2, 4});
  x[1][0] = 1.0;
  const auto out = rope(x)[1];
  CHECK(std::abs(out[2].item<double>() - std::sin(1.0)) < 1e-6);
  CHECK(std::abs(out[1].item<double>()) < 1e-12);
}

TEST_CASE("rope_relative_position_property_over_random_positions", "[embeddings]") {
  torch::manual_seed(4);
  const std::int64_t length = 256, dim = 32;
  RotaryEmbedding rope(length, dim);
  rope->to(torch::kDouble);
  std::mt19937 random(4);
  std::uniform_int_distribution<std::int64_t> position(0, length - 1);
  double worst = 0.0;
  for (int trial = 0; trial < 200; ++trial) {
    const auto q = torch::randn({dim}, torch::kDouble);
    const auto k = torch::randn({dim}, torch::kDouble);
    const auto rotated_q = rope(q.expand({length, dim}).contiguous());  // q at every position
    const auto rotated_k = rope(k.expand({length, dim}).contiguous());
    const auto m = position(random), n = position(random);
    const auto shift = position(random);
    if (std::max(m, n) + shift >= length) continue;
    const double before = torch::dot(rotated_q[m], rotated_k[n]).item<double>();
    const double after = torch::dot(rotated_q[m + shift], rotated_k[n + shift]).item<double>();
    worst = std::max(worst, std::abs(before - after));
  }
  INFO("largest change of q·k under a common shift = " << worst);
  CHECK(worst < 1e-5);
}

TEST_CASE("fixed_tables_are_buffers_that_move_with_to", "[embeddings]") {
  SinusoidalPositionalEmbedding sinusoidal(32, 8);
  RotaryEmbedding rope(32, 8);
  CHECK(sinusoidal->parameters().empty());
  CHECK(rope->parameters().empty());
  CHECK(sinusoidal->named_buffers().contains("weight"));
  CHECK(rope->named_buffers().contains("cos"));
  CHECK(rope->named_buffers().contains("sin"));
  CHECK_FALSE(rope->cos.requires_grad());

  sinusoidal->to(torch::kDouble);
  rope->to(torch::kDouble);
  CHECK(sinusoidal->weight.scalar_type() == torch::kDouble);
  CHECK(sinusoidal->named_buffers()["weight"].scalar_type() == torch::kDouble);
  CHECK(rope->cos.scalar_type() == torch::kDouble);
  CHECK(sinusoidal(4).scalar_type() == torch::kDouble);
  CHECK(rope(torch::randn({4, 8}, torch::kDouble)).scalar_type() == torch::kDouble);
}

TEST_CASE("fixed_tables_move_to_cuda", "[embeddings]") {
  if (!torch::cuda::is_available()) G2C_SKIP("no CUDA device");
  SinusoidalPositionalEmbedding sinusoidal(32, 8);
  RotaryEmbedding rope(32, 8);
  rope->to(torch::kDouble);
  rope->to(torch::kCUDA);
  sinusoidal->to(torch::kCUDA);
  CHECK(rope->cos.is_cuda());
  CHECK(rope->sin.is_cuda());
  CHECK(sinusoidal->weight.is_cuda());
  const auto x = torch::randn({2, 5, 8}, torch::dtype(torch::kDouble).device(torch::kCUDA));
  CHECK(close(rope(x)[1].cpu(), complex_rope(x[1].cpu(), 10000.0), 1e-6));
  CHECK_THROWS_AS(rope(torch::randn({2, 5, 8}, torch::kDouble)), g2c::ValueError);
}

TEST_CASE("float64_gradients_match_finite_differences", "[embeddings]") {
  torch::manual_seed(5);
  TokenEmbedding embedding(6, 4);
  embedding->to(torch::kDouble);
  RotaryEmbedding rope(8, 4);
  rope->to(torch::kDouble);
  const auto ids = torch::tensor({{1, 3, 3}, {0, 5, 1}}, torch::kLong);
  const auto target = torch::randn({2, 3, 4}, torch::kDouble);
  auto objective = [&] { return (rope(embedding(ids)) - target).pow(2).sum(); };
  embedding->zero_grad();
  objective().backward();
  const auto analytic = embedding->weight.grad().clone();
  const auto numeric = g2c::testing::numeric_gradient(objective, embedding->weight.detach());
  INFO("max |analytic - numeric| = " << max_abs_diff(analytic, numeric));
  CHECK(close(analytic, numeric, 1e-7));
  CHECK(close(analytic[2], torch::zeros({4}, torch::kDouble), 0.0));  // id 2 is never used

  auto x = torch::randn({2, 5, 4}, torch::kDouble).requires_grad_();
  const auto weights = torch::randn({2, 5, 4}, torch::kDouble);
  auto rope_objective = [&] { return (rope(x) * weights).sum(); };
  rope_objective().backward();
  const auto rope_numeric = g2c::testing::numeric_gradient(rope_objective, x.detach());
  INFO("RoPE: max |analytic - numeric| = " << max_abs_diff(x.grad(), rope_numeric));
  CHECK(close(x.grad(), rope_numeric, 1e-7));
}

TEST_CASE("learned_positions_train_and_float64_works", "[embeddings]") {
  LearnedPositionalEmbedding positions(16, 4);
  positions->to(torch::kDouble);
  const auto out = positions(5);
  CHECK(out.scalar_type() == torch::kDouble);
  out.sum().backward();
  CHECK(close(positions->weight.grad().narrow(0, 0, 5), torch::ones({5, 4}, torch::kDouble)));
  CHECK(close(positions->weight.grad().narrow(0, 5, 11), torch::zeros({11, 4}, torch::kDouble)));
}

TEST_CASE("value_errors_carry_their_messages", "[embeddings]") {
  TokenEmbedding embedding(10, 4);
  CHECK_THROWS_WITH(embedding(torch::tensor({1.0, 2.0})),
                    Catch::Contains("integer tensor") && Catch::Contains("Float"));
  CHECK_THROWS_WITH(embedding(torch::tensor({3, 10}, torch::kLong)),
                    Catch::Contains("[0, vocab_size=10)") && Catch::Contains("3 to 10"));
  CHECK_THROWS_AS(embedding(torch::tensor({-1}, torch::kLong)), g2c::ValueError);
  CHECK_THROWS_AS(embedding(torch::Tensor()), g2c::ValueError);
  CHECK_THROWS_AS(TokenEmbedding(0, 4), g2c::ValueError);
  CHECK_THROWS_AS(TokenEmbedding(10, -1), g2c::ValueError);

  LearnedPositionalEmbedding learned(8, 4);
  SinusoidalPositionalEmbedding sinusoidal(8, 4);
  CHECK_THROWS_WITH(learned(9), Catch::Equals("seq_len 9 exceeds max_seq_len 8"));
  CHECK_THROWS_WITH(sinusoidal(20), Catch::Equals("seq_len 20 exceeds max_seq_len 8"));
  CHECK_THROWS_AS(learned(0), g2c::ValueError);
  CHECK_THROWS_AS(LearnedPositionalEmbedding(0, 4), g2c::ValueError);
  CHECK_THROWS_WITH(SinusoidalPositionalEmbedding(8, 5),
                    Catch::Equals("embedding_dim must be even for sinusoidal encoding"));

  RotaryEmbedding rope(8, 4);
  CHECK_THROWS_WITH(RotaryEmbedding(8, 5), Catch::Equals("embedding_dim must be even for RoPE"));
  CHECK_THROWS_WITH(rope(torch::randn({2, 9, 4})),
                    Catch::Equals("seq_len 9 exceeds max_seq_len 8"));
  CHECK_THROWS_WITH(rope(torch::randn({2, 5, 6})),
                    Catch::Contains("D=4") && Catch::Contains("(2, 5, 6)"));
  CHECK_THROWS_AS(rope(torch::randn({4})), g2c::ValueError);
  CHECK_THROWS_WITH(rope(torch::ones({2, 4}, torch::kLong)), Catch::Contains("floating-point"));
  CHECK_THROWS_AS(RotaryEmbedding(8, 4, /*base=*/0.0), g2c::ValueError);

  const auto ids = torch::tensor({1, 2, 3}, torch::kLong);
  CHECK_THROWS_WITH(g2c::embeddings::make_skipgram_pairs(ids, -3),
                    Catch::Equals("window must be at least 1"));
  CHECK_THROWS_AS(g2c::embeddings::make_skipgram_pairs(ids.view({1, 3}), 1), g2c::ValueError);
  CHECK_THROWS_AS(g2c::embeddings::make_skipgram_pairs(ids.to(torch::kFloat), 1), g2c::ValueError);

  SkipGramEmbeddingModel model(5, 3);
  const auto centers = torch::tensor({0, 1, 2}, torch::kLong);
  CHECK_THROWS_WITH(
      g2c::embeddings::train_skipgram(model, centers, torch::tensor({1, 2}, torch::kLong), 1),
      Catch::Contains("3 centers and 2 contexts"));
  const auto empty = torch::empty({0}, torch::kLong);
  CHECK_THROWS_WITH(g2c::embeddings::train_skipgram(model, empty, empty, 1),
                    Catch::Contains("no pairs"));
  CHECK_THROWS_AS(g2c::embeddings::train_skipgram(model, centers, centers + 4, 1),
                  g2c::ValueError);  // id 5 and 6 are outside the vocabulary
  CHECK_THROWS_AS(g2c::embeddings::train_skipgram(model, centers, centers, 0), g2c::ValueError);

  const g2c::embeddings::WordVectors vectors{{"a", torch::ones({2})}, {"b", torch::ones({3})}};
  CHECK_THROWS_WITH(g2c::embeddings::nearest_by_cosine(torch::ones({2}), vectors),
                    Catch::Contains("'b'"));
  CHECK_THROWS_AS(g2c::embeddings::nearest_by_cosine(torch::ones({2}), vectors, {}, 0),
                  g2c::ValueError);
  CHECK_THROWS_WITH(g2c::embeddings::analogy("a", "b", "zebra", vectors),
                    Catch::Contains("'zebra'"));

  CHECK_THROWS_WITH(g2c::embeddings::load_glove_subset("/nonexistent/glove.txt", {"a"}),
                    Catch::Contains("/nonexistent/glove.txt") && Catch::Contains("glove"));
  const auto bad_number = temporary_file("bad.txt", "a 1.0 2.0\nb 1.0 x2\n");
  CHECK_THROWS_WITH(g2c::embeddings::load_glove_subset(bad_number, {"a", "b"}),
                    Catch::Contains(":2:") && Catch::Contains("x2"));
  const auto ragged = temporary_file("ragged.txt", "a 1.0 2.0\nb 1.0 2.0 3.0\n");
  CHECK_THROWS_WITH(g2c::embeddings::load_glove_subset(ragged, {"a", "b"}),
                    Catch::Contains("3 values"));
  CHECK(g2c::embeddings::load_glove_subset(ragged, {"b"}).size() == 1);  // only kept lines count
  std::filesystem::remove_all(bad_number.parent_path());
  std::filesystem::remove_all(ragged.parent_path());
}

TEST_CASE("nearest_by_cosine_matches_brute_force", "[embeddings]") {
  torch::manual_seed(6);
  g2c::embeddings::WordVectors vectors;
  for (int i = 0; i < 60; ++i) vectors.emplace_back("w" + std::to_string(i), torch::randn({8}));
  vectors.emplace_back("twin", vectors[3].second * 2.0);  // the same direction as w3: a tie
  const std::set<std::string> exclude{"w0", "w7"};
  const auto query = torch::randn({8});
  const auto ours = g2c::embeddings::nearest_by_cosine(query, vectors, exclude, 10);

  std::vector<std::tuple<double, std::size_t, std::string>> expected;
  for (std::size_t index = 0; index < vectors.size(); ++index) {
    const auto& [word, v] = vectors[index];
    if (exclude.count(word)) continue;
    const double score = (query.to(torch::kDouble).dot(v.to(torch::kDouble)) /
                          (query.to(torch::kDouble).norm() * v.to(torch::kDouble).norm()))
                             .item<double>();
    expected.emplace_back(-score, index, word);  // descending score, then original order
  }
  std::sort(expected.begin(), expected.end());
  REQUIRE(ours.size() == 10);
  for (std::size_t i = 0; i < ours.size(); ++i) {
    INFO("rank " << i);
    CHECK(std::abs(ours[i].second + std::get<0>(expected[i])) < 1e-9);
    if (std::abs(std::get<0>(expected[i]) -
                 std::get<0>(expected[std::min(i + 1, ours.size() - 1)])) > 1e-9) {
      CHECK(ours[i].first == std::get<2>(expected[i]));
    }
  }
  // The tie keeps the order of `vectors`: w3 before twin, whenever both are in the ranking.
  const auto all = g2c::embeddings::nearest_by_cosine(vectors[3].second, vectors, {}, 100);
  CHECK(all[0].first == "w3");
  CHECK(all[1].first == "twin");
}

TEST_CASE("make_skipgram_pairs_matches_direct_count", "[embeddings]") {
  std::mt19937 random(7);
  for (int trial = 0; trial < 30; ++trial) {
    const std::int64_t n = std::uniform_int_distribution<std::int64_t>(0, 40)(random);
    const std::int64_t window = std::uniform_int_distribution<std::int64_t>(1, 6)(random);
    std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
    for (auto& id : ids) id = std::uniform_int_distribution<std::int64_t>(0, 9)(random);
    const auto pairs =
        g2c::embeddings::make_skipgram_pairs(torch::tensor(ids, torch::kLong), window);

    std::vector<std::int64_t> centers, contexts;  // the definition, written as loops
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = std::max<std::int64_t>(0, i - window);
           j <= std::min<std::int64_t>(n - 1, i + window); ++j) {
        if (j == i) continue;
        centers.push_back(ids[i]);
        contexts.push_back(ids[j]);
      }
    }
    // Count: each position sees min(i, w) + min(n - 1 - i, w) neighbours.
    std::int64_t count = 0;
    for (std::int64_t i = 0; i < n; ++i) count += std::min(i, window) + std::min(n - 1 - i, window);
    INFO("n " << n << ", window " << window);
    CHECK(pairs.centers.numel() == count);
    CHECK(pairs.centers.scalar_type() == torch::kLong);
    CHECK(torch::equal(pairs.centers, torch::tensor(centers, torch::kLong)));
    CHECK(torch::equal(pairs.contexts, torch::tensor(contexts, torch::kLong)));
  }
}

TEST_CASE("train_skipgram_is_deterministic_for_a_seeded_generator", "[embeddings]") {
  const auto pairs =
      g2c::embeddings::make_skipgram_pairs(torch::arange(12, torch::kLong).repeat({10}), 2);
  auto run = [&] {
    torch::manual_seed(8);
    SkipGramEmbeddingModel model(12, 8);
    return g2c::embeddings::train_skipgram(model, pairs.centers, pairs.contexts, 30, 16, 0.2,
                                           at::make_generator<at::CPUGeneratorImpl>(9));
  };
  const auto first = run(), second = run();
  CHECK(first == second);
  for (const double loss : first) CHECK(std::isfinite(loss));
}
