// Beyond module muon, implemented for you: which parameters Muon updates, and the Muon module 10's
// Trainer builds for optimizer("muon").
//
// The partition is the design decision of every Muon deployment: the network's linear maps (the
// W of each g2c::nn::Linear: attention's q, k, v and output projections, the feed-forward's two
// layers) go to Muon; everything else — the token and position tables (the token table is also the
// tied output head), LayerNorm gains and shifts, biases, the head's bias — goes to AdamW. A frozen
// parameter (requires_grad false, as LoRA's base weights) goes to neither.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "g2c/core/torch.h"
#include "g2c/muon/optimizer.h"

namespace g2c::muon {

/// The two groups of a model's trainable parameters, each in the model's parameter order, with
/// their names (as named_parameters() gives them).
struct MuonPartition {
  std::vector<torch::Tensor> muon;
  std::vector<torch::Tensor> adamw;
  std::vector<std::string> muon_names;
  std::vector<std::string> adamw_names;
};

/// Linear weights to Muon, the rest to AdamW (above). `tables_to_muon` breaks the rule on purpose
/// (the exercise's --violate-partition): every 2-D parameter goes to Muon, the token table (and
/// with it the tied head) and the position table included.
///
/// Example: auto groups = muon_partition(*model);  // ShakespeareLM-0.3M: 16 + 8 matrices
MuonPartition muon_partition(torch::nn::Module& model, bool tables_to_muon = false);

/// The Muon of Trainer(...).optimizer("muon"): muon_partition(model)'s groups, the Muon side at
/// `lr`, the AdamW side at `adamw_lr`, `weight_decay` on both. A learning-rate schedule writes `lr`
/// before every step; this Muon moves the AdamW side's rate by the same factor (adamw_lr · lr /
/// the lr it was built with), so warmup and cosine shape both groups alike.
/// ValueError when the model has no matrix for Muon.
std::unique_ptr<Muon> scheduled_muon(torch::nn::Module& model, double lr, double adamw_lr,
                                     double weight_decay, bool tables_to_muon = false);

/// Bytes of optimizer state a Muon holds (its momentum buffers and its AdamW side's m and v), and
/// what AdamW over the same parameters would hold (m and v for every one): Muon keeps one buffer
/// per matrix where AdamW keeps two.
std::int64_t state_bytes(const Muon& optimizer);
std::int64_t state_bytes(const g2c::nn::AdamW& optimizer);

}  // namespace g2c::muon
