// Beyond module muon — your work: the Newton–Schulz orthogonaliser and Muon's hybrid step.
#include <algorithm>
#include <cmath>

#include "g2c/core/errors.h"
#include "g2c/muon/optimizer.h"

namespace g2c::muon {

torch::Tensor zeropower_via_newtonschulz(const torch::Tensor& G, std::int64_t steps, double eps) {
  // TODO: approximately U Vᵀ for G = U S Vᵀ, without an SVD. (rows, cols) -> (rows, cols).
  //   1. G must be a matrix: a g2c::ValueError naming its shape otherwise.
  //   2. X = G / (‖G‖_F + eps): every singular value lands in [0, 1], where the polynomial
  //      converges (without it the iteration blows up).
  //   3. When rows > cols, work on Xᵀ, so that A = X Xᵀ is the smaller (cols, cols) Gram matrix.
  //   4. `steps` times, with (a, b, c) = NS_COEFFS:  A = X Xᵀ;  X = a X + (b A + c A A) X.
  //   5. Transpose back if you transposed. The result has G's shape.
  // Operations: dim, norm, division, t (or transpose), matmul (or mm), multiplication, addition.
  // Hints, one step at a time: scripts/hint.sh muon zeropower_via_newtonschulz
  throw g2c::todo("zeropower_via_newtonschulz", "g2c/muon/optimizer.cpp", "muon");
}

void Muon::step() {
  // TODO: one hybrid step. With autograd off, for each Muon parameter p (index i) that has a
  // gradient g (skip the others; keep the index i so that momentum_buffers[i] stays p's):
  //   m ← μ m + g, in place on momentum_buffers[i] (μ = momentum);
  //   O = zeropower_via_newtonschulz(m, ns_steps) — a new tensor: the buffer keeps the raw
  //       momentum for the next step;
  //   p ← p (1 − lr · weight_decay), then p ← p − lr · √max(1, rows/cols) · O, in place, with
  //       rows and cols p's own sizes (size(0), size(1)).
  // Then, when adamw_params is not empty, one adamw.step(); and step_count += 1, once per call.
  // Operations: a NoGradGuard, mul_/add_, std::sqrt, std::max.
  // Hints, one step at a time: scripts/hint.sh muon Muon::step
  throw g2c::todo("Muon::step", "g2c/muon/optimizer.cpp", "muon");
}

}  // namespace g2c::muon
