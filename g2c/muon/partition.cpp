#include "g2c/muon/partition.h"

#include <unordered_set>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/nn/linear.h"

namespace g2c::muon {

namespace {

/// Muon whose AdamW side follows the schedule the trainer writes into `lr`.
class ScheduledMuon : public Muon {
 public:
  ScheduledMuon(MuonPartition groups, const MuonOptions& options)
      : Muon(std::move(groups.muon), std::move(groups.adamw), options),
        base_lr_(options.lr()),
        base_adamw_lr_(options.adamw_lr()) {}

  void step() override {
    adamw.lr = base_lr_ > 0.0 ? base_adamw_lr_ * (lr / base_lr_) : 0.0;
    Muon::step();
  }

 private:
  double base_lr_;
  double base_adamw_lr_;
};

std::int64_t bytes_of(const std::vector<torch::Tensor>& tensors) {
  std::int64_t total = 0;
  for (const auto& t : tensors) total += static_cast<std::int64_t>(t.nbytes());
  return total;
}

}  // namespace

MuonPartition muon_partition(torch::nn::Module& model, bool tables_to_muon) {
  // The weights of the model's Linear layers, by identity.
  std::unordered_set<const void*> linear_weights;
  for (const auto& module : model.modules(/*include_self=*/true)) {
    if (const auto* linear = dynamic_cast<const g2c::nn::LinearImpl*>(module.get())) {
      linear_weights.insert(linear->W.unsafeGetTensorImpl());
    }
  }
  MuonPartition groups;
  for (const auto& item : model.named_parameters()) {
    const auto& p = item.value();
    if (!p.requires_grad()) continue;
    const bool to_muon =
        p.dim() == 2 && (tables_to_muon || linear_weights.count(p.unsafeGetTensorImpl()));
    (to_muon ? groups.muon : groups.adamw).push_back(p);
    (to_muon ? groups.muon_names : groups.adamw_names).push_back(item.key());
  }
  return groups;
}

std::unique_ptr<Muon> scheduled_muon(torch::nn::Module& model, double lr, double adamw_lr,
                                     double weight_decay, bool tables_to_muon) {
  auto groups = muon_partition(model, tables_to_muon);
  if (groups.muon.empty()) {
    throw ValueError(
        "optimizer 'muon' found no matrix to update: it takes the W of the model's Linear layers "
        "(g2c::nn::Linear) that require gradients, and this model has none; train it with "
        "'adamw' instead");
  }
  return std::make_unique<ScheduledMuon>(std::move(groups), MuonOptions()
                                                                .lr(lr)
                                                                .adamw_lr(adamw_lr)
                                                                .weight_decay(weight_decay)
                                                                .adamw_weight_decay(weight_decay));
}

std::int64_t state_bytes(const Muon& optimizer) {
  return bytes_of(optimizer.momentum_buffers) + state_bytes(optimizer.adamw);
}

std::int64_t state_bytes(const g2c::nn::AdamW& optimizer) {
  return bytes_of(optimizer.m) + bytes_of(optimizer.v);
}

}  // namespace g2c::muon
