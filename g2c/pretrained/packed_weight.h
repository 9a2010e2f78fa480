// Module 16, implemented for you — the fast path: a weight matrix kept in the file's own blocks
// (Q4_1 and Q8_0 for SmolLM2, 5 and 8.5 bits a value) and multiplied without ever being
// dequantized whole.
//
// Decoding one token reads every weight once, so its speed is the speed of memory: float32
// weights are 538 MB a token for SmolLM2, its packed blocks 97 MB. For one input row (a decoding
// step) the AVX2 kernels multiply each block in place as d·Σ q·x + m·Σ x, never writing a decoded
// value; for a few rows, each weight row is decoded into a small buffer that stays in the core's
// L1 cache — the same float32 values the lesson's dequantize gives, bit for bit — and dotted with
// the inputs; for a prompt, the matrix is decoded once and LibTorch multiplies. Only the grouping
// of the additions differs from x @ W, so the results agree to float32 rounding.
//
//   auto wq = PackedWeight::from_gguf(file, file.tensor("blk.0.attn_q.weight"));  // (out, in)
//   auto y = wq.matmul(x);  // x (…, in) float32 on the CPU -> (…, out), == x @ wq.dequantized()
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/pretrained/gguf.h"

namespace g2c::pretrained {

class PackedWeight {
 public:
  PackedWeight() = default;
  /// The (out, in) matrix `tensor` of `file`, its blocks copied out of the mapped file. With
  /// `row_order`, row r is the file's row row_order[r] (load_llama's un-permuted Wq and Wk).
  /// ValueError for a tensor that is not a matrix, a type without a kernel (F32, F16, Q8_0, Q4_0
  /// and Q4_1 have one), or a row_order that is not a permutation of the rows.
  static PackedWeight from_gguf(const GGUFFile& file, const TensorInfo& tensor,
                                const std::vector<std::int64_t>& row_order = {});

  bool defined() const { return data_ != nullptr; }
  std::int64_t in_features() const { return cols_; }   // a row's length
  std::int64_t out_features() const { return rows_; }  // the number of rows
  TensorType type() const { return type_; }
  /// The bytes of blocks held: rows · row_bytes (SmolLM2's Wq: 576 · 360).
  std::int64_t bytes() const { return rows_ * row_bytes_; }

  /// x (…, in) float32 on the CPU -> (…, out), equal to x @ dequantized() up to the grouping of the
  /// additions. One input row (decoding) goes through the fused kernels, a few are dotted with each
  /// weight row as it is decoded, more (a prompt) decode the matrix once into a temporary and use
  /// LibTorch's matmul. ValueError for another dtype, device or last dimension.
  torch::Tensor matmul(const torch::Tensor& x) const;
  /// The rows `ids` (N) int64 decoded: (N, in) float32, a token embedding's lookup.
  torch::Tensor rows(const torch::Tensor& ids) const;
  /// The whole matrix decoded, as the dense model holds it: (in, out) float32 (with the low-rank
  /// addend, when there is one).
  torch::Tensor dequantized() const;

  /// This weight plus a low-rank addend: matmul(x) becomes x @ W + (x @ A) @ B, the blocks kept as
  /// they are. A LoRA adapter on a packed model (lora.h's merge_llama_adapter): the frozen weight
  /// stays on the fast path, and the adapter costs two thin products, rank r columns wide. A
  /// second addend joins the first (A side by side, B stacked). ValueError unless A is (in, r) and
  /// B (r, out), float32 on the CPU.
  PackedWeight with_low_rank(const torch::Tensor& A, const torch::Tensor& B) const;
  /// The addend's rank (0: none).
  std::int64_t low_rank() const { return low_rank_A_.defined() ? low_rank_A_.size(1) : 0; }

  /// Whether matmul and decoding use the AVX2 kernels (this CPU has AVX2, FMA and F16C, and
  /// use_vectorized has not switched them off); otherwise portable loops, the same results.
  static bool vectorized();
  /// Switches the AVX2 kernels on or off for the whole process (the checks compare both; off
  /// times the portable loops). Returns the previous setting. On a CPU without them, stays off.
  static bool use_vectorized(bool enabled);

 private:
  void decode_row(std::int64_t row, float* out) const;
  torch::Tensor decoded_blocks() const;                       // (in, out), the blocks alone
  torch::Tensor matmul_blocks(const torch::Tensor& x) const;  // x @ the blocks alone

  TensorType type_ = TensorType::kF32;
  std::int64_t rows_ = 0, cols_ = 0, row_bytes_ = 0;
  std::shared_ptr<const std::vector<std::uint8_t>> data_;  // rows_ · row_bytes_ bytes
  torch::Tensor low_rank_A_, low_rank_B_;                  // (in, r), (r, out), or undefined
};

}  // namespace g2c::pretrained
