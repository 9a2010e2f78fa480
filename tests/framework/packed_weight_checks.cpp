// Framework checks of the packed fast path (g2c/pretrained/packed_weight.h), against the lesson's
// dequantize and LibTorch's matmul: matrices encoded here from the formats' definitions (Q4_1,
// Q8_0, Q4_0, F16, F32) decode bit for bit like dequantize, multiply like x @ W with both the AVX2
// kernels and the portable loops, and a small Llama loaded packed computes what it computes dense.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/pretrained/llama.h"
#include "g2c/pretrained/lora.h"
#include "g2c/pretrained/packed_weight.h"
#include "g2c_test.h"
#include "gguf_writer.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::pretrained::GGUFFile;
using g2c::pretrained::PackedWeight;
using g2c::testing::GGUFWriter;
using g2c::testing::max_abs_diff;
using g2c::testing::TemporaryFile;

namespace {

void put_half(std::vector<std::uint8_t>& out, float value) {
  const std::uint16_t bits = c10::Half(value).x;
  out.push_back(static_cast<std::uint8_t>(bits & 0xff));
  out.push_back(static_cast<std::uint8_t>(bits >> 8));
}

// `values` (a multiple of 32 of them) encoded as ggml type `type`, block by block as ggml's
// reference quantizers define them.
std::vector<std::uint8_t> encode(std::uint32_t type, const std::vector<float>& values) {
  std::vector<std::uint8_t> out;
  if (type == 0) {
    out.resize(values.size() * 4);
    std::memcpy(out.data(), values.data(), out.size());
    return out;
  }
  if (type == 1) {
    for (float v : values) put_half(out, v);
    return out;
  }
  for (std::size_t start = 0; start < values.size(); start += 32) {
    const auto first = values.begin() + static_cast<std::ptrdiff_t>(start);
    const std::vector<float> block(first, first + 32);
    const auto [low, high] = std::minmax_element(block.begin(), block.end());
    const float amax = std::max(std::abs(*low), std::abs(*high));
    if (type == 8) {  // Q8_0: d = amax / 127, q = round(x / d)
      const float d = amax / 127.0f;
      put_half(out, d);
      for (float v : block) {
        out.push_back(static_cast<std::uint8_t>(static_cast<std::int8_t>(std::lround(v / d))));
      }
    } else if (type == 3) {  // Q4_1: m = min, d = (max - min) / 15, q = round((x - m) / d)
      const float d = (*high - *low) / 15.0f, m = *low;
      put_half(out, d);
      put_half(out, m);
      for (int j = 0; j < 16; ++j) {
        const auto q = [&](float v) { return std::clamp<long>(std::lround((v - m) / d), 0, 15); };
        out.push_back(static_cast<std::uint8_t>(q(block[j]) | (q(block[j + 16]) << 4)));
      }
    } else if (type == 2) {  // Q4_0: d = amax / 7, q = round(x / d) + 8
      const float d = amax / 7.0f;
      put_half(out, d);
      for (int j = 0; j < 16; ++j) {
        const auto q = [&](float v) { return std::clamp<long>(std::lround(v / d) + 8, 0, 15); };
        out.push_back(static_cast<std::uint8_t>(q(block[j]) | (q(block[j + 16]) << 4)));
      }
    }
  }
  return out;
}

std::vector<float> random_values(std::int64_t n, std::uint64_t seed) {
  torch::manual_seed(seed);
  const auto t = torch::randn({n});
  return {t.data_ptr<float>(), t.data_ptr<float>() + n};
}

struct TypeCase {
  std::uint32_t type;
  const char* name;
};
const std::vector<TypeCase> kTypes = {
    {3, "Q4_1"}, {8, "Q8_0"}, {2, "Q4_0"}, {1, "F16"}, {0, "F32"}};

// A file with one (70, 96) matrix per type: 70 rows split unevenly over the threads' chunks.
constexpr std::int64_t kRows = 70, kCols = 96;

std::vector<std::uint8_t> matrices_file() {
  GGUFWriter file;
  file.text("general.architecture", "test");
  for (const auto& [type, name] : kTypes) {
    file.encoded(name, {kRows, kCols}, type, encode(type, random_values(kRows * kCols, type)));
  }
  return file.bytes();
}

// The lesson's dequantized (rows, cols) matrix of tensor `name`.
torch::Tensor dequantized_by_the_lesson(const GGUFFile& file, const std::string& name) {
  auto values = g2c::pretrained::dequantize(file, file.tensor(name));
  return torch::tensor(values).view({kRows, kCols});
}

// Runs `check` with the AVX2 kernels (where this CPU has them) and with the portable loops.
template <typename Check>
void with_both_kernels(Check&& check) {
  const bool previous = PackedWeight::use_vectorized(true);
  check();
  PackedWeight::use_vectorized(false);
  check();
  PackedWeight::use_vectorized(previous);
}

}  // namespace

TEST_CASE("packed_rows_decode_bit_for_bit_as_dequantize", "[pretrained]") {
  const TemporaryFile path(matrices_file(), "packed_matrices");
  const auto file = GGUFFile::open(path.path);
  with_both_kernels([&] {
    for (const auto& [type, name] : kTypes) {
      INFO(name << (PackedWeight::vectorized() ? ", AVX2" : ", portable"));
      const auto packed = PackedWeight::from_gguf(file, file.tensor(name));
      const auto lesson = dequantized_by_the_lesson(file, name);  // (out, in)
      CHECK(packed.out_features() == kRows);
      CHECK(packed.in_features() == kCols);
      CHECK(max_abs_diff(packed.dequantized(), lesson.t()) == 0.0);
      const auto ids = torch::tensor({69, 0, 33, 33}, torch::kLong);
      CHECK(max_abs_diff(packed.rows(ids), lesson.index_select(0, ids)) == 0.0);
    }
  });
}

TEST_CASE("packed_matmul_equals_x_times_the_dequantized_matrix", "[pretrained]") {
  const TemporaryFile path(matrices_file(), "packed_matrices");
  const auto file = GGUFFile::open(path.path);
  torch::manual_seed(3);
  with_both_kernels([&] {
    for (const auto& [type, name] : kTypes) {
      const auto packed = PackedWeight::from_gguf(file, file.tensor(name));
      const auto w = dequantized_by_the_lesson(file, name).t();  // (in, out)
      // One token (the fused kernels), a few (decoded rows), a prompt (the whole matrix decoded).
      for (const std::int64_t n : {1, 3, 20}) {
        INFO(name << ", " << n << " rows" << (PackedWeight::vectorized() ? ", AVX2" : ""));
        const auto x = torch::randn({1, n, kCols});
        const auto expected = x.to(torch::kDouble).matmul(w.to(torch::kDouble));
        const auto got = packed.matmul(x);
        CHECK(got.sizes() == torch::IntArrayRef({1, n, kRows}));
        CHECK(max_abs_diff(got.to(torch::kDouble), expected) < 1e-4);
      }
    }
  });
}

TEST_CASE("packed_rows_follow_the_row_order_given", "[pretrained]") {
  const TemporaryFile path(matrices_file(), "packed_matrices");
  const auto file = GGUFFile::open(path.path);
  std::vector<std::int64_t> order(kRows);
  for (std::int64_t r = 0; r < kRows; ++r) order[static_cast<std::size_t>(r)] = (r * 3) % kRows;
  const auto reordered = PackedWeight::from_gguf(file, file.tensor("Q4_1"), order);
  const auto lesson = dequantized_by_the_lesson(file, "Q4_1");
  CHECK(max_abs_diff(reordered.dequantized().t(), lesson.index_select(0, torch::tensor(order))) ==
        0.0);
  order[1] = order[0];  // a row twice, another never
  CHECK_THROWS_WITH(PackedWeight::from_gguf(file, file.tensor("Q4_1"), order),
                    Contains("each of its 70 rows once"));
}

TEST_CASE("packed_matmul_refuses_what_it_cannot_multiply", "[pretrained]") {
  const TemporaryFile path(matrices_file(), "packed_matrices");
  const auto file = GGUFFile::open(path.path);
  const auto packed = PackedWeight::from_gguf(file, file.tensor("Q8_0"));
  CHECK_THROWS_AS(packed.matmul(torch::randn({2, kCols}, torch::kDouble)), g2c::ValueError);
  CHECK_THROWS_WITH(packed.matmul(torch::randn({2, kCols}, torch::kDouble)),
                    Contains("float32 on the CPU"));
  CHECK_THROWS_WITH(packed.matmul(torch::randn({2, kCols + 1})), Contains("(..., 96)"));
  CHECK_THROWS_WITH(packed.rows(torch::tensor({70}, torch::kLong)), Contains("outside [0, 70)"));
  CHECK_THROWS_WITH(PackedWeight().matmul(torch::randn({1, 4})), Contains("empty weight"));
}

namespace {

// A small Llama as a quantized file: Q4_1 matrices, a Q8_0 embedding, float32 norms; sizes that
// are multiples of 32, as block formats need. Wq and Wk are written as they are (the permutation
// is the other check's subject); both loads un-permute them alike.
std::vector<std::uint8_t> quantized_llama_file() {
  const std::int64_t d = 64, f = 96, v = 40, layers = 2, heads = 4, kv_heads = 2;
  const std::int64_t kv = kv_heads * d / heads;
  GGUFWriter file;
  file.text("general.architecture", "llama")
      .u32("llama.block_count", layers)
      .u32("llama.context_length", 32)
      .u32("llama.embedding_length", d)
      .u32("llama.feed_forward_length", f)
      .u32("llama.attention.head_count", heads)
      .u32("llama.attention.head_count_kv", kv_heads)
      .f32("llama.rope.freq_base", 1000.0f)
      .f32("llama.attention.layer_norm_rms_epsilon", 1e-5f)
      .u32("llama.vocab_size", v);
  std::uint64_t seed = 100;
  const auto matrix = [&](const std::string& name, std::int64_t out, std::int64_t in,
                          std::uint32_t type, float scale) {
    auto values = random_values(out * in, ++seed);
    for (auto& x : values) x *= scale;
    file.encoded(name, {out, in}, type, encode(type, values));
  };
  const auto norm = [&](const std::string& name) {
    auto values = random_values(d, ++seed);
    for (auto& x : values) x = 1.0f + 0.1f * x;
    file.tensor(name, {d}, values);
  };
  matrix("token_embd.weight", v, d, 8, 1.0f);
  norm("output_norm.weight");
  for (int l = 0; l < layers; ++l) {
    const auto blk = "blk." + std::to_string(l) + ".";
    norm(blk + "attn_norm.weight");
    matrix(blk + "attn_q.weight", d, d, 3, 0.15f);
    matrix(blk + "attn_k.weight", kv, d, 3, 0.15f);
    matrix(blk + "attn_v.weight", kv, d, 3, 0.15f);
    matrix(blk + "attn_output.weight", d, d, 3, 0.15f);
    norm(blk + "ffn_norm.weight");
    matrix(blk + "ffn_gate.weight", f, d, 3, 0.15f);
    matrix(blk + "ffn_up.weight", f, d, 3, 0.15f);
    matrix(blk + "ffn_down.weight", d, f, 3, 0.1f);
  }
  return file.bytes();
}

}  // namespace

TEST_CASE("a_packed_llama_computes_what_the_dense_one_does", "[pretrained]") {
  const TemporaryFile path(quantized_llama_file(), "quantized_llama");
  g2c::pretrained::LoadReport dense_report, packed_report;
  auto dense = g2c::pretrained::load_llama(path.path, &dense_report);
  auto packed = g2c::pretrained::load_llama(path.path, &packed_report,
                                            g2c::pretrained::LoadOptions().packed(true));
  CHECK_FALSE(dense->packed());
  CHECK(packed->packed());
  // LoRA trains float32 projections: a packed model is refused, by name (g2c/pretrained/lora.h).
  CHECK_THROWS_WITH(g2c::pretrained::LlamaLoRA(packed, 4), Contains("packed(false)"));
  CHECK(dense_report.weight_bytes == dense->options.num_parameters() * 4);
  // Blocks of 32 values: Q8_0 34 bytes, Q4_1 20; the norms stay float32.
  const auto o = packed->options;
  const auto matrices = o.num_parameters() - o.vocab_size() * 64 - (2 * o.num_layers() + 1) * 64;
  CHECK(packed_report.weight_bytes ==
        o.vocab_size() * 64 / 32 * 34 + matrices / 32 * 20 + (2 * o.num_layers() + 1) * 64 * 4);
  torch::NoGradGuard no_grad;
  with_both_kernels([&] {
    INFO((PackedWeight::vectorized() ? "AVX2" : "portable"));
    const auto ids = torch::tensor({{3, 1, 4, 1, 5, 9, 2, 6}}, torch::kLong);
    CHECK(max_abs_diff(packed->forward(ids), dense->forward(ids)) < 1e-4);
    // Cached steps, one token each: the fused one-row kernels.
    auto dense_cache = dense->empty_kv_cache(), packed_cache = packed->empty_kv_cache();
    auto next_dense = dense->forward(ids, dense_cache).select(1, -1).argmax(-1, true);
    auto next_packed = packed->forward(ids, packed_cache).select(1, -1).argmax(-1, true);
    for (int step = 0; step < 6; ++step) {
      CHECK(next_dense.item<std::int64_t>() == next_packed.item<std::int64_t>());
      const auto dense_logits = dense->forward(next_dense, dense_cache);
      const auto packed_logits = packed->forward(next_dense, packed_cache);
      CHECK(max_abs_diff(packed_logits, dense_logits) < 1e-4);
      next_dense = dense_logits.select(1, -1).argmax(-1, true);
      next_packed = packed_logits.select(1, -1).argmax(-1, true);
    }
  });
}

TEST_CASE("a_packed_llama_with_an_adapter_computes_what_the_merged_dense_one_does",
          "[pretrained][lora]") {
  const TemporaryFile path(quantized_llama_file(), "quantized_llama");
  auto trained = g2c::pretrained::load_llama(path.path);
  g2c::pretrained::LlamaLoRA lora(trained, g2c::pretrained::LlamaLoRAOptions(4).targets(
                                               {"q", "k", "v", "o", "gate", "up", "down"}));
  {
    torch::NoGradGuard no_grad;
    for (auto& parameter : lora->parameters()) parameter.normal_(0.0, 0.3);
  }
  const auto adapter = g2c::pretrained::adapter_of(*lora, "tiny-calc", "tiny");
  auto dense = g2c::pretrained::load_llama(path.path);
  auto packed =
      g2c::pretrained::load_llama(path.path, nullptr, g2c::pretrained::LoadOptions().packed(true));
  torch::NoGradGuard no_grad;
  const auto ids = torch::tensor({{3, 1, 4, 1, 5, 9, 2, 6}}, torch::kLong);
  const auto base = packed->forward(ids);
  g2c::pretrained::merge_llama_adapter(*dense, adapter);
  g2c::pretrained::merge_llama_adapter(*packed, adapter);
  // The blocks stay packed; each targeted product gains a rank-4 term.
  CHECK(packed->packed());
  CHECK(packed->block_list[0]->attention->packed->q.low_rank() == 4);
  CHECK(packed->block_list[1]->ffn->packed->down.low_rank() == 4);
  with_both_kernels([&] {
    INFO((PackedWeight::vectorized() ? "AVX2" : "portable"));
    const auto merged = dense->forward(ids);
    CHECK(max_abs_diff(merged, base) > 1e-2);  // the adapter changes the model
    CHECK(max_abs_diff(packed->forward(ids), merged) < 1e-4);
    CHECK(max_abs_diff(dense->forward(ids), lora->forward(ids)) < 1e-4);
    // Cached steps, one token each (the fused kernels plus the low-rank term).
    auto dense_cache = dense->empty_kv_cache(), packed_cache = packed->empty_kv_cache();
    dense->forward(ids, dense_cache);
    packed->forward(ids, packed_cache);
    for (const std::int64_t id : {7, 0, 12}) {
      const auto next = torch::tensor({{id}}, torch::kLong);
      CHECK(max_abs_diff(packed->forward(next, packed_cache), dense->forward(next, dense_cache)) <
            1e-4);
    }
  });
  // dequantized() is the matrix the dense model holds, the addend included.
  CHECK(max_abs_diff(packed->block_list[0]->attention->packed->v.dequantized(),
                     dense->block_list[0]->attention->Wv) < 1e-5);
  const auto& q = packed->block_list[0]->attention->packed->q;
  CHECK_THROWS_WITH(q.with_low_rank(torch::zeros({3, 2}), torch::zeros({2, 64})),
                    Contains("A (in 64, r)"));
}
