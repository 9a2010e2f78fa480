// Beyond muon, exercise 1 — watch the spectrum flatten. A random (128, 64) matrix and a nearly
// rank-1 one (one loud direction over faint noise, the shape of an early-training momentum) go
// through 1, 2, 3 and 5 Newton–Schulz passes (your zeropower_via_newtonschulz); their singular
// values are measured after each with LibTorch's SVD, beside the distance to the exact U Vᵀ and the
// scalar polynomial f(s) = a s + b s³ + c s⁵ that every pass applies to each singular value.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/core/errors.h"
#include "g2c/muon/optimizer.h"

namespace exercise_beyond_muon_spectrum {

namespace {

using g2c::exercises::Figure;
using g2c::exercises::Series;
using g2c::exercises::vector_json;

/// f applied `passes` times to s (the scalar twin of `passes` Newton–Schulz passes).
double polynomial(double s, int passes) {
  const auto [a, b, c] = g2c::muon::NS_COEFFS;
  for (int i = 0; i < passes; ++i) s = a * s + b * s * s * s + c * std::pow(s, 5);
  return s;
}

/// The singular values of G / ‖G‖_F and of NS(G) after each number of passes, with each result's
/// relative distance to U Vᵀ.
nlohmann::json spectra(const std::string& name, const torch::Tensor& G,
                       const std::vector<int>& passes) {
  const auto [U, S, Vh] = torch::linalg_svd(G.to(torch::kDouble), /*full_matrices=*/false);
  const auto polar = U.mm(Vh);  // the exact orthogonal factor Muon approximates
  nlohmann::json entry = {{"name", name},
                          {"shape", {G.size(0), G.size(1)}},
                          {"normalised", vector_json(S / S.pow(2).sum().sqrt())},
                          {"condition_number", (S[0] / S[-1]).item<double>()},
                          {"after", nlohmann::json::array()}};
  for (const int k : passes) {
    const auto X = g2c::muon::zeropower_via_newtonschulz(G, k).to(torch::kDouble);
    const auto s = torch::linalg_svdvals(X);
    entry["after"].push_back(
        {{"passes", k},
         {"singular_values", vector_json(s)},
         {"min", s.min().item<double>()},
         {"max", s.max().item<double>()},
         {"mean", s.mean().item<double>()},
         {"distance_to_uvt", ((X - polar).norm() / polar.norm()).item<double>()}});
    fmt::print(
        "{:<13} {} pass{}: singular values {:.3f} .. {:.3f} (mean {:.3f}), ‖NS − U Vᵀ‖ / "
        "‖U Vᵀ‖ = {:.3f}\n",
        name, k, k == 1 ? " " : "es", s.min().item<double>(), s.max().item<double>(),
        s.mean().item<double>(), entry["after"].back()["distance_to_uvt"].get<double>());
  }
  return entry;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond muon, exercise 1: singular values of a random and of a nearly rank-1 matrix after\n"
      "1, 2, 3 and 5 Newton-Schulz passes (zeropower_via_newtonschulz), with the polynomial each\n"
      "pass applies. Writes spectrum.json and spectrum_*.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-muon";
  g2c::exercises::add_common_options(app, options);
  std::int64_t rows = 128, cols = 64;
  double noise = 0.01;
  std::vector<int> passes = {1, 2, 3, 5};
  app.add_option("--rows", rows, "Rows of both matrices").range(1, 4096);
  app.add_option("--cols", cols, "Columns of both matrices").range(1, 4096);
  app.add_option("--noise", noise,
                 "Size (Frobenius norm) of the noise under the nearly rank-1 matrix's one unit "
                 "direction")
      .range(1e-6, 1.0);
  app.add_option("--passes", passes, "Numbers of Newton-Schulz passes to measure, each 1 to 50");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    for (const int k : passes) {
      if (k < 1 || k > 50) {
        throw g2c::ValueError(fmt::format("--passes takes numbers from 1 to 50, got {}", k));
      }
    }
    std::sort(passes.begin(), passes.end());
    passes.erase(std::unique(passes.begin(), passes.end()), passes.end());
    torch::manual_seed(options.seed);
    const auto random = torch::randn({rows, cols});
    // u vᵀ with unit vectors, plus Gaussian noise whose whole Frobenius norm is `noise`.
    const auto u = torch::nn::functional::normalize(
        torch::randn({rows, 1}), torch::nn::functional::NormalizeFuncOptions().dim(0));
    const auto v = torch::nn::functional::normalize(
        torch::randn({cols, 1}), torch::nn::functional::NormalizeFuncOptions().dim(0));
    auto noise_matrix = torch::randn({rows, cols});
    noise_matrix = noise_matrix * (noise / noise_matrix.norm().item<double>());
    const auto rank_one = u.mm(v.t()) + noise_matrix;

    auto result = g2c::exercises::run_metadata("beyond_muon_spectrum", options, device);
    result["config"] = {{"rows", rows}, {"cols", cols}, {"noise", noise}, {"passes", passes}};
    result["coefficients"] = g2c::muon::NS_COEFFS;
    result["matrices"] = {spectra("random", random, passes),
                          spectra("nearly rank-1", rank_one, passes)};

    // The scalar map, on [0, 1.2]: what each pass does to one singular value.
    std::vector<double> grid;
    for (int i = 0; i <= 240; ++i) grid.push_back(i * 0.005);
    nlohmann::json curves = nlohmann::json::array();
    for (const int k : passes) {
      std::vector<double> y;
      for (const double s : grid) y.push_back(polynomial(s, k));
      curves.push_back({{"passes", k}, {"f", y}});
    }
    const auto [a, b, c] = g2c::muon::NS_COEFFS;
    result["polynomial"] = {
        {"s", grid}, {"curves", curves}, {"slope_at_zero", a}, {"f_of_one", a + b + c}};
    fmt::print(
        "one pass: f'(0) = a = {:.4f} (a small singular value grows {:.2f} times), f(1) = "
        "a + b + c = {:.4f}\n",
        a, a, a + b + c);

    std::vector<g2c::exercises::Figure> figures;
    for (int m = 0; m < 2; ++m) {
      const std::string name = result["matrices"][m]["name"];
      auto figure =
          Figure::line(m == 0 ? "spectrum_random.png" : "spectrum_rank1.png",
                       fmt::format("Singular values of a {} ({}, {}) matrix", name, rows, cols),
                       "index (largest first)", "singular value");
      figure.add(Series("G / ‖G‖_F", nullptr, fmt::format("/matrices/{}/normalised", m))
                     .style("--")
                     .color("gray"));
      for (std::size_t i = 0; i < passes.size(); ++i) {
        figure.add(Series(fmt::format("after {} pass{}", passes[i], passes[i] == 1 ? "" : "es"),
                          nullptr, fmt::format("/matrices/{}/after/{}/singular_values", m, i)));
      }
      if (m == 1) figure.logy();
      figure.hline(1.0, "1");
      figures.push_back(figure);
    }
    auto map = Figure::line("spectrum_polynomial.png",
                            "What the passes do to one singular value: f(s) = a s + b s³ + c s⁵",
                            "singular value in", "singular value out");
    for (std::size_t i = 0; i < passes.size(); ++i) {
      map.add(Series(fmt::format("{} pass{}", passes[i], passes[i] == 1 ? "" : "es"),
                     "/polynomial/s", fmt::format("/polynomial/curves/{}/f", i)));
    }
    map.hline(1.0, "1");
    figures.push_back(map);
    result["figures"] = g2c::exercises::figures(figures);
    const auto path = g2c::exercises::save_result(options, "spectrum.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_muon_spectrum
