// Beyond module muon framework checks: Newton–Schulz against the same polynomial applied to the
// singular values of an SVD (float64, several shapes); Muon's steps against a hand loop that builds
// its update from that SVD oracle; the partition of a TransformerLM by name; the state it keeps;
// module 10's Trainer with optimizer "muon": its schedule reaches the AdamW side, it trains, and a
// checkpoint resumes it exactly.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/muon/optimizer.h"
#include "g2c/muon/partition.h"
#include "g2c/nn/optim.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/transformer/transformer_lm.h"
#include "pretraining_test_support.h"
#include "torch_test.h"

using g2c::muon::Muon;
using g2c::muon::MuonOptions;
using g2c::muon::zeropower_via_newtonschulz;
using g2c::testing::max_abs_diff;

namespace {

/// U f^steps(S / ‖G‖_F) Vᵀ from LibTorch's SVD, with f(s) = a s + b s³ + c s⁵: what Newton–Schulz
/// computes without the SVD. (rows, cols) -> (rows, cols), float64.
torch::Tensor newton_schulz_by_svd(const torch::Tensor& G, std::int64_t steps, double eps) {
  const auto [U, S, Vh] = torch::linalg_svd(G.to(torch::kDouble), /*full_matrices=*/false);
  auto s = S / (G.to(torch::kDouble).norm() + eps);
  const auto [a, b, c] = g2c::muon::NS_COEFFS;
  for (std::int64_t i = 0; i < steps; ++i) s = a * s + b * s.pow(3) + c * s.pow(5);
  return U.mm(torch::diag(s)).mm(Vh);
}

}  // namespace

TEST_CASE("newton_schulz_equals_the_polynomial_on_the_singular_values", "[muon]") {
  torch::manual_seed(1);
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{
           {16, 8}, {8, 16}, {8, 8}, {64, 3}, {3, 64}, {1, 5}, {40, 40}}) {
    for (const std::int64_t steps : {1, 2, 5, 9}) {
      const auto G = torch::randn(shape, torch::kDouble) * 3.0;
      const auto ours = zeropower_via_newtonschulz(G, steps);
      const auto oracle = newton_schulz_by_svd(G, steps, g2c::muon::EPS);
      INFO("G (" << shape[0] << ", " << shape[1] << "), " << steps << " passes: largest difference "
                 << max_abs_diff(ours, oracle));
      CHECK(ours.dtype() == torch::kDouble);
      CHECK(ours.sizes() == G.sizes());
      CHECK(max_abs_diff(ours, oracle) < 1e-10);
    }
  }
}

TEST_CASE("newton_schulz_of_zero_is_zero_and_low_rank_stays_low_rank", "[muon]") {
  const auto zero = zeropower_via_newtonschulz(torch::zeros({5, 3}));
  CHECK(torch::equal(zero, torch::zeros({5, 3})));
  // A rank-2 matrix: the polynomial maps a zero singular value to zero, so the rank stays 2.
  torch::manual_seed(2);
  const auto low = torch::randn({12, 2}, torch::kDouble).mm(torch::randn({2, 9}, torch::kDouble));
  const auto s = torch::linalg_svdvals(zeropower_via_newtonschulz(low));
  CHECK(s[1].item<double>() > 0.3);
  CHECK(s[2].item<double>() < 1e-10);
}

TEST_CASE("newton_schulz_rejects_what_is_not_a_matrix", "[muon]") {
  CHECK_THROWS_AS(zeropower_via_newtonschulz(torch::randn({2, 3, 4})), g2c::ValueError);
  CHECK_THROWS_AS(zeropower_via_newtonschulz(torch::tensor(1.0)), g2c::ValueError);
}

TEST_CASE("muon_steps_equal_a_hand_loop_with_the_svd_oracle", "[muon]") {
  // Three matrices of different shapes, one bias on the AdamW side, weight decay and momentum, a
  // parameter left without a gradient at step 2: five steps against a loop written from the
  // lesson's formulas, in float64.
  torch::manual_seed(3);
  const std::vector<std::vector<std::int64_t>> shapes{{6, 4}, {4, 6}, {5, 5}};
  std::vector<torch::Tensor> ours, reference, momentum;
  for (const auto& shape : shapes) {
    const auto start = torch::randn(shape, torch::kDouble);
    ours.push_back(start.clone().requires_grad_(true));
    reference.push_back(start.clone());
    momentum.push_back(torch::zeros(shape, torch::kDouble));
  }
  auto bias = torch::randn({4}, torch::kDouble).requires_grad_(true);
  auto bias_reference = bias.detach().clone().requires_grad_(true);
  const double lr = 0.03, mu = 0.9, decay = 0.1;
  Muon optimizer(ours, {bias},
                 MuonOptions().lr(lr).momentum(mu).weight_decay(decay).adamw_lr(1e-2));
  g2c::nn::AdamW adamw_reference({bias_reference}, 1e-2);
  for (int step = 0; step < 5; ++step) {
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const bool unused = step == 2 && i == 1;
      const auto g = torch::randn(shapes[i], torch::kDouble);
      if (unused) {
        ours[i].mutable_grad() = torch::Tensor();
        continue;
      }
      ours[i].mutable_grad() = g.clone();
      momentum[i] = mu * momentum[i] + g;
      const double rows = static_cast<double>(shapes[i][0]);
      const double cols = static_cast<double>(shapes[i][1]);
      reference[i] = reference[i] * (1 - lr * decay) -
                     lr * std::sqrt(std::max(1.0, rows / cols)) *
                         newton_schulz_by_svd(momentum[i], 5, g2c::muon::EPS);
    }
    const auto gb = torch::randn({4}, torch::kDouble);
    bias.mutable_grad() = gb.clone();
    bias_reference.mutable_grad() = gb.clone();
    optimizer.step();
    adamw_reference.step();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      INFO("step " << step << ", matrix " << i);
      CHECK(max_abs_diff(ours[i], reference[i]) < 1e-10);
      CHECK(max_abs_diff(optimizer.momentum_buffers[i], momentum[i]) < 1e-12);
    }
    CHECK(max_abs_diff(bias, bias_reference) < 1e-12);
  }
  CHECK(optimizer.step_count == 5);
  CHECK(optimizer.adamw.step_count == 5);
}

TEST_CASE("muon_rejects_bad_options_by_name", "[muon]") {
  const auto W = torch::zeros({2, 2}).requires_grad_(true);
  const auto message = [&](const MuonOptions& options) {
    try {
      Muon({W}, {}, options);
    } catch (const g2c::ValueError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(message(MuonOptions().lr(-1)), Catch::Contains("lr must be >= 0"));
  CHECK_THAT(message(MuonOptions().momentum(1.0)), Catch::Contains("momentum must lie in [0, 1)"));
  CHECK_THAT(message(MuonOptions().ns_steps(0)), Catch::Contains("ns_steps must be >= 1"));
  CHECK_THAT(message(MuonOptions().weight_decay(std::nan(""))), Catch::Contains("weight_decay"));
  try {
    Muon({torch::zeros({3, 2, 2})});
    FAIL("a 3-D Muon parameter was accepted");
  } catch (const g2c::ValueError& error) {
    CHECK_THAT(error.what(), Catch::Contains("[3, 2, 2]") && Catch::Contains("adamw_params"));
  }
}

TEST_CASE("partition_sends_linear_weights_to_muon_and_the_rest_to_adamw", "[muon]") {
  auto model = g2c::transformer::TransformerLM(
      g2c::transformer::TransformerLMOptions(/*vocab_size=*/20, /*embedding_dim=*/8,
                                             /*num_layers=*/2, /*num_heads=*/2,
                                             /*max_seq_len=*/16));
  const auto groups = g2c::muon::muon_partition(*model);
  // Per block: q, k, v and output projections, the feed-forward's two layers.
  CHECK(groups.muon.size() == 12);
  for (const auto& name : groups.muon_names) {
    INFO(name);
    CHECK(name.substr(name.size() - 2) == ".W");
    CHECK(name.rfind("blocks.", 0) == 0);
  }
  std::int64_t listed = 0;
  for (const auto& name : groups.adamw_names) {
    INFO(name);
    CHECK(name.substr(name.size() - 2) != ".W");
    ++listed;
  }
  CHECK(listed + 12 == static_cast<std::int64_t>(model->parameters().size()));
  CHECK(groups.adamw_names.front() == "token_embed.weight");
  // The violation the exercise makes on purpose: the two tables join the matrices.
  const auto violated = g2c::muon::muon_partition(*model, /*tables_to_muon=*/true);
  CHECK(violated.muon.size() == 14);
  CHECK(violated.muon_names.front() == "token_embed.weight");
  CHECK(violated.muon_names[1] == "pos_embed.weight");
  // Frozen parameters go to neither side.
  for (auto& p : model->parameters()) p.requires_grad_(false);
  const auto frozen = g2c::muon::muon_partition(*model);
  CHECK(frozen.muon.empty());
  CHECK(frozen.adamw.empty());
  CHECK_THROWS_AS(g2c::muon::scheduled_muon(*model, 0.02, 3e-4, 0.0), g2c::ValueError);
}

TEST_CASE("muon_keeps_one_buffer_per_matrix_where_adamw_keeps_two", "[muon]") {
  auto model = g2c::testing::model_with_seed(4, /*embedding_dim=*/8);
  const auto groups = g2c::muon::muon_partition(*model);
  std::int64_t matrix_elements = 0, other_elements = 0;
  for (const auto& p : groups.muon) matrix_elements += p.numel();
  for (const auto& p : groups.adamw) other_elements += p.numel();
  const Muon muon(groups.muon, groups.adamw);
  const g2c::nn::AdamW adamw(model->parameters(), 3e-4);
  CHECK(g2c::muon::state_bytes(muon) == 4 * (matrix_elements + 2 * other_elements));
  CHECK(g2c::muon::state_bytes(adamw) == 4 * 2 * (matrix_elements + other_elements));
}

TEST_CASE("trainer_muon_schedules_both_sides_and_trains", "[muon]") {
  auto model = g2c::testing::model_with_seed(5, /*embedding_dim=*/16);
  const auto options = g2c::testing::resumable_options(/*max_steps=*/30)
                           .optimizer("MUON")
                           .max_lr(0.02)
                           .min_lr(0.002)
                           .adamw_lr(4e-3);
  g2c::pretraining::Trainer trainer(model, options);
  CHECK(trainer.optimizer_name == "muon");
  auto* muon = dynamic_cast<Muon*>(trainer.optimizer.get());
  REQUIRE(muon != nullptr);
  CHECK(muon->muon_params.size() == 6);
  CHECK(g2c::pretraining::trainer_options_json(options)["adamw_lr"] == 4e-3);
  auto adamw_options = options;
  CHECK_FALSE(g2c::pretraining::trainer_options_json(adamw_options.optimizer("adamw"))
                  .contains("adamw_lr"));

  // A sequence that repeats every 12 tokens: learnable, so the loss must fall well below ln 12.
  const auto ids = torch::arange(400, torch::kLong).remainder(12);
  const double first = trainer.evaluate(ids);
  for (int step = 0; step < 30; ++step) {
    const double scheduled = trainer.lr();
    trainer.train_step(ids);
    INFO("step " << step);
    // The schedule wrote the Muon side's lr; the AdamW side followed by the same factor.
    CHECK(muon->lr == scheduled);
    CHECK(std::abs(muon->adamw.lr - 4e-3 * scheduled / 0.02) < 1e-15);
  }
  CHECK(muon->step_count == 30);
  const double last = trainer.evaluate(ids);
  INFO("held-out loss " << first << " -> " << last);
  CHECK(last < 0.5 * first);
}

TEST_CASE("trainer_muon_checkpoint_resumes_exactly", "[muon]") {
  const auto folder = g2c::testing::temporary_folder("muon-resume");
  const auto options =
      g2c::testing::resumable_options(/*max_steps=*/12).optimizer("muon").max_lr(0.02);
  torch::manual_seed(8);
  const auto ids = torch::randint(0, 12, {300}, torch::kLong);

  auto straight_model = g2c::testing::model_with_seed(9);
  g2c::pretraining::Trainer straight(straight_model, options);
  straight.train(ids);

  auto first_model = g2c::testing::model_with_seed(9);
  auto first_options = options;
  first_options.generator(at::make_generator<at::CPUGeneratorImpl>(7));
  g2c::pretraining::Trainer first(first_model, first_options);
  for (int i = 0; i < 5; ++i) first.train_step(ids);
  first.save_checkpoint(folder / "muon.ckpt");

  auto resumed_model = g2c::testing::model_with_seed(10);  // other weights: the file restores them
  auto resumed_options = options;
  resumed_options.generator(at::make_generator<at::CPUGeneratorImpl>(99));
  g2c::pretraining::Trainer resumed(resumed_model, resumed_options);
  resumed.load_checkpoint(folder / "muon.ckpt");
  auto* muon = dynamic_cast<Muon*>(resumed.optimizer.get());
  REQUIRE(muon != nullptr);
  CHECK(muon->step_count == 5);
  CHECK(muon->adamw.step_count == 5);
  resumed.train(ids);

  const auto a = straight_model->parameters();
  const auto b = resumed_model->parameters();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(torch::equal(a[i], b[i]));

  // A checkpoint of another optimizer is refused by name.
  auto adamw_model = g2c::testing::model_with_seed(9);
  g2c::pretraining::Trainer adamw(adamw_model, g2c::testing::resumable_options(12));
  CHECK_THROWS_WITH(adamw.load_checkpoint(folder / "muon.ckpt"),
                    Catch::Contains("optimizer 'muon'"));
  std::filesystem::remove_all(folder);
}
