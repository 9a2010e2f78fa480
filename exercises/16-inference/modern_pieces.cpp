// Exercise 16 — the pieces that separate a 2024 open model from the course's GPT, each switched
// back to the course's version, one at a time, on SmolLM2-135M-Instruct's real weights:
//   layer_norm    module 09's LayerNorm for RMSNorm (gamma = the file's gain, beta = 0): the mean
//                 is subtracted too
//   gelu_mlp      module 09's FeedForward for SwiGLU: GELU(x W_up) W_down, the gate dropped
//   gelu_gate     GELU instead of SiLU on the gate, the gate kept (a GeGLU)
//   no_rotary     no rotary positions: SmolLM2 has no learned position table to fall back on, so
//                 positions reach attention only through the causal mask
//   multi_head    multi-head attention with every key/value head's weights repeated for its query
//                 heads: the same function, three times the KV cache
// For each: how far its next-token distributions move from the model's (mean KL), how often its
// most likely token is the model's, its perplexity on a Shakespeare passage, and its greedy answer
// to a question. The forward pass is written out here, from the model's own weights and the
// course's functions, and checked against LlamaModel::forward first. Writes modern_pieces.json and
// a figure.
#include <cmath>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "g2c/attention/scaled_dot_product.h"
#include "g2c/core/errors.h"
#include "g2c/pretrained/generation.h"
#include "g2c/transformer/ffn.h"
#include "g2c/transformer/layer_norm.h"

namespace exercise_16_modern_pieces {

namespace {

using g2c::pretrained::LlamaModelImpl;

struct Variant {
  std::string name;
  std::string description;
  bool layer_norm = false;
  bool gelu_mlp = false;
  bool gelu_gate = false;
  bool no_rotary = false;
  bool multi_head = false;
};

const std::vector<Variant> kVariants = {
    {"smollm2", "the model as trained"},
    {"layer_norm", "LayerNorm for RMSNorm", true},
    {"gelu_mlp", "GELU MLP for SwiGLU (no gate)", false, true},
    {"gelu_gate", "GELU for SiLU on the gate", false, false, true},
    {"no_rotary", "no rotary positions", false, false, false, true},
    {"multi_head", "multi-head for grouped-query", false, false, false, false, true},
};

// Module 09's LayerNorm with the file's gain as gamma and no shift.
torch::Tensor layer_norm(const torch::Tensor& x, const torch::Tensor& gain, double eps) {
  g2c::transformer::LayerNorm norm(g2c::transformer::LayerNormOptions(x.size(-1)).eps(eps));
  norm->gamma.set_data(gain);
  return norm(x);
}

// Module 09's FeedForward (fc2(gelu(fc1(x))), zero biases) on the up and down matrices.
torch::Tensor gelu_mlp(const torch::Tensor& x, const torch::Tensor& w_up,
                       const torch::Tensor& w_down) {
  g2c::transformer::FeedForward ffn(
      g2c::transformer::FeedForwardOptions(w_up.size(0)).hidden_dim(w_up.size(1)));
  ffn->fc1->W.set_data(w_up);
  ffn->fc1->b.set_data(torch::zeros({w_up.size(1)}));
  ffn->fc2->W.set_data(w_down);
  ffn->fc2->b.set_data(torch::zeros({w_down.size(1)}));
  return ffn(x);
}

// ids (1, T) -> logits (1, T, V) with `variant`'s pieces, positions from 0, no cache.
torch::Tensor forward(LlamaModelImpl& model, const torch::Tensor& ids, const Variant& variant) {
  const auto& o = model.options;
  const auto t = ids.size(1), h = o.num_heads(), g = o.num_kv_heads(), d = o.head_dim();
  const auto norm = [&](const torch::Tensor& x, const torch::Tensor& gain) {
    return variant.layer_norm ? layer_norm(x, gain, o.rms_eps())
                              : g2c::pretrained::rms_norm(x, gain, o.rms_eps());
  };
  // (D, G·d) -> (D, H·d): key/value head j's columns once for each of its H/G query heads.
  const auto repeat_columns = [&](const torch::Tensor& w) {
    return w.view({o.embedding_dim(), g, 1, d}).expand({-1, -1, h / g, -1}).reshape({-1, h * d});
  };
  auto x = model.token_embedding.index_select(0, ids.view(-1)).unsqueeze(0);  // (1, T, D)
  const auto mask = g2c::pretrained::causal_mask_from(0, t, x.device());
  for (const auto& block : model.block_list) {
    auto& a = *block->attention;
    const auto n = norm(x, block->attention_norm->weight);
    const auto heads_k = variant.multi_head ? h : g;
    auto q = n.matmul(a.Wq).view({1, t, h, d}).transpose(1, 2);  // (1, H, T, d)
    auto k = n.matmul(variant.multi_head ? repeat_columns(a.Wk) : a.Wk)
                 .view({1, t, heads_k, d})
                 .transpose(1, 2);
    auto v = n.matmul(variant.multi_head ? repeat_columns(a.Wv) : a.Wv)
                 .view({1, t, heads_k, d})
                 .transpose(1, 2);
    if (!variant.no_rotary) {
      q = a.rotate(q, 0);
      k = a.rotate(k, 0);
    }
    if (!variant.multi_head) {
      k = g2c::pretrained::repeat_kv(k, h / g);
      v = g2c::pretrained::repeat_kv(v, h / g);
    }
    const auto out = g2c::attention::scaled_dot_product_attention(q, k, v, mask).first;
    x = x + out.transpose(1, 2).reshape({1, t, h * d}).matmul(a.Wo);
    const auto m = norm(x, block->ffn_norm->weight);
    const auto& f = *block->ffn;
    torch::Tensor y;
    if (variant.gelu_mlp) {
      y = gelu_mlp(m, f.W_up, f.W_down);
    } else {
      const auto gate = m.matmul(f.W_gate);
      y = ((variant.gelu_gate ? torch::gelu(gate) : torch::silu(gate)) * m.matmul(f.W_up))
              .matmul(f.W_down);
    }
    x = x + y;
  }
  return norm(x, model.final_norm->weight).matmul(model.token_embedding.t());  // (1, T, V)
}

// Greedy ids after `prompt` with `variant`, the whole sequence through the model at every step.
std::vector<std::int64_t> greedy(LlamaModelImpl& model, std::vector<std::int64_t> ids,
                                 std::int64_t count, std::int64_t eos, const Variant& variant) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < count; ++i) {
    const auto logits = forward(model, torch::tensor(ids, torch::kLong).unsqueeze(0), variant);
    const auto next = logits[0][-1].argmax().item<std::int64_t>();
    if (next == eos) break;
    out.push_back(next);
    ids.push_back(next);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 16: SmolLM2-135M-Instruct with each modern piece switched back to the course's\n"
      "GPT version (LayerNorm, GELU MLP, no rotary, multi-head attention): KL from the model,\n"
      "top-1 agreement, perplexity on Shakespeare, greedy answers. Writes modern_pieces.json\n"
      "and a figure."};
  g2c::exercises::CommonOptions options;
  options.out = "results/16-inference";
  std::string model_name = "SmolLM2-135M-Instruct";
  std::int64_t text_tokens = 256, answer_tokens = 16;
  std::string question = "What is the capital of France?";
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", model_name, "Pretrained model (SmolLM2-135M-Instruct)");
  app.add_option("--text-tokens", text_tokens, "Tokens of TinyShakespeare scored").positive();
  app.add_option("--answer-tokens", answer_tokens, "Greedy tokens of each answer").positive();
  app.add_option("--question", question, "The question each variant answers");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    torch::NoGradGuard no_grad;
    auto smol = g2c::pretrained::load_pretrained_model(model_name);
    auto& model = *smol.model;
    model.to(device);
    const auto& tokenizer = smol.tokenizer;
    auto text_ids = tokenizer.encode(g2c::exercises::load_tinyshakespeare().substr(0, 8 * 1024));
    if (static_cast<std::int64_t>(text_ids.size()) < text_tokens + 1) {
      throw g2c::ValueError(fmt::format("--text-tokens {}: the passage holds only {} tokens",
                                        text_tokens, text_ids.size()));
    }
    text_ids.resize(static_cast<std::size_t>(text_tokens) + 1);
    const auto ids = torch::tensor(text_ids, torch::kLong).unsqueeze(0).to(device);  // (1, T + 1)
    const auto inputs = ids.narrow(1, 0, text_tokens), targets = ids.narrow(1, 1, text_tokens)[0];
    const auto question_ids = tokenizer.encode(tokenizer.format_chat({{"user", question}}, true));

    const auto reference = model.forward(inputs)[0];  // (T, V), LlamaModel's own forward
    const auto log_p = torch::log_softmax(reference.to(torch::kDouble), -1);
    nlohmann::json rows = nlohmann::json::array();
    std::vector<std::string> labels;
    std::vector<double> kls, perplexities;
    double check = 0.0;
    for (const auto& variant : kVariants) {
      if (!options.quiet) fmt::print("  {}...\n", variant.name);
      const auto logits = forward(model, inputs, variant)[0];  // (T, V)
      if (variant.name == "smollm2") check = (logits - reference).abs().max().item<double>();
      const auto log_q = torch::log_softmax(logits.to(torch::kDouble), -1);
      const double kl = (log_p.exp() * (log_p - log_q)).sum(-1).mean().item<double>();
      const double agreement =
          logits.argmax(-1).eq(reference.argmax(-1)).to(torch::kDouble).mean().item<double>();
      const double perplexity =
          std::exp(-log_q.gather(1, targets.unsqueeze(1)).mean().item<double>());
      const auto answer =
          tokenizer.decode(greedy(model, question_ids, answer_tokens, tokenizer.eos_id(), variant));
      const auto kv_heads =
          variant.multi_head ? model.options.num_heads() : model.options.num_kv_heads();
      const auto kv_bytes_per_position =
          2 * model.options.num_layers() * kv_heads * model.options.head_dim() * 4;
      fmt::print(
          "{:<11} {:<32} KL {:8.4f}  top-1 same {:5.1f}%  perplexity {:9.2f}  KV {:5.1f} "
          "KB/position  {:?}\n",
          variant.name, variant.description, kl, 100 * agreement, perplexity,
          kv_bytes_per_position / 1024.0, answer);
      rows.push_back({{"variant", variant.name},
                      {"description", variant.description},
                      {"mean_kl", kl},
                      {"top1_agreement", agreement},
                      {"perplexity", perplexity},
                      {"kv_cache_bytes_per_position", kv_bytes_per_position},
                      {"answer", answer}});
      labels.push_back(variant.name);
      kls.push_back(std::max(kl, 1e-9));  // the model itself: 0, drawn at the axis' floor
      perplexities.push_back(perplexity);
    }
    fmt::print("this forward against LlamaModel::forward: max |difference| {:.2e}\n", check);
    if (!(check < 1e-3)) {
      throw g2c::ValueError(
          fmt::format("the exercise's forward differs from LlamaModel::forward by {:.2e}; it must "
                      "reproduce the model before its variants mean anything",
                      check));
    }

    auto result = g2c::exercises::run_metadata("16_modern_pieces", options, device);
    result["config"] = {{"model", smol.name},
                        {"text", "TinyShakespeare, from its start"},
                        {"text_tokens", text_tokens},
                        {"question", question},
                        {"answer_tokens", answer_tokens}};
    result["forward_check_max_abs"] = check;
    result["variants"] = rows;
    result["labels"] = labels;
    result["mean_kl"] = kls;
    result["perplexity"] = perplexities;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::bar("modern_pieces_perplexity.png",
                     fmt::format("Perplexity on {} tokens of Shakespeare, one piece switched back",
                                 text_tokens),
                     "", "perplexity")
             .add(Series("perplexity", "/labels", "/perplexity"))
             .logy()
             .rotate_labels(20),
         Figure::bar("modern_pieces_kl.png",
                     "How far each switch moves the next-token distributions", "",
                     "mean KL(model || variant), nats")
             .add(Series("KL", "/labels", "/mean_kl"))
             .logy()
             .rotate_labels(20)});
    const auto path = g2c::exercises::save_result(options, "modern_pieces.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_16_modern_pieces
