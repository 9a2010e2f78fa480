// Beyond module muon — orthogonalised updates: Muon for a network's matrices, AdamW for the rest.
//
// A weight update is a matrix with directions (its singular vectors) and gains (its singular
// values). AdamW scales every entry on its own; Muon keeps a momentum matrix per weight and, before
// applying it, pushes all of its singular values towards 1 with a few passes of an odd polynomial
// (Newton–Schulz), so that one step moves the weight along every direction of the update at a
// comparable rate instead of along its loudest few. No SVD is computed: for X = U S Vᵀ,
//   a X + b (X Xᵀ) X + c (X Xᵀ)² X  =  U (a S + b S³ + c S⁵) Vᵀ,
// the polynomial acts on each singular value and leaves the vectors alone.
//
// Muon is defined for matrices only: vectors (biases, norm gains) have no singular structure, and
// an embedding table's rows are unrelated tokens that orthogonalisation would mix. So Muon is a
// hybrid: it takes two parameter lists and drives the second with module 03b's AdamW.
//
//   auto [matrices, others] = g2c::muon::muon_partition(*model);   // g2c/muon/partition.h
//   g2c::muon::Muon optimizer(matrices, others, g2c::muon::MuonOptions().lr(0.02).adamw_lr(1e-3));
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "g2c/core/torch.h"
#include "g2c/nn/optim.h"

namespace g2c::muon {

/// (a, b, c) of the quintic f(s) = a s + b s³ + c s⁵ each Newton–Schulz pass applies to every
/// singular value (Jordan, 2024). Tuned for speed, not for a fixed point at 1: f'(0) = a, so a
/// small singular value grows about 3.4 times a pass, and values that reach the band stay in it
/// (f(1) = a + b + c ≈ 0.70, f(0.7) ≈ 1.1): five passes leave the spectrum in a loose band around
/// 1, about 0.7 to 1.2.
inline constexpr std::array<double, 3> NS_COEFFS = {3.4445, -4.7750, 2.0315};

/// Added to the Frobenius norm before dividing by it: an all-zero momentum stays zero.
inline constexpr double EPS = 1e-7;

/// Approximately U Vᵀ for G = U S Vᵀ, by `steps` Newton–Schulz passes:
///   X = G / (‖G‖_F + eps)           every singular value now in [0, 1], the polynomial's basin
///   transpose X when rows > cols    so that A = X Xᵀ is the smaller Gram matrix
///   steps times: A = X Xᵀ;  X = a X + (b A + c A²) X
///   transpose back
/// The result has G's shape and singular values near 1; it does not depend on G's scale
/// (NS(7 G) = NS(G)) and commutes with transposition (NS(Gᵀ) = NS(G)ᵀ). ValueError unless G is
/// 2-D. (rows, cols) -> (rows, cols).
torch::Tensor zeropower_via_newtonschulz(const torch::Tensor& G, std::int64_t steps = 5,
                                         double eps = EPS);

/// Muon's hyper-parameters, LibTorch style: Muon(matrices, others, MuonOptions().lr(0.05)).
struct MuonOptions {
  TORCH_ARG(double, lr) = 0.02;           // the Muon side's learning rate (updates of unit scale)
  TORCH_ARG(double, momentum) = 0.95;     // μ of m ← μ m + g (no 1 − μ damping: NS rescales)
  TORCH_ARG(double, weight_decay) = 0.0;  // decoupled, on the Muon side: p ← p (1 − lr wd)
  TORCH_ARG(std::int64_t, ns_steps) = 5;  // Newton–Schulz passes per update
  TORCH_ARG(double, adamw_lr) = 3e-4;     // the AdamW side's own learning rate
  TORCH_ARG(double, beta1) = 0.9;         // the AdamW side's betas and eps
  TORCH_ARG(double, beta2) = 0.999;
  TORCH_ARG(double, eps) = 1e-8;
  TORCH_ARG(double, adamw_weight_decay) = 0.0;
};

/// Muon for the matrices in `muon_params`, module 03b's AdamW for `adamw_params`.
///
/// One step, for each Muon parameter p (rows × cols, as stored) with a gradient g, others skipped:
///   m ← μ m + g                     in place: the buffer carries the raw momentum to the next step
///   O = zeropower_via_newtonschulz(m, ns_steps)
///   p ← p (1 − lr wd) − lr √max(1, rows/cols) O        outside autograd
/// then one step of `adamw` when its group is not empty; step_count += 1.
///
/// The factor √max(1, rows/cols) evens out per-entry step sizes across shapes: an orthogonalised
/// (rows, cols) update has entries of size about 1/√rows when rows ≥ cols. This edition's Linear
/// stores W as (in, out) (y = x W), so a feed-forward down-projection (4D, D) takes twice the step
/// of its up-projection (D, 4D).
///
/// `lr` (the base class's, which a schedule writes) drives the Muon side only; the AdamW side has
/// its own, `adamw.lr`. params() lists the Muon group, then the AdamW group; zero_grad() clears
/// both.
class Muon : public g2c::nn::Optimizer {
 public:
  /// ValueError, naming the shape, for a Muon parameter that is not 2-D, and for an option out of
  /// range (lr < 0, momentum outside [0, 1), ns_steps < 1, a negative weight decay; the AdamW
  /// side's checks are AdamW's). One zero momentum buffer per Muon parameter, like it.
  explicit Muon(std::vector<torch::Tensor> muon_params,
                std::vector<torch::Tensor> adamw_params = {},
                const MuonOptions& options = MuonOptions());

  /// One hybrid update, as above.
  void step() override;

  std::vector<torch::Tensor> muon_params;       // the matrices, in the order given
  std::vector<torch::Tensor> adamw_params;      // everything else, in the order given
  std::vector<torch::Tensor> momentum_buffers;  // one per Muon parameter, zeros at the start
  double momentum;
  double weight_decay;
  std::int64_t ns_steps;
  std::int64_t step_count = 0;  // step() calls so far
  g2c::nn::AdamW adamw;         // drives adamw_params, with its own lr and state
};

}  // namespace g2c::muon
