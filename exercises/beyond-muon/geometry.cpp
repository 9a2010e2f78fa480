// Beyond muon, exercise 2 — AdamW's update against Muon's, geometrically. A nearly rank-1 momentum
// M (one loud direction u vᵀ over faint noise, as early in training) is handed to both optimizers
// as a gradient: module 03b's AdamW (your AdamW::step) and Muon (your Muon::step), each at lr 1
// from a zero weight, so the weight's change is the update itself. Their spectra, and the share of
// each update's energy that lies along M's own singular directions, say where each spends its step.
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/core/errors.h"
#include "g2c/muon/optimizer.h"
#include "g2c/nn/optim.h"

namespace exercise_beyond_muon_geometry {

namespace {

using g2c::exercises::Figure;
using g2c::exercises::Series;
using g2c::exercises::vector_json;

/// The change one step of `optimizer` makes to `weight` (zero at the start) whose gradient is `g`.
torch::Tensor first_update(g2c::nn::Optimizer& optimizer, torch::Tensor& weight,
                           const torch::Tensor& g) {
  const auto before = weight.detach().clone();
  weight.mutable_grad() = g.clone();
  optimizer.step();
  return weight.detach() - before;
}

/// Where an update's energy goes, measured in the singular directions (U, V) of the momentum.
nlohmann::json describe(const std::string& name, const torch::Tensor& update,
                        const torch::Tensor& U, const torch::Tensor& Vh) {
  const auto d = update.to(torch::kDouble);
  const auto unit = d / d.norm();
  const auto s = torch::linalg_svdvals(unit);
  const auto p = s.pow(2) / s.pow(2).sum();
  const double effective_rank = std::exp(-(p * (p + 1e-300).log()).sum().item<double>());
  // (u_i ᵀ Δ v_i)² / ‖Δ‖² for the momentum's own directions i: the diagonal of Uᵀ Δ V.
  const auto along = U.t().mm(unit).mm(Vh.t()).diagonal().pow(2);
  const double top = along[0].item<double>();
  const double rms = d.pow(2).mean().sqrt().item<double>();
  fmt::print(
      "{:<6} update: {:5.1f} % of its energy along the momentum's loudest direction, "
      "effective rank {:5.1f} of {}, entries of RMS {:.3f} (largest {:.3f})\n",
      name, 100.0 * top, effective_rank, s.numel(), rms, d.abs().max().item<double>());
  return {{"name", name},
          {"singular_values", vector_json(s)},
          {"energy_along_top_direction", top},
          {"energy_along_momentum_directions", vector_json(along)},
          {"effective_rank", effective_rank},
          {"rms_entry", rms},
          {"max_entry", d.abs().max().item<double>()},
          {"frobenius_norm", d.norm().item<double>()}};
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond muon, exercise 2: the first update of AdamW and of Muon for a nearly rank-1\n"
      "momentum, compared by their spectra and by where their energy goes. Writes\n"
      "geometry.json and geometry_*.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-muon";
  g2c::exercises::add_common_options(app, options);
  std::int64_t rows = 64, cols = 32;
  double noise = 0.05;
  app.add_option("--rows", rows, "Rows of the momentum matrix").range(1, 2048);
  app.add_option("--cols", cols, "Columns of the momentum matrix").range(1, 2048);
  app.add_option("--noise", noise,
                 "Size (Frobenius norm) of the noise under the momentum's one unit direction")
      .range(0.0, 1.0);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    torch::manual_seed(options.seed);
    const auto u = torch::randn({rows, 1});
    const auto v = torch::randn({cols, 1});
    auto noise_matrix = torch::randn({rows, cols});
    noise_matrix = noise_matrix * (noise / noise_matrix.norm().item<double>());
    const auto momentum = u.mm(v.t()) / (u.norm() * v.norm()) + noise_matrix;  // (rows, cols)
    const auto [U, S, Vh] = torch::linalg_svd(momentum.to(torch::kDouble), false);

    auto adamw_weight = torch::zeros({rows, cols}).requires_grad_(true);
    g2c::nn::AdamW adamw({adamw_weight}, /*lr=*/1.0);
    auto muon_weight = torch::zeros({rows, cols}).requires_grad_(true);
    g2c::muon::Muon muon({muon_weight}, {}, g2c::muon::MuonOptions().lr(1.0));
    const auto adamw_update = first_update(adamw, adamw_weight, momentum);
    const auto muon_update = first_update(muon, muon_weight, momentum);

    const auto s = S / S.norm();
    fmt::print("momentum ({}, {}): its loudest direction holds {:.1f} % of its energy\n", rows,
               cols, 100.0 * s[0].pow(2).item<double>());
    auto result = g2c::exercises::run_metadata("beyond_muon_geometry", options, device);
    result["config"] = {{"rows", rows}, {"cols", cols}, {"noise", noise}, {"lr", 1.0}};
    result["momentum"] = {{"singular_values", vector_json(s)},
                          {"energy_along_top_direction", s[0].pow(2).item<double>()}};
    result["updates"] = {describe("AdamW", adamw_update, U, Vh),
                         describe("Muon", muon_update, U, Vh)};
    // AdamW's first step is m̂ / (√v̂ + ε) = g / (|g| + ε): the sign of every entry, up to ε.
    const auto sign_rule = momentum / (momentum.abs() + 1e-8);
    result["adamw_is_sign"] = (adamw_update + sign_rule).abs().max().item<double>() < 1e-5;

    const std::int64_t shown = std::min<std::int64_t>(rows, cols);
    result["figures"] = g2c::exercises::figures(
        {Figure::line("geometry_spectra.png",
                      "Singular values of the momentum and of each first update (unit norm)",
                      "index (largest first)", "singular value")
             .add(
                 Series("momentum", nullptr, "/momentum/singular_values").style("--").color("gray"))
             .add(Series("AdamW update", nullptr, "/updates/0/singular_values").marker("o"))
             .add(Series("Muon update", nullptr, "/updates/1/singular_values").marker("s"))
             .logy(),
         Figure::line("geometry_energy.png",
                      fmt::format("Share of each update's energy along the momentum's {} "
                                  "directions",
                                  shown),
                      "momentum direction (loudest first)", "share of ‖update‖²")
             .add(Series("AdamW", nullptr, "/updates/0/energy_along_momentum_directions")
                      .marker("o"))
             .add(
                 Series("Muon", nullptr, "/updates/1/energy_along_momentum_directions").marker("s"))
             .logy()});
    const auto path = g2c::exercises::save_result(options, "geometry.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_muon_geometry
