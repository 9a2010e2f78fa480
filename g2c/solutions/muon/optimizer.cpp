// Beyond module muon — reference solution for g2c/muon/optimizer.cpp.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"
#include "g2c/muon/optimizer.h"

namespace g2c::muon {

torch::Tensor zeropower_via_newtonschulz(const torch::Tensor& G, std::int64_t steps, double eps) {
  if (G.dim() != 2) {
    throw ValueError(fmt::format(
        "zeropower_via_newtonschulz orthogonalises a matrix, got a tensor of shape {}; Muon "
        "updates only 2-D parameters (vectors and tables belong to its AdamW side)",
        G.sizes()));
  }
  const auto [a, b, c] = NS_COEFFS;
  auto X = G / (G.norm() + eps);  // singular values into [0, 1], the quintic's basin
  const bool transposed = X.size(0) > X.size(1);
  if (transposed) X = X.t();  // (rows, cols) -> (cols, rows): the Gram matrix below is the smaller
  for (std::int64_t i = 0; i < steps; ++i) {
    const auto A = X.mm(X.t());          // (r, r), r = min(rows, cols)
    const auto B = b * A + c * A.mm(A);  // (r, r)
    X = a * X + B.mm(X);                 // U f(S) Vᵀ
  }
  return transposed ? X.t() : X;
}

void Muon::step() {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < muon_params.size(); ++i) {
    auto& p = muon_params[i];
    const auto& g = p.grad();
    if (!g.defined()) continue;  // unused this step: its buffer keeps its place and its value
    auto& m = momentum_buffers[i];
    m.mul_(momentum).add_(g);  // the raw momentum, kept for the next step
    const auto O = zeropower_via_newtonschulz(m, ns_steps);
    const double rows = static_cast<double>(p.size(0));
    const double cols = static_cast<double>(p.size(1));
    const double scale = std::sqrt(std::max(1.0, rows / cols));
    if (weight_decay != 0.0) p.mul_(1.0 - lr * weight_decay);  // decoupled, as in AdamW
    p.add_(O, -lr * scale);
  }
  if (!adamw_params.empty()) adamw.step();
  ++step_count;
}

}  // namespace g2c::muon
