// Exercise 07.1 — self-attention by hand: three tokens, D = 2, non-causal. Prints every
// intermediate (Q, K, V, scores, scaled scores, weights, weighted sum, output) and checks that the
// manual computation equals the module's forward.
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/attention/self_attention.h"

namespace exercise_07_hand_compute {

namespace {

std::string show(const torch::Tensor& t) {
  std::ostringstream stream;
  stream << t.squeeze(0);
  return stream.str();
}

nlohmann::json rows(const torch::Tensor& t) {
  const auto matrix = t.squeeze(0).to(torch::kDouble).contiguous();
  nlohmann::json out = nlohmann::json::array();
  for (std::int64_t i = 0; i < matrix.size(0); ++i) {
    out.push_back(std::vector<double>(matrix[i].data_ptr<double>(),
                                      matrix[i].data_ptr<double>() + matrix.size(1)));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 07, exercise 1: self-attention on three tokens, step by step"};
  g2c::exercises::CommonOptions options;
  options.out = "results/07-attention";
  g2c::exercises::add_common_options(app, options);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    g2c::attention::SelfAttention attention(2, /*causal=*/false);
    attention->to(device);
    const auto x = torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}, {1.0f, 1.0f}})
                       .unsqueeze(0)
                       .to(device);  // (1, 3, 2)

    torch::NoGradGuard no_grad;
    const auto q = attention->q_proj(x), k = attention->k_proj(x),
               v = attention->v_proj(x);                        // (1, 3, 2)
    const auto scores = torch::matmul(q, k.transpose(-2, -1));  // (1, 3, 3)
    const auto scaled = scores / std::sqrt(2.0);
    const auto weights = torch::softmax(scaled, /*dim=*/-1);
    const auto mixed = torch::matmul(weights, v);  // (1, 3, 2)
    const auto manual = attention->out_proj(mixed);
    const auto module_output = attention(x);
    const double difference = (manual - module_output).abs().max().item<double>();

    const std::vector<std::pair<std::string, torch::Tensor>> stages = {
        {"x", x},
        {"Q = q_proj(x)", q},
        {"K = k_proj(x)", k},
        {"V = v_proj(x)", v},
        {"scores = Q Kᵀ", scores},
        {"scaled = scores / √2", scaled},
        {"weights = softmax(scaled, rows)", weights},
        {"weighted sum = weights V", mixed},
        {"output = out_proj(weighted sum)", manual}};
    for (const auto& [name, tensor] : stages) fmt::print("{}\n{}\n\n", name, show(tensor.cpu()));
    fmt::print("module forward\n{}\n\nmax |manual - forward| = {:.3g} ({})\n",
               show(module_output.cpu()), difference, difference <= 1e-5 ? "agree" : "DISAGREE");

    auto result = g2c::exercises::run_metadata("07_hand_compute", options, device);
    result["config"] = {{"embedding_dim", 2}, {"causal", false}, {"x", rows(x.cpu())}};
    nlohmann::json steps;
    for (const auto& [name, tensor] : stages)
      steps.push_back({{"name", name}, {"value", rows(tensor.cpu())}});
    result["steps"] = steps;
    result["module_output"] = rows(module_output.cpu());
    result["max_abs_difference"] = difference;
    result["agree"] = difference <= 1e-5;
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    const std::vector<std::string> tokens{"[1,0]", "[0,1]", "[1,1]"};
    result["figures"] = g2c::exercises::figures(
        {Figure::heatmaps("hand_compute_weights.png", "Attention weights of the three tokens")
             .columns(1)
             .width(5)
             .height(4)
             .add(Panel("/steps/6/value")
                      .title("weights (query row, key column)")
                      .xticklabels(tokens)
                      .yticklabels(tokens)
                      .range(0, 1))});
    const auto path = g2c::exercises::save_result(options, "hand_compute.json", result);
    g2c::exercises::plot_result(options, path);
    if (difference > 1e-5) throw std::runtime_error("the manual computation and forward disagree");
  });
}

}  // namespace exercise_07_hand_compute
