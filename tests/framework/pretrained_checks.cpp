// Framework checks of module 16's model (g2c/pretrained/llama.h), against independent oracles:
// LibTorch's own rms_norm, llama.cpp's row permutation and interleaved rotary convention written
// here from their definitions, a small Llama written to a GGUF file in llama.cpp's layout and read
// back, the KV cache against the full forward, and the real SmolLM2 file's sizes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/pretrained/generation.h"
#include "g2c/pretrained/llama.h"
#include "g2c_test.h"
#include "gguf_writer.h"
#include "tiny_llama.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::pretrained::LlamaModel;
using g2c::pretrained::LlamaOptions;
using g2c::testing::GGUFWriter;
using g2c::testing::max_abs_diff;
using g2c::testing::TemporaryFile;
using g2c::testing::tiny_llama_options;

namespace {

// llama.cpp's converter, as its definition reads: the rows of one head, (2, d/2) -> (d/2, 2).
torch::Tensor permute_for_interleaved(const torch::Tensor& weight, std::int64_t heads) {
  const auto out = weight.size(0), in = weight.size(1);
  return weight.reshape({heads, 2, out / heads / 2, in}).transpose(1, 2).reshape({out, in});
}

// Rotary embedding written from its definition: pair i of x (T, d) turns by position ·
// base^(-2i/d). Interleaved pairs are dims (2i, 2i + 1), split-halves pairs (i, i + d/2).
torch::Tensor rope(const torch::Tensor& x, double base, bool interleaved) {
  const auto t = x.size(0), d = x.size(1);
  auto out = x.clone();
  for (std::int64_t p = 0; p < t; ++p) {
    for (std::int64_t i = 0; i < d / 2; ++i) {
      const double angle = static_cast<double>(p) * std::pow(base, -2.0 * i / d);
      const auto first = interleaved ? 2 * i : i, second = interleaved ? 2 * i + 1 : i + d / 2;
      const auto a = x[p][first].item<double>(), b = x[p][second].item<double>();
      out[p][first] = a * std::cos(angle) - b * std::sin(angle);
      out[p][second] = a * std::sin(angle) + b * std::cos(angle);
    }
  }
  return out;
}

std::vector<float> values(const torch::Tensor& t) {
  const auto c = t.contiguous().to(torch::kFloat);
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

// `model` as llama.cpp's converter writes a llama file: (out, in) matrices, Wq and Wk permuted for
// the interleaved rotary convention, float32. `skip` leaves one tensor out; `architecture` and a
// reshaped tensor make the broken files of the refusal checks.
std::vector<std::uint8_t> as_gguf(LlamaModel& model, const std::string& skip = "",
                                  const std::string& architecture = "llama",
                                  const std::string& misshapen = "") {
  const auto& o = model->options;
  GGUFWriter file;
  file.text("general.architecture", architecture)
      .u32("llama.block_count", static_cast<std::uint32_t>(o.num_layers()))
      .u32("llama.context_length", static_cast<std::uint32_t>(o.max_seq_len()))
      .u32("llama.embedding_length", static_cast<std::uint32_t>(o.embedding_dim()))
      .u32("llama.feed_forward_length", static_cast<std::uint32_t>(o.hidden_dim()))
      .u32("llama.attention.head_count", static_cast<std::uint32_t>(o.num_heads()))
      .u32("llama.attention.head_count_kv", static_cast<std::uint32_t>(o.num_kv_heads()))
      .f32("llama.rope.freq_base", static_cast<float>(o.rope_base()))
      .f32("llama.attention.layer_norm_rms_epsilon", static_cast<float>(o.rms_eps()))
      .u32("llama.vocab_size", static_cast<std::uint32_t>(o.vocab_size()));
  const auto add = [&](const std::string& name, torch::Tensor t) {
    if (name == skip) return;
    if (name == misshapen) t = t.reshape({-1});
    file.tensor(name, t.sizes().vec(), values(t));
  };
  add("token_embd.weight", model->token_embedding);
  add("output_norm.weight", model->final_norm->weight);
  for (std::int64_t l = 0; l < o.num_layers(); ++l) {
    const auto blk = "blk." + std::to_string(l) + ".";
    const auto& block = model->block_list[static_cast<std::size_t>(l)];
    add(blk + "attn_norm.weight", block->attention_norm->weight);
    add(blk + "attn_q.weight", permute_for_interleaved(block->attention->Wq.t(), o.num_heads()));
    add(blk + "attn_k.weight", permute_for_interleaved(block->attention->Wk.t(), o.num_kv_heads()));
    add(blk + "attn_v.weight", block->attention->Wv.t());
    add(blk + "attn_output.weight", block->attention->Wo.t());
    add(blk + "ffn_norm.weight", block->ffn_norm->weight);
    add(blk + "ffn_gate.weight", block->ffn->W_gate.t());
    add(blk + "ffn_up.weight", block->ffn->W_up.t());
    add(blk + "ffn_down.weight", block->ffn->W_down.t());
  }
  return file.bytes();
}

LlamaModel tiny_model() {
  torch::manual_seed(7);
  LlamaModel model(tiny_llama_options());
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.add_(torch::randn_like(p) * 0.1);  // norms off 1 too
  return model;
}

}  // namespace

TEST_CASE("rms_norm_matches_libtorch_and_its_gradients", "[pretrained]") {
  torch::manual_seed(0);
  const auto x = torch::randn({3, 5, 8}, torch::kDouble).requires_grad_();
  const auto w = torch::randn({8}, torch::kDouble).requires_grad_();
  const auto ours = g2c::pretrained::rms_norm(x, w, 1e-5);
  const auto theirs = at::rms_norm(x, {8}, w, 1e-5);
  CHECK(max_abs_diff(ours, theirs) < 1e-12);
  const auto upstream = torch::randn_like(ours);
  const auto ours_grads = torch::autograd::grad({ours}, {x, w}, {upstream});
  const auto theirs_grads = torch::autograd::grad({theirs}, {x, w}, {upstream});
  CHECK(max_abs_diff(ours_grads[0], theirs_grads[0]) < 1e-10);
  CHECK(max_abs_diff(ours_grads[1], theirs_grads[1]) < 1e-10);
}

TEST_CASE("unpermuted_rows_with_split_halves_rotary_equal_the_file_with_interleaved",
          "[pretrained]") {
  // What a GGUF file's Wq means under llama.cpp's interleaved RoPE is what the un-permuted Wq
  // means under module 05's split halves: the same rotated queries, dim for dim after the undo.
  torch::manual_seed(1);
  const std::int64_t heads = 2, d = 8, in = 6, t = 5;
  const auto original = torch::randn({heads * d, in}, torch::kDouble);  // (out, in)
  const auto file = permute_for_interleaved(original, heads);
  CHECK(max_abs_diff(g2c::pretrained::unpermute_rotary_rows(file, heads), original) == 0.0);
  const auto x = torch::randn({t, in}, torch::kDouble);
  for (std::int64_t h = 0; h < heads; ++h) {
    const auto q_file = x.matmul(file.narrow(0, h * d, d).t());          // (T, d), interleaved
    const auto q_original = x.matmul(original.narrow(0, h * d, d).t());  // (T, d), split halves
    const auto a = rope(q_file, 100.0, /*interleaved=*/true);
    const auto b = rope(q_original, 100.0, /*interleaved=*/false);
    // Interleaved dim 2i + p holds what split-halves dim p·d/2 + i holds.
    const auto b_interleaved = b.reshape({t, 2, d / 2}).transpose(1, 2).reshape({t, d});
    CHECK(max_abs_diff(a, b_interleaved) < 1e-12);
  }
}

TEST_CASE("a_llama_written_as_gguf_loads_into_the_same_model", "[pretrained]") {
  auto model = tiny_model();
  const TemporaryFile file(as_gguf(model), "tiny_llama");
  g2c::pretrained::LoadReport report;
  auto loaded = g2c::pretrained::load_llama(file.path, &report);
  CHECK(report.tensors == 2 + 9 * 2);
  CHECK(report.weight_bytes == tiny_llama_options().num_parameters() * 4);
  const auto ids = torch::tensor({{3, 1, 4, 1, 5, 9, 2, 6}}, torch::kLong);
  torch::NoGradGuard no_grad;
  CHECK(max_abs_diff(loaded->forward(ids), model->forward(ids)) < 1e-5);
  for (const auto& p : loaded->parameters()) CHECK_FALSE(p.requires_grad());
}

TEST_CASE("load_llama_refuses_a_broken_file_by_name", "[pretrained]") {
  auto model = tiny_model();
  const TemporaryFile other(as_gguf(model, "", "gpt2"), "other_architecture");
  CHECK_THROWS_WITH(g2c::pretrained::load_llama(other.path),
                    Contains("general.architecture is 'gpt2'"));
  const TemporaryFile missing(as_gguf(model, "blk.1.ffn_up.weight"), "missing_tensor");
  CHECK_THROWS_WITH(g2c::pretrained::load_llama(missing.path),
                    Contains("'blk.1.ffn_up.weight' is missing"));
  const TemporaryFile misshapen(as_gguf(model, "", "llama", "blk.0.attn_k.weight"), "misshapen");
  CHECK_THROWS_WITH(g2c::pretrained::load_llama(misshapen.path),
                    Contains("'blk.0.attn_k.weight' has shape [128], expected [8, 16]"));
}

TEST_CASE("llama_cached_prompt_and_steps_equal_the_full_forward", "[pretrained]") {
  auto model = tiny_model();
  const auto ids = torch::tensor({{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}}, torch::kLong);
  torch::NoGradGuard no_grad;
  const auto full = model->forward(ids);  // (1, 10, V)
  auto cache = model->empty_kv_cache();
  std::vector<torch::Tensor> parts = {model->forward(ids.narrow(1, 0, 6), cache)};
  parts.push_back(model->forward(ids.narrow(1, 6, 3), cache));  // several tokens after a prefix
  parts.push_back(model->forward(ids.narrow(1, 9, 1), cache));
  CHECK(cache.length() == 10);
  CHECK(max_abs_diff(torch::cat(parts, 1), full) < 1e-5);
}

TEST_CASE("llama_on_the_accelerator_matches_the_cpu", "[pretrained]") {
  const auto accelerator = g2c::testing::accelerator_device();
  if (!accelerator) G2C_SKIP(g2c::testing::kNoAccelerator);
  // In float64 where the accelerator has it (CUDA): the two devices then agree to rounding, so a
  // table, a mask or a cache left on the CPU stands out. MPS has no float64: float32 there.
  const bool in_double = accelerator->is_cuda();
  auto model = tiny_model();
  if (in_double) model->to(torch::kDouble);
  const auto ids = torch::tensor({{3, 1, 4, 1, 5, 9, 2, 6}}, torch::kLong);
  torch::NoGradGuard no_grad;
  // The prompt at once, then two cached steps: every path of the forward.
  const auto run = [&](const torch::Device& device) {
    auto cache = model->empty_kv_cache();
    std::vector<torch::Tensor> logits = {model->forward(ids.to(device), cache)};
    for (const std::int64_t id : {7, 11}) {
      logits.push_back(model->forward(torch::tensor({{id}}, torch::kLong).to(device), cache));
    }
    return torch::cat(logits, 1).cpu();
  };
  const auto on_cpu = run(torch::kCPU);
  model->to(*accelerator);
  for (const auto& p : model->parameters()) CHECK(p.device().type() == accelerator->type());
  const auto there = run(*accelerator);
  const double size = on_cpu.abs().max().item<double>();
  INFO("max |difference| = " << max_abs_diff(there, on_cpu) << ", largest |logit| " << size);
  CHECK(max_abs_diff(there, on_cpu) < (in_double ? 1e-9 : 1e-5) * size);
}

TEST_CASE("llama_refuses_ids_it_cannot_read", "[pretrained]") {
  auto model = tiny_model();
  torch::NoGradGuard no_grad;
  CHECK_THROWS_WITH(model->forward(torch::tensor({{1, 20}}, torch::kLong)),
                    Contains("token ids must be in [0, 20)"));
  CHECK_THROWS_WITH(model->forward(torch::tensor({{1.0, 2.0}})), Contains("int64"));
  CHECK_THROWS_WITH(model->forward(torch::zeros({1, 33}, torch::kLong)),
                    Contains("do not fit its context of 32"));
  auto cache = model->empty_kv_cache();
  model->forward(torch::zeros({1, 30}, torch::kLong), cache);
  CHECK_THROWS_WITH(model->forward(torch::zeros({1, 3}, torch::kLong), cache),
                    Contains("after the 30 cached"));
}

TEST_CASE("smollm2_file_has_the_sizes_the_spec_states", "[pretrained]") {
  const auto path = g2c::pretrained::pretrained_model_default_file("SmolLM2-135M-Instruct");
  if (!std::filesystem::exists(path)) G2C_SKIP(path.string() + " is missing: run scripts/setup.sh");
  const auto file = g2c::pretrained::GGUFFile::open(path);
  const auto options = LlamaOptions::from_gguf(file);
  CHECK(options.num_layers() == 30);
  CHECK(options.embedding_dim() == 576);
  CHECK(options.num_heads() == 9);
  CHECK(options.num_kv_heads() == 3);
  CHECK(options.hidden_dim() == 1536);
  CHECK(options.vocab_size() == 49152);
  CHECK(options.max_seq_len() == 8192);
  CHECK(options.rope_base() == 100000.0);
  CHECK(options.num_parameters() == 134515008);
  CHECK_FALSE(file.has_tensor("output.weight"));  // the head is tied to token_embd
}

TEST_CASE("chat_sft_example_masks_the_assistant_turns_and_nothing_else", "[pretrained]") {
  const auto path = g2c::pretrained::pretrained_model_default_file("SmolLM2-135M-Instruct");
  if (!std::filesystem::exists(path)) G2C_SKIP(path.string() + " is missing: run scripts/setup.sh");
  const auto tokenizer =
      g2c::pretrained::PretrainedTokenizer::from_gguf(g2c::pretrained::GGUFFile::open(path));
  const std::vector<g2c::pretrained::ChatMessage> turns = {
      {"system", "You add numbers."},
      {"user", "What is 2 + 3?"},
      {"assistant", "{\"name\":\"calculator\"}"},
      {"user", "The calculator tool returned: 5"},
      {"assistant", "2 + 3 = 5."}};
  const auto example = g2c::pretrained::chat_sft_example(tokenizer, turns);
  // The ids are the whole rendering's, encoded at once (the turn-by-turn build changes nothing).
  CHECK(example.ids == tokenizer.encode(tokenizer.format_chat(turns, false)));
  REQUIRE(example.mask.size() == example.ids.size());
  // What the mask keeps, decoded: the two replies, each with its end token, and nothing else.
  std::vector<std::int64_t> kept, dropped;
  for (std::size_t t = 0; t < example.ids.size(); ++t) {
    (example.mask[t] == 1 ? kept : dropped).push_back(example.ids[t]);
  }
  CHECK(tokenizer.decode(kept) == "{\"name\":\"calculator\"}<|im_end|>2 + 3 = 5.<|im_end|>");
  const auto rest = tokenizer.decode(dropped);
  CHECK(rest.find("What is 2 + 3?") != std::string::npos);
  CHECK(rest.find("<|im_start|>assistant\n") != std::string::npos);
  CHECK(rest.find("calculator\"}") == std::string::npos);
  // Without a system turn, the template's default one comes first, unmasked.
  const auto defaulted =
      g2c::pretrained::chat_sft_example(tokenizer, {{"user", "Hi"}, {"assistant", "Hello!"}});
  CHECK(defaulted.ids ==
        tokenizer.encode(tokenizer.format_chat({{"user", "Hi"}, {"assistant", "Hello!"}}, false)));
  CHECK(std::count(defaulted.mask.begin(), defaulted.mask.end(), 1) ==
        static_cast<std::int64_t>(tokenizer.encode("Hello!").size() + 1));
  CHECK_THROWS_AS(g2c::pretrained::chat_sft_example(tokenizer, {}), g2c::ValueError);
}
