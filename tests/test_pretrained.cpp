// Module 16 course tests, this edition's additions: the four pieces that separate a 2024 open model
// from the course's GPT — rms_norm, SwiGLU::forward, repeat_kv and one Q4_1 block's dequantization
// — and, once they pass, SmolLM2-135M-Instruct answering through them.
//
// Suggested order: dequantize_q4_1_block (q4_1_*), rms_norm (rms_norm_*), SwiGLU::forward
// (swiglu_*), repeat_kv (repeat_kv_*). The attention and model tests also run module 05's
// build_cos_sin and module 07's attention; the SmolLM2 test needs all four and the model file
// (scripts/setup.sh fetches it; without it the test is skipped, visibly).
#include <cstdint>
#include <cstring>
#include <vector>

#include <torch/torch.h>

#include "g2c/attention/layer_kv_cache.h"
#include "g2c/core/errors.h"
#include "g2c/pretrained/gguf.h"
#include "g2c/pretrained/grouped_query_attention.h"
#include "g2c/pretrained/llama.h"
#include "g2c/pretrained/rms_norm.h"
#include "g2c/pretrained/swiglu.h"
#include "g2c_test.h"
#include "torch_test.h"

using g2c::pretrained::dequantize_q4_1_block;
using g2c::pretrained::GroupedQueryAttention;
using g2c::pretrained::GroupedQueryAttentionOptions;
using g2c::pretrained::repeat_kv;
using g2c::pretrained::rms_norm;
using g2c::pretrained::RMSNorm;
using g2c::pretrained::SwiGLU;
using g2c::testing::max_abs_diff;

namespace {

// A Q4_1 block: scale d and minimum m as float16 bits, then the 16 code bytes.
std::vector<std::uint8_t> q4_1_block(std::uint16_t d_bits, std::uint16_t m_bits,
                                     const std::vector<std::uint8_t>& codes) {
  std::vector<std::uint8_t> block(20, 0);
  std::memcpy(block.data(), &d_bits, 2);
  std::memcpy(block.data() + 2, &m_bits, 2);
  std::copy(codes.begin(), codes.end(), block.begin() + 4);
  return block;
}

constexpr std::uint16_t kHalf = 0x3800;      // float16 0.5
constexpr std::uint16_t kMinusOne = 0xBC00;  // float16 -1
constexpr std::uint16_t kTwo = 0x4000;       // float16 2

std::vector<float> dequantized(const std::vector<std::uint8_t>& block) {
  std::vector<float> out(32, 0.0f);
  dequantize_q4_1_block(block.data(), out.data());
  return out;
}

// SwiGLU with hand-set weights: D 2, F 2.
SwiGLU small_swiglu() {
  SwiGLU ffn(2, 2);
  torch::NoGradGuard no_grad;
  ffn->W_gate.copy_(torch::tensor({{1.0, 0.0}, {0.0, -1.0}}));
  ffn->W_up.copy_(torch::tensor({{2.0, 1.0}, {0.0, 3.0}}));
  ffn->W_down.copy_(torch::tensor({{1.0, 0.0}, {1.0, 1.0}}));
  return ffn;
}

double silu(double z) {
  return z / (1.0 + std::exp(-z));
}

}  // namespace

// ---- one Q4_1 block -------------------------------------------------------------------------

TEST_CASE("q4_1_block_known_values", "[pretrained]") {
  // d = 0.5, m = -1; byte 0 holds code 1 (low) and 3 (high).
  const auto out = dequantized(q4_1_block(kHalf, kMinusOne, {0x31}));
  CHECK(out[0] == -0.5f);  // 1 · 0.5 - 1
  CHECK(out[16] == 0.5f);  // 3 · 0.5 - 1
  CHECK(out[1] == -1.0f);  // code 0 is the minimum
}

TEST_CASE("q4_1_block_low_nibbles_are_the_first_half", "[pretrained]") {
  std::vector<std::uint8_t> codes(16);
  for (int i = 0; i < 16; ++i) codes[i] = static_cast<std::uint8_t>(i | ((15 - i) << 4));
  const auto out = dequantized(q4_1_block(kTwo, 0, codes));
  for (int i = 0; i < 16; ++i) {
    INFO("value " << i << " is byte " << i << "'s low nibble, value " << i + 16 << " its high one");
    CHECK(out[i] == 2.0f * static_cast<float>(i));
    CHECK(out[i + 16] == 2.0f * static_cast<float>(15 - i));
  }
}

TEST_CASE("q4_1_block_adds_the_minimum_after_scaling", "[pretrained]") {
  // q · d + m, not (q + m) · d: with d = 2, m = -1 and code 5 the value is 9, not 8.
  const auto out = dequantized(q4_1_block(kTwo, kMinusOne, std::vector<std::uint8_t>(16, 0x55)));
  for (float value : out) CHECK(value == 9.0f);
}

TEST_CASE("q4_1_block_reads_the_scale_and_minimum_as_float16", "[pretrained]") {
  // float16 0x3C00 is 1.0 and 0x3555 is 0.33325195: the halves must be decoded, not cast.
  const auto out = dequantized(q4_1_block(0x3C00, 0x3555, std::vector<std::uint8_t>(16, 0x21)));
  CHECK(out[0] == Approx(1.0f + 0.33325195f).epsilon(1e-7));
  CHECK(out[16] == Approx(2.0f + 0.33325195f).epsilon(1e-7));
}

// ---- RMSNorm -------------------------------------------------------------------------------

TEST_CASE("rms_norm_known_values", "[pretrained]") {
  // mean square of [3, 4] is 12.5: [3, 4] / √12.5.
  const auto y = rms_norm(torch::tensor({{3.0, 4.0}}), torch::ones({2}, torch::kDouble), 0.0);
  CHECK(y[0][0].item<double>() == py_approx(3.0 / std::sqrt(12.5)));
  CHECK(y[0][1].item<double>() == py_approx(4.0 / std::sqrt(12.5)));
}

TEST_CASE("rms_norm_does_not_subtract_the_mean", "[pretrained]") {
  // A constant vector keeps its direction: LayerNorm would make it all zeros.
  const auto y =
      rms_norm(torch::full({1, 4}, 2.0, torch::kDouble), torch::ones({4}, torch::kDouble), 0.0);
  INFO("RMSNorm divides by √mean(x²); it subtracts nothing (that is LayerNorm)");
  CHECK(max_abs_diff(y, torch::ones({1, 4}, torch::kDouble)) < 1e-12);
}

TEST_CASE("rms_norm_keeps_eps_inside_the_root", "[pretrained]") {
  // x = 0.001 everywhere, eps = 0.01: 0.001 / √(1e-6 + 0.01), not 0.001 / (0.001 + 0.01).
  const auto y =
      rms_norm(torch::full({1, 3}, 0.001, torch::kDouble), torch::ones({3}, torch::kDouble), 0.01);
  CHECK(y[0][0].item<double>() == py_approx(0.001 / std::sqrt(1e-6 + 0.01)));
}

TEST_CASE("rms_norm_scales_each_channel_by_its_weight", "[pretrained]") {
  const auto x = torch::tensor({{3.0, 4.0}});
  const auto y = rms_norm(x, torch::tensor({2.0, -1.0}), 0.0);
  CHECK(y[0][0].item<double>() == py_approx(2.0 * 3.0 / std::sqrt(12.5)));
  CHECK(y[0][1].item<double>() == py_approx(-1.0 * 4.0 / std::sqrt(12.5)));
}

TEST_CASE("rms_norm_normalizes_each_position_alone", "[pretrained]") {
  // Two rows of very different sizes: each comes out with root mean square 1.
  torch::manual_seed(0);
  const auto x = torch::randn({2, 3, 8}, torch::kDouble) *
                 torch::tensor({1.0, 100.0}, torch::kDouble).view({2, 1, 1});
  const auto y = rms_norm(x, torch::ones({8}, torch::kDouble), 0.0);
  const auto rms = y.pow(2).mean(-1).sqrt();  // (2, 3)
  CHECK(max_abs_diff(rms, torch::ones({2, 3}, torch::kDouble)) < 1e-12);
  CHECK(max_abs_diff(y, x / x.pow(2).mean(-1, true).sqrt()) < 1e-12);
}

TEST_CASE("rms_norm_module_uses_its_weight_and_eps", "[pretrained]") {
  RMSNorm norm(g2c::pretrained::RMSNormOptions(2).eps(0.5));
  {
    torch::NoGradGuard no_grad;
    norm->weight.copy_(torch::tensor({1.0, 3.0}));
  }
  const auto y = norm(torch::tensor({{1.0f, 1.0f}}));
  CHECK(y[0][1].item<double>() == Approx(3.0 / std::sqrt(1.5)).epsilon(1e-6));
}

// ---- SwiGLU --------------------------------------------------------------------------------

TEST_CASE("swiglu_forward_shape", "[pretrained]") {
  SwiGLU ffn(8, 20);
  CHECK(ffn(torch::randn({2, 5, 8})).sizes() == torch::IntArrayRef({2, 5, 8}));
}

TEST_CASE("swiglu_known_values", "[pretrained]") {
  // x = [1, 2]: gate = [1, -2], up = [2, 7]; h = [silu(1)·2, silu(-2)·7]; y = [h0 + h1, h1].
  auto ffn = small_swiglu();
  const auto y = ffn(torch::tensor({{1.0f, 2.0f}}));
  const double h0 = silu(1.0) * 2.0, h1 = silu(-2.0) * 7.0;
  CHECK(y[0][0].item<double>() == Approx(h0 + h1).epsilon(1e-6));
  CHECK(y[0][1].item<double>() == Approx(h1).epsilon(1e-6));
}

TEST_CASE("swiglu_applies_silu_to_the_gate_branch_only", "[pretrained]") {
  // silu on x @ W_up instead, or on both, or on the product, changes these numbers.
  auto ffn = small_swiglu();
  const auto x = torch::tensor({{-1.0f, 0.5f}});
  const auto gate = x.matmul(ffn->W_gate), up = x.matmul(ffn->W_up);
  const auto expected = (torch::silu(gate) * up).matmul(ffn->W_down);
  const auto swapped = (gate * torch::silu(up)).matmul(ffn->W_down);
  REQUIRE(max_abs_diff(expected, swapped) > 0.1);
  INFO("y = (silu(x @ W_gate) ⊙ (x @ W_up)) @ W_down");
  CHECK(max_abs_diff(ffn(x), expected) < 1e-6);
}

TEST_CASE("swiglu_rejects_the_wrong_feature_size", "[pretrained]") {
  SwiGLU ffn(4, 6);
  CHECK_THROWS_AS(ffn(torch::randn({2, 5})), g2c::ValueError);
}

// ---- repeat_kv -----------------------------------------------------------------------------

TEST_CASE("repeat_kv_shape", "[pretrained]") {
  CHECK(repeat_kv(torch::randn({2, 3, 5, 4}), 3).sizes() == torch::IntArrayRef({2, 9, 5, 4}));
}

TEST_CASE("repeat_kv_repeats_each_head_in_a_row", "[pretrained]") {
  // Heads a (all 1) and b (all 2), twice each: a, a, b, b — query head h reads head h / n_rep.
  const auto x = torch::stack({torch::ones({3, 2}), torch::full({3, 2}, 2.0)}).unsqueeze(0);
  const auto y = repeat_kv(x, 2);  // (1, 4, 3, 2)
  INFO("head g is followed by its own copies: [a, b] -> [a, a, b, b], not [a, b, a, b]");
  CHECK(y[0][0][0][0].item<float>() == 1.0f);
  CHECK(y[0][1][0][0].item<float>() == 1.0f);
  CHECK(y[0][2][0][0].item<float>() == 2.0f);
  CHECK(y[0][3][0][0].item<float>() == 2.0f);
}

TEST_CASE("repeat_kv_matches_repeat_interleave", "[pretrained]") {
  torch::manual_seed(1);
  const auto x = torch::randn({2, 3, 4, 5});
  CHECK(max_abs_diff(repeat_kv(x, 4), torch::repeat_interleave(x, 4, /*dim=*/1)) == 0.0);
}

TEST_CASE("repeat_kv_with_one_repeat_is_the_identity", "[pretrained]") {
  const auto x = torch::randn({1, 3, 2, 4});
  CHECK(max_abs_diff(repeat_kv(x, 1), x) == 0.0);
}

TEST_CASE("grouped_query_attention_cached_steps_equal_the_full_forward", "[pretrained]") {
  // A prompt into the cache, then one token per step: the same outputs as one causal forward.
  torch::manual_seed(2);
  GroupedQueryAttention attention(GroupedQueryAttentionOptions(12, 6, 2).max_seq_len(16));
  const auto x = torch::randn({2, 7, 12});
  torch::NoGradGuard no_grad;
  const auto full = attention->forward(x);
  g2c::attention::LayerKVCache cache;
  std::vector<torch::Tensor> parts = {attention->forward(x.narrow(1, 0, 4), cache)};
  for (std::int64_t t = 4; t < 7; ++t)
    parts.push_back(attention->forward(x.narrow(1, t, 1), cache));
  CHECK(cache.k.size(1) == 2);  // the cache keeps G = 2 heads, not 6
  CHECK(max_abs_diff(torch::cat(parts, 1), full) < 1e-5);
}

TEST_CASE("grouped_query_attention_with_one_group_per_head_is_multi_head", "[pretrained]") {
  // G = H: repeat_kv has nothing to repeat, and each head attends with its own keys alone.
  torch::manual_seed(3);
  GroupedQueryAttention attention(GroupedQueryAttentionOptions(8, 2, 2).max_seq_len(8));
  const auto x = torch::randn({1, 5, 8});
  torch::NoGradGuard no_grad;
  const auto q = attention->rotate(x.matmul(attention->Wq).view({1, 5, 2, 4}).transpose(1, 2), 0);
  const auto k = attention->rotate(x.matmul(attention->Wk).view({1, 5, 2, 4}).transpose(1, 2), 0);
  const auto v = x.matmul(attention->Wv).view({1, 5, 2, 4}).transpose(1, 2);
  const auto scores = q.matmul(k.transpose(-2, -1)) / 2.0;  // √d = 2
  const auto blocked = torch::ones({5, 5}, torch::kBool).triu(1);
  const auto out = torch::softmax(scores.masked_fill(blocked, -INFINITY), -1).matmul(v);
  const auto expected = out.transpose(1, 2).reshape({1, 5, 8}).matmul(attention->Wo);
  CHECK(max_abs_diff(attention->forward(x), expected) < 1e-5);
}

// ---- the real model ------------------------------------------------------------------------

TEST_CASE("smollm2_answers_what_is_the_capital_of_france", "[pretrained]") {
  const auto path = g2c::pretrained::pretrained_model_default_file("SmolLM2-135M-Instruct");
  if (!std::filesystem::exists(path)) G2C_SKIP(path.string() + " is missing: run scripts/setup.sh");
  auto model = g2c::pretrained::load_llama(path);
  // The chat prompt "What is the capital of France?" in SmolLM2's template, as its tokenizer
  // writes it (scripts/check_pretrained_tokenizer.py holds the course's tokenizer to these ids).
  const std::vector<std::int64_t> prompt = {
      1,   9690, 198, 2683, 359,   253,  5356, 5646, 11173, 3365, 3511, 308,  34519,
      28,  7018, 411, 407,  19712, 8182, 2,    198,  1,     4093, 198,  1780, 314,
      260, 3575, 282, 4649, 47,    2,    198,  1,    520,   9531, 198};
  torch::NoGradGuard no_grad;
  auto cache = model->empty_kv_cache(64);
  auto logits = model->forward(torch::tensor(prompt).unsqueeze(0), cache);
  std::vector<std::int64_t> answer;
  for (int step = 0; step < 8; ++step) {
    const auto next = logits[0][-1].argmax().item<std::int64_t>();
    answer.push_back(next);
    if (next == 2) break;  // <|im_end|>
    logits = model->forward(torch::tensor({{next}}), cache);
  }
  // "The capital of France is Paris." then <|im_end|>.
  INFO("greedy ids: " << torch::tensor(answer));
  CHECK(answer == std::vector<std::int64_t>{504, 3575, 282, 4649, 314, 7042, 30, 2});
}
