// Beyond module muon, implemented for you: Muon's construction and its checks.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"
#include "g2c/muon/optimizer.h"

namespace g2c::muon {

namespace {

std::vector<torch::Tensor> concatenated(const std::vector<torch::Tensor>& first,
                                        const std::vector<torch::Tensor>& second) {
  std::vector<torch::Tensor> all(first);
  all.insert(all.end(), second.begin(), second.end());
  return all;
}

}  // namespace

// The checks are written `!(x >= 0)` so that NaN is rejected too.
Muon::Muon(std::vector<torch::Tensor> muon_params_, std::vector<torch::Tensor> adamw_params_,
           const MuonOptions& options)
    : Optimizer(concatenated(muon_params_, adamw_params_), options.lr()),
      muon_params(std::move(muon_params_)),
      adamw_params(std::move(adamw_params_)),
      momentum(options.momentum()),
      weight_decay(options.weight_decay()),
      ns_steps(options.ns_steps()),
      adamw(adamw_params, options.adamw_lr(), {options.beta1(), options.beta2()}, options.eps(),
            options.adamw_weight_decay()) {
  for (std::size_t i = 0; i < muon_params.size(); ++i) {
    if (muon_params[i].dim() != 2) {
      throw ValueError(fmt::format(
          "Muon: muon_params must all be 2-D matrices, but parameter {} has shape {}. Vectors "
          "(biases, norm gains), scalars and embedding tables belong in adamw_params "
          "(g2c::muon::muon_partition sorts a model's parameters that way)",
          i, muon_params[i].sizes()));
    }
  }
  if (!(lr >= 0)) throw ValueError(fmt::format("Muon: lr must be >= 0, got {}", lr));
  if (!(momentum >= 0 && momentum < 1)) {
    throw ValueError(fmt::format("Muon: momentum must lie in [0, 1), got {}", momentum));
  }
  if (!(weight_decay >= 0)) {
    throw ValueError(fmt::format("Muon: weight_decay must be >= 0, got {}", weight_decay));
  }
  if (ns_steps < 1) {
    throw ValueError(fmt::format("Muon: ns_steps must be >= 1 (5 is the usual), got {}", ns_steps));
  }
  momentum_buffers.reserve(muon_params.size());
  for (const auto& p : muon_params) {
    momentum_buffers.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve));
  }
}

}  // namespace g2c::muon
