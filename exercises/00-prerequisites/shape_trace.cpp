// Exercise 00 — the prerequisite review, worked by LibTorch. Prints the answer to each question of
// exercises/00-prerequisites/README.md: (1) the shapes of a batch of token ids through an
// embedding lookup and a projection to the vocabulary, (2) where an element of a (B, T, D) tensor
// lives in row-major memory, (3) a 2×3 @ 3×2 matmul by hand and by torch::matmul, (4) the chain
// rule on a two-layer scalar net by hand and by autograd, (5) softmax and negative log-likelihood
// of the logits [2, 1, 0]; then (6) a tiny MLP on a batch with the shape of every intermediate and
// the softmax and NLL of its first row written out. Only LibTorch's own operators: no course code,
// so it runs on day one. Writes shape_trace.json.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exercises/common/cli.h"
#include "exercises/common/tensor_json.h"

namespace exercise_00_shape_trace {

namespace {

/// "(4, 8, 16)" for a tensor of that shape; "()" for a scalar.
std::string shape(const torch::Tensor& t) {
  std::vector<std::string> sizes;
  for (const auto size : t.sizes()) sizes.push_back(std::to_string(size));
  return fmt::format("({})", fmt::join(sizes, ", "));
}

/// Prints one line of a shape trace and records it.
void trace(nlohmann::json& log, const std::string& name, const torch::Tensor& t,
           const std::string& note = "") {
  if (note.empty()) {
    fmt::print("  {:<34} {}\n", name, shape(t));
  } else {
    fmt::print("  {:<34} {:<14} {}\n", name, shape(t), note);
  }
  log.push_back({{"name", name}, {"shape", t.sizes().vec()}, {"note", note}});
}

nlohmann::json part1_shapes(const torch::Device& device) {
  fmt::print("\n1. Shapes. B = 4 sequences of T = 8 token ids, D = 16, V = 1000\n");
  constexpr std::int64_t B = 4, T = 8, D = 16, V = 1000;
  nlohmann::json log = nlohmann::json::array();
  const auto ids = torch::randint(0, V, {B, T}, torch::dtype(torch::kLong).device(device));
  const auto table = torch::randn({V, D}, device);       // one row per token id
  const auto projection = torch::randn({D, V}, device);  // back to one score per token id
  trace(log, "token ids", ids, "B rows of T ids");
  trace(log, "embedding table", table, "V rows of D numbers");
  const auto x = table.index({ids});  // each id replaced by its row
  trace(log, "table[ids]", x, "lookup adds D: (B, T) -> (B, T, D)");
  trace(log, "projection", projection);
  const auto logits = torch::matmul(x, projection);
  trace(log, "logits = table[ids] @ projection", logits, "(B, T, D) @ (D, V): D sums away");
  return log;
}

nlohmann::json part2_storage() {
  fmt::print("\n2. Row-major storage\n");
  const auto m = torch::arange(6, torch::kFloat).reshape({2, 3});
  const auto t = m.t();
  fmt::print("  (2, 3) {}: strides ({}, {}), element [i][j] at offset 3·i + j\n",
             "[[0, 1, 2], [3, 4, 5]]", m.stride(0), m.stride(1));
  fmt::print("  its transpose (3, 2): strides ({}, {}), contiguous: {} (a view, nothing moved)\n",
             t.stride(0), t.stride(1), t.is_contiguous());
  const auto big = torch::arange(4 * 8 * 16, torch::kFloat).reshape({4, 8, 16});
  const std::int64_t offset = 1 * big.stride(0) + 2 * big.stride(1) + 3 * big.stride(2);
  const auto value = big.index({1, 2, 3}).item<float>();
  fmt::print("  (4, 8, 16): strides ({}, {}, {}); [1][2][3] at offset 1·{} + 2·{} + 3 = {}",
             big.stride(0), big.stride(1), big.stride(2), big.stride(0), big.stride(1), offset);
  fmt::print(" (the value stored there: {})\n", value);
  return {{"strides_2x3", m.strides().vec()},
          {"strides_transpose", t.strides().vec()},
          {"transpose_contiguous", t.is_contiguous()},
          {"strides_4x8x16", big.strides().vec()},
          {"offset_1_2_3", offset}};
}

nlohmann::json part3_matmul() {
  fmt::print("\n3. A 2×3 @ 3×2 matmul by hand\n");
  const std::vector<std::vector<double>> a = {{1, 2, 3}, {4, 5, 6}};
  const std::vector<std::vector<double>> b = {{10, 20}, {30, 40}, {50, 60}};
  nlohmann::json by_hand = nlohmann::json::array();
  for (std::size_t i = 0; i < 2; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (std::size_t j = 0; j < 2; ++j) {
      double sum = 0;
      std::vector<std::string> terms;
      for (std::size_t k = 0; k < 3; ++k) {
        sum += a[i][k] * b[k][j];
        terms.push_back(fmt::format("{}·{}", a[i][k], b[k][j]));
      }
      fmt::print("  C[{}][{}] = row {} of A · column {} of B = {} = {}\n", i, j, i, j,
                 fmt::join(terms, " + "), sum);
      row.push_back(sum);
    }
    by_hand.push_back(row);
  }
  const auto product = torch::matmul(torch::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}).reshape({2, 3}),
                                     torch::tensor({10.0, 20.0, 30.0, 40.0, 50.0, 60.0})
                                         .reshape({3, 2}));  // (2, 3) @ (3, 2) -> (2, 2)
  fmt::print("  torch::matmul: {} of shape {}\n", g2c::exercises::matrix_json(product).dump(),
             shape(product));
  return {{"by_hand", by_hand}, {"torch", g2c::exercises::matrix_json(product)}};
}

nlohmann::json part4_chain_rule() {
  fmt::print(
      "\n4. The chain rule on a two-layer net: h = tanh(w1·x + b1), y = w2·h + b2, "
      "L = (y − t)²\n");
  const double x = 1.0, w1 = 0.5, b1 = 0.0, w2 = 2.0, b2 = 0.5, target = 1.0;
  const double z = w1 * x + b1, h = std::tanh(z), y = w2 * h + b2;
  const double loss = (y - target) * (y - target);
  const double dl_dy = 2 * (y - target);
  const double dl_dh = dl_dy * w2;
  const double dh_dz = 1 - h * h;
  const double dl_dz = dl_dh * dh_dz;
  fmt::print("  x = {}, w1 = {}, b1 = {}, w2 = {}, b2 = {}, t = {}\n", x, w1, b1, w2, b2, target);
  fmt::print("  forward:  z = {:.6f}, h = tanh(z) = {:.6f}, y = {:.6f}, L = {:.6f}\n", z, h, y,
             loss);
  fmt::print("  backward: dL/dy = 2(y − t) = {:.6f}\n", dl_dy);
  fmt::print("            dL/dw2 = dL/dy · h = {:.6f}, dL/db2 = dL/dy = {:.6f}\n", dl_dy * h,
             dl_dy);
  fmt::print("            dL/dh = dL/dy · w2 = {:.6f}, dh/dz = 1 − h² = {:.6f}\n", dl_dh, dh_dz);
  fmt::print("            dL/dw1 = dL/dh · dh/dz · x = {:.6f}, dL/db1 = {:.6f}\n", dl_dz * x,
             dl_dz);
  // The same by autograd, in float64.
  const auto opts = torch::dtype(torch::kDouble).requires_grad(true);
  const auto tw1 = torch::tensor(w1, opts), tb1 = torch::tensor(b1, opts);
  const auto tw2 = torch::tensor(w2, opts), tb2 = torch::tensor(b2, opts);
  const auto ty = tw2 * torch::tanh(tw1 * x + tb1) + tb2;
  const auto tloss = (ty - target).pow(2);
  tloss.backward();
  fmt::print("  autograd: dL/dw1 = {:.6f}, dL/db1 = {:.6f}, dL/dw2 = {:.6f}, dL/db2 = {:.6f}\n",
             tw1.grad().item<double>(), tb1.grad().item<double>(), tw2.grad().item<double>(),
             tb2.grad().item<double>());
  return {{"inputs", {{"x", x}, {"w1", w1}, {"b1", b1}, {"w2", w2}, {"b2", b2}, {"t", target}}},
          {"loss", loss},
          {"by_hand", {{"w1", dl_dz * x}, {"b1", dl_dz}, {"w2", dl_dy * h}, {"b2", dl_dy}}},
          {"autograd",
           {{"w1", tw1.grad().item<double>()},
            {"b1", tb1.grad().item<double>()},
            {"w2", tw2.grad().item<double>()},
            {"b2", tb2.grad().item<double>()}}}};
}

/// "[0.6652, 0.2447, 0.0900]": a 1-D tensor to four decimals.
std::string row_text(const torch::Tensor& v) {
  const auto flat = v.detach().to(torch::kCPU, torch::kDouble);
  std::vector<std::string> out;
  for (std::int64_t i = 0; i < flat.numel(); ++i) {
    out.push_back(fmt::format("{:.4f}", flat[i].item<double>()));
  }
  return fmt::format("[{}]", fmt::join(out, ", "));
}

/// Softmax and NLL of one row of logits, each step printed.
nlohmann::json softmax_nll(const torch::Tensor& row, std::int64_t target) {
  const auto z = row.to(torch::kCPU, torch::kDouble);
  const auto shifted = z - z.max();
  const auto e = shifted.exp();
  const auto total = e.sum().item<double>();
  const auto p = e / total;
  const double nll = -std::log(p[target].item<double>());
  fmt::print("  logits z            {}\n", row_text(z));
  fmt::print("  z − max(z)          {}\n", row_text(shifted));
  fmt::print("  exp(z − max)        {}   sum {:.4f}\n", row_text(e), total);
  fmt::print("  p = exp / sum       {}\n", row_text(p));
  fmt::print("  target {}: NLL = −log p[{}] = −log {:.4f} = {:.4f}\n", target, target,
             p[target].item<double>(), nll);
  return {{"logits", g2c::exercises::vector_json(z)},
          {"probabilities", g2c::exercises::vector_json(p)},
          {"target", target},
          {"nll", nll}};
}

nlohmann::json part6_mlp(const torch::Device& device, nlohmann::json& log) {
  fmt::print("\n6. A tiny MLP on a batch: B = 4 examples of 3 features -> 5 hidden -> 3 classes\n");
  const auto f = torch::TensorOptions().device(device);
  const auto x = torch::randn({4, 3}, f);
  const auto targets = torch::tensor({0, 2, 1, 0}, torch::dtype(torch::kLong).device(device));
  const auto w1 = (torch::randn({3, 5}, f) * 0.5).requires_grad_();
  const auto b1 = torch::zeros({5}, f).requires_grad_();
  const auto w2 = (torch::randn({5, 3}, f) * 0.5).requires_grad_();
  const auto b2 = torch::zeros({3}, f).requires_grad_();
  trace(log, "x", x, "B rows of D_in features");
  trace(log, "W1", w1, "(D_in, H)");
  trace(log, "b1", b1, "broadcast over the batch");
  const auto pre = torch::matmul(x, w1) + b1;
  trace(log, "x @ W1 + b1", pre, "(B, D_in) @ (D_in, H) + (H)");
  const auto hidden = torch::relu(pre);
  trace(log, "relu", hidden, "elementwise: same shape");
  trace(log, "W2", w2, "(H, C)");
  const auto logits = torch::matmul(hidden, w2) + b2;
  trace(log, "logits = h @ W2 + b2", logits, "one score per class");
  const auto probs = torch::softmax(logits, /*dim=*/-1);
  trace(log, "softmax(logits, dim=-1)", probs, "each row sums to 1");
  const auto picked = probs.gather(/*dim=*/1, targets.unsqueeze(1)).squeeze(1);
  trace(log, "p[target] per row", picked, "gather along the classes");
  const auto nll = -picked.log();
  trace(log, "NLL per row", nll);
  const auto loss = nll.mean();
  trace(log, "loss = mean NLL", loss, "a scalar: backward starts here");
  loss.backward();
  trace(log, "W1.grad", w1.grad(), "the parameter's own shape");
  trace(log, "W2.grad", w2.grad());
  fmt::print("\n  row 0 by hand (target {}):\n", targets[0].item<std::int64_t>());
  auto row = softmax_nll(logits[0].detach(), targets[0].item<std::int64_t>());
  fmt::print("  LibTorch: p = {}, NLL = {:.4f}; mean loss over the batch {:.4f}\n",
             row_text(probs[0]), nll[0].item<double>(), loss.item<double>());
  row["libtorch_nll"] = nll[0].item<double>();
  return {{"row0", row}, {"loss", loss.item<double>()}};
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 00: the prerequisite review worked by LibTorch — shapes through an embedding and a\n"
      "projection, row-major storage, a 2×3 @ 3×2 matmul by hand, the chain rule on a two-layer\n"
      "net, softmax and NLL, and a tiny MLP with every shape. Writes shape_trace.json."};
  g2c::exercises::CommonOptions options;
  options.out = "results/00-prerequisites";
  g2c::exercises::add_common_options(app, options);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    nlohmann::json mlp_shapes = nlohmann::json::array();
    auto result = g2c::exercises::run_metadata("00_shape_trace", options, device);
    result["shapes"] = part1_shapes(device);
    result["storage"] = part2_storage();
    result["matmul"] = part3_matmul();
    result["chain_rule"] = part4_chain_rule();
    fmt::print("\n5. Softmax and negative log-likelihood\n");
    result["softmax"] = softmax_nll(torch::tensor({2.0, 1.0, 0.0}), 0);
    result["mlp"] = part6_mlp(device, mlp_shapes);
    result["mlp"]["shapes"] = mlp_shapes;
    result["figures"] = nlohmann::json::array();
    g2c::exercises::save_result(options, "shape_trace.json", result);
  });
}

}  // namespace exercise_00_shape_trace
