// Beyond module specdec, implemented for you: the trunk's hidden states, the MTP head's
// construction and checks, the loss's shape checks, and self-speculation (its draft, its loop).
#include <algorithm>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/sampling/checks.h"
#include "g2c/specdec/mtp.h"
#include "g2c/specdec/verify.h"

namespace g2c::specdec {

torch::Tensor hidden_states(g2c::transformer::TransformerLMImpl& model, const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  return model.hidden_states(ids);  // (B, T, D)
}

MTPHeadImpl::MTPHeadImpl(g2c::transformer::TransformerLM base_) : base(std::move(base_)) {
  if (!base) throw ValueError("MTPHead needs a base TransformerLM; got an empty handle");
  const std::int64_t dim = base->embedding_dim;
  combine = register_module("combine", g2c::nn::Linear(2 * dim, dim));
  block = register_module(
      "block", g2c::transformer::Block(g2c::transformer::BlockOptions(dim, base->num_heads)
                                           .hidden_dim(base->hidden_dim)
                                           .causal(true)));
  ln = register_module("ln", g2c::transformer::LayerNorm(dim));
  head_bias = register_parameter("head_bias", torch::zeros({base->vocab_size}));
  to(base->device());
}

void MTPHeadImpl::check_inputs(const torch::Tensor& hidden, const torch::Tensor& next_ids) const {
  if (!hidden.defined() || hidden.dim() != 3 || hidden.size(2) != base->embedding_dim) {
    throw ValueError(fmt::format(
        "MTPHead: hidden must be (B, T', D = {}), the base's hidden states; got {}",
        base->embedding_dim, hidden.defined() ? describe_shape(hidden) : "an undefined tensor"));
  }
  if (!next_ids.defined() || next_ids.dim() != 2 || next_ids.size(0) != hidden.size(0) ||
      next_ids.size(1) != hidden.size(1)) {
    throw ValueError(fmt::format(
        "MTPHead: next_ids must be (B, T') = ({}, {}), the token one after each hidden position "
        "(ids[:, 1:] beside hidden[:, :-1]); got {}",
        hidden.size(0), hidden.size(1),
        next_ids.defined() ? describe_shape(next_ids) : "an undefined tensor"));
  }
}

void MTPHeadImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::specdec::MTPHead(embedding_dim=" << base->embedding_dim
         << ", num_heads=" << base->num_heads << ", vocab_size=" << base->vocab_size << ")";
}

void check_mtp_loss_inputs(const torch::Tensor& mtp_logits, const torch::Tensor& ids) {
  if (!ids.defined() || ids.dim() != 2 || ids.size(1) < 3) {
    throw ValueError(fmt::format(
        "mtp_loss: ids must be (B, T) with T >= 3 (a position needs a token two ahead); got {}",
        ids.defined() ? describe_shape(ids) : "an undefined tensor"));
  }
  if (!mtp_logits.defined() || mtp_logits.dim() != 3 || mtp_logits.size(0) != ids.size(0) ||
      mtp_logits.size(1) != ids.size(1) - 1) {
    throw ValueError(fmt::format(
        "mtp_loss: mtp_logits must be (B, T - 1, V) = ({}, {}, V), the head's output for "
        "head(hidden[:, :-1], ids[:, 1:]); got {}",
        ids.size(0), ids.size(1) - 1,
        mtp_logits.defined() ? describe_shape(mtp_logits) : "an undefined tensor"));
  }
}

namespace {

/// The base's tied head on hidden states (…, D) -> (…, V).
torch::Tensor base_logits(g2c::transformer::TransformerLMImpl& base, const torch::Tensor& hidden) {
  return torch::matmul(hidden, base.token_embed->weight.t()) + base.head_bias;
}

/// The head's greedy guess after `next`, from the hidden state (1, 1, D) of next's predecessor.
std::int64_t head_draft(MTPHeadImpl& head, const torch::Tensor& hidden, std::int64_t next) {
  const auto ids = torch::tensor({{next}}, torch::kLong).to(hidden.device());
  return head.forward(hidden, ids)[0][0].argmax().item<std::int64_t>();
}

}  // namespace

std::pair<std::int64_t, std::int64_t> mtp_propose(g2c::transformer::TransformerLMImpl& base,
                                                  MTPHeadImpl& head, const torch::Tensor& ctx_ids) {
  torch::NoGradGuard no_grad;
  const auto ids = ctx_ids.to(torch::kCPU, torch::kLong);
  const std::int64_t keep = std::min(ids.size(0), base.max_seq_len);
  const auto ctx = ids.narrow(0, ids.size(0) - keep, keep).unsqueeze(0).to(base.device());
  const auto hidden = base.hidden_states(ctx);                // (1, T, D)
  const auto last = hidden.narrow(1, hidden.size(1) - 1, 1);  // (1, 1, D)
  // The base's own token, then the head's draft after it.
  const auto next1 = base_logits(base, last)[0][0].argmax().item<std::int64_t>();
  return {next1, head_draft(head, last, next1)};
}

SpeculativeResult mtp_generate(g2c::transformer::TransformerLMImpl& base, MTPHeadImpl& head,
                               const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                               std::optional<std::int64_t> eos_id) {
  g2c::sampling::check_prompt_ids(prompt_ids, base.vocab_size);
  if (max_new_tokens < 0) {
    throw ValueError(fmt::format("max_new_tokens must be >= 0; got {}", max_new_tokens));
  }
  torch::NoGradGuard no_grad;
  const auto device = base.device();
  auto ids = prompt_ids.to(torch::kCPU, torch::kLong).clone();  // (T)
  SpecStats stats;
  if (max_new_tokens == 0) return {ids, stats};
  // The first pass: the base's own token, and the head's draft after it.
  auto [next, draft] = mtp_propose(base, head, ids);  // draft: reassigned by every later pass
  stats.record(0, 0, 1);
  ids = torch::cat({ids, torch::tensor({next}, torch::kLong)});
  bool stopped = eos_id && next == *eos_id;

  while (!stopped && stats.generated < max_new_tokens) {
    // One trunk pass over the context and the draft: its last two rows check the draft and give
    // the bonus.
    const std::int64_t keep = std::min(ids.size(0), base.max_seq_len - 1);
    const auto seq =
        torch::cat({ids.narrow(0, ids.size(0) - keep, keep), torch::tensor({draft}, torch::kLong)});
    const auto hidden = base.hidden_states(seq.unsqueeze(0).to(device));  // (1, T + 1, D)
    const auto two = hidden.narrow(1, hidden.size(1) - 2, 2);             // (1, 2, D)
    const auto rows = base_logits(base, two)[0].cpu();                    // (2, V)
    const auto [n, correction] = greedy_verify(torch::tensor({draft}, torch::kLong), rows);
    auto emitted = n == 1 ? torch::tensor({draft, correction}, torch::kLong)
                          : torch::tensor({correction}, torch::kLong);
    emitted = emitted.narrow(0, 0, std::min(emitted.size(0), max_new_tokens - stats.generated));
    if (eos_id) {
      const auto hits = (emitted == *eos_id).nonzero();
      if (hits.size(0) > 0) {
        emitted = emitted.narrow(0, 0, hits[0][0].item<std::int64_t>() + 1);
        stopped = true;
      }
    }
    stats.record(1, n, emitted.size(0));
    ids = torch::cat({ids, emitted});
    // The next draft rides along: the hidden state of the correction's predecessor — the draft's
    // position when it was accepted, the last context position otherwise.
    draft = head_draft(head, two.narrow(1, n, 1), correction);
  }
  return {ids, stats};
}

}  // namespace g2c::specdec
