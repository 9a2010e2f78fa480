// This file is compiled with -ffp-contract=off (g2c/CMakeLists.txt): a decoded value is q·d + m
// rounded twice, as the lesson's dequantize computes it, never fused into one rounding.
#include "g2c/pretrained/packed_weight.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <immintrin.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::pretrained {

namespace {

// Values per block and bytes per block of each type with a kernel.
struct Layout {
  std::int64_t values;
  std::int64_t bytes;
};

bool layout_of(TensorType type, Layout& layout) {
  switch (type) {
    case TensorType::kF32:
      layout = {1, 4};
      return true;
    case TensorType::kF16:
      layout = {1, 2};
      return true;
    case TensorType::kQ8_0:
      layout = {32, 34};
      return true;
    case TensorType::kQ4_0:
      layout = {32, 18};
      return true;
    case TensorType::kQ4_1:
      layout = {32, 20};
      return true;
    default:
      return false;
  }
}

// --- portable decoding, one row of `n` values ---------------------------------------------------

void decode_row_portable(TensorType type, const std::uint8_t* src, std::int64_t n, float* out) {
  switch (type) {
    case TensorType::kF32:
      std::memcpy(out, src, static_cast<std::size_t>(n) * sizeof(float));
      return;
    case TensorType::kF16:
      for (std::int64_t i = 0; i < n; ++i) out[i] = read_half(src + 2 * i);
      return;
    case TensorType::kQ8_0:
      for (std::int64_t b = 0; b < n / 32; ++b, src += 34, out += 32) {
        const float d = read_half(src);
        const auto* q = reinterpret_cast<const std::int8_t*>(src + 2);
        for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(q[j]) * d;
      }
      return;
    case TensorType::kQ4_0:
      for (std::int64_t b = 0; b < n / 32; ++b, src += 18, out += 32) {
        const float d = read_half(src);
        for (int j = 0; j < 16; ++j) {
          out[j] = static_cast<float>((src[2 + j] & 0x0f) - 8) * d;
          out[j + 16] = static_cast<float>((src[2 + j] >> 4) - 8) * d;
        }
      }
      return;
    case TensorType::kQ4_1:
      for (std::int64_t b = 0; b < n / 32; ++b, src += 20, out += 32) {
        const float d = read_half(src), m = read_half(src + 2);
        for (int j = 0; j < 16; ++j) {
          out[j] = static_cast<float>(src[4 + j] & 0x0f) * d + m;
          out[j + 16] = static_cast<float>(src[4 + j] >> 4) * d + m;
        }
      }
      return;
    default:
      return;  // from_gguf refused every other type
  }
}

float dot_portable(const float* a, const float* b, std::int64_t n) {
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// --- AVX2 decoding and dot products --------------------------------------------------------------

#if defined(__x86_64__)
#define G2C_AVX2 __attribute__((target("avx2,fma,f16c")))

// The float16 at `bytes` (a block's d or m), exactly, by the F16C instruction.
G2C_AVX2 inline float half_at(const std::uint8_t* bytes) {
  std::uint16_t bits;
  std::memcpy(&bits, bytes, sizeof bits);
  return _cvtsh_ss(bits);
}

// 8 codes (bytes) -> 8 floats q·d + m.
G2C_AVX2 inline __m256 scale_shift(__m128i bytes, __m256 d, __m256 m) {
  return _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes)), d), m);
}

G2C_AVX2 void decode_q4_1_row(const std::uint8_t* src, std::int64_t n, float* out) {
  const __m128i low_nibbles = _mm_set1_epi8(0x0f);
  for (std::int64_t b = 0; b < n / 32; ++b, src += 20, out += 32) {
    const __m256 d = _mm256_set1_ps(half_at(src)), m = _mm256_set1_ps(half_at(src + 2));
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 4));
    const __m128i low = _mm_and_si128(bytes, low_nibbles);                      // values 0..15
    const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_nibbles);  // values 16..31
    _mm256_storeu_ps(out, scale_shift(low, d, m));
    _mm256_storeu_ps(out + 8, scale_shift(_mm_srli_si128(low, 8), d, m));
    _mm256_storeu_ps(out + 16, scale_shift(high, d, m));
    _mm256_storeu_ps(out + 24, scale_shift(_mm_srli_si128(high, 8), d, m));
  }
}

G2C_AVX2 void decode_q8_0_row(const std::uint8_t* src, std::int64_t n, float* out) {
  for (std::int64_t b = 0; b < n / 32; ++b, src += 34, out += 32) {
    const __m256 d = _mm256_set1_ps(half_at(src));
    for (int part = 0; part < 4; ++part) {
      const __m128i codes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + 2 + 8 * part));
      const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(codes));
      _mm256_storeu_ps(out + 8 * part, _mm256_mul_ps(q, d));
    }
  }
}

G2C_AVX2 inline float horizontal_sum(__m256 s) {
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  const __m128 pairs = _mm_add_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 1)));
}

// The low 8 bytes as 8 floats: 4-bit codes (0..15) after masking, or Q8_0's signed bytes.
G2C_AVX2 inline __m256 codes(__m128i bytes) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
}
G2C_AVX2 inline __m256 signed_codes(const std::uint8_t* eight) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(eight));
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
}

// One input row x (n) against weight rows [begin, end): y[r] = Σ_blocks d·Σ_j q_j·x_j + m·Σ_j x_j,
// the dot product with the decoded row regrouped so that a block costs one multiply by d.
// x_sums[b] is Σ x_j over block b.
G2C_AVX2 void q4_1_matvec(const std::uint8_t* data, std::int64_t row_bytes, std::int64_t n,
                          const float* x, const float* x_sums, std::int64_t begin, std::int64_t end,
                          float* y) {
  const __m128i low_nibbles = _mm_set1_epi8(0x0f);
  for (std::int64_t r = begin; r < end; ++r) {
    const std::uint8_t* src = data + r * row_bytes;
    __m256 acc = _mm256_setzero_ps();
    float minimums = 0.0f;
    for (std::int64_t b = 0; b < n / 32; ++b, src += 20) {
      const float* xb = x + 32 * b;
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 4));
      const __m128i low = _mm_and_si128(bytes, low_nibbles);
      const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_nibbles);
      __m256 qx = _mm256_mul_ps(codes(low), _mm256_loadu_ps(xb));
      qx = _mm256_fmadd_ps(codes(_mm_srli_si128(low, 8)), _mm256_loadu_ps(xb + 8), qx);
      qx = _mm256_fmadd_ps(codes(high), _mm256_loadu_ps(xb + 16), qx);
      qx = _mm256_fmadd_ps(codes(_mm_srli_si128(high, 8)), _mm256_loadu_ps(xb + 24), qx);
      acc = _mm256_fmadd_ps(_mm256_set1_ps(half_at(src)), qx, acc);
      minimums += half_at(src + 2) * x_sums[b];
    }
    y[r] = horizontal_sum(acc) + minimums;
  }
}

// The same for Q8_0: y[r] = Σ_blocks d·Σ_j q_j·x_j.
G2C_AVX2 void q8_0_matvec(const std::uint8_t* data, std::int64_t row_bytes, std::int64_t n,
                          const float* x, std::int64_t begin, std::int64_t end, float* y) {
  for (std::int64_t r = begin; r < end; ++r) {
    const std::uint8_t* src = data + r * row_bytes;
    __m256 acc = _mm256_setzero_ps();
    for (std::int64_t b = 0; b < n / 32; ++b, src += 34) {
      const float* xb = x + 32 * b;
      __m256 qx = _mm256_mul_ps(signed_codes(src + 2), _mm256_loadu_ps(xb));
      qx = _mm256_fmadd_ps(signed_codes(src + 10), _mm256_loadu_ps(xb + 8), qx);
      qx = _mm256_fmadd_ps(signed_codes(src + 18), _mm256_loadu_ps(xb + 16), qx);
      qx = _mm256_fmadd_ps(signed_codes(src + 26), _mm256_loadu_ps(xb + 24), qx);
      acc = _mm256_fmadd_ps(_mm256_set1_ps(half_at(src)), qx, acc);
    }
    y[r] = horizontal_sum(acc);
  }
}

// n a multiple of 32 (every row of a block type, and SmolLM2's 576 and 1536).
G2C_AVX2 float dot_avx2(const float* a, const float* b, std::int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (std::int64_t i = 0; i < n; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
  }
  return horizontal_sum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

bool cpu_supports_avx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                          __builtin_cpu_supports("f16c");
  return has;
}
#else
bool cpu_supports_avx2() {
  return false;
}
#endif

std::atomic<bool> avx2_enabled{true};  // PackedWeight::use_vectorized

bool cpu_has_avx2() {
  return avx2_enabled.load(std::memory_order_relaxed) && cpu_supports_avx2();
}

float dot(const float* a, const float* b, std::int64_t n) {
#if defined(__x86_64__)
  if (cpu_has_avx2() && n % 32 == 0) return dot_avx2(a, b, n);
#endif
  return dot_portable(a, b, n);
}

// Up to this many input rows, matmul dots them with each decoded weight row (decoding: 1); above
// it, decoding the matrix once and calling LibTorch's matmul is faster (a prompt). SmolLM2 on one
// thread, a cached pass in plain steps: 9 rows 4.9 dotted / 10.4 decoded whole, 17 rows 8.6, 25
// rows 13.4 (a speculative verification pass is k + 1 rows).
constexpr std::int64_t kMaxRowsPerDecode = 16;

}  // namespace

bool PackedWeight::vectorized() {
  return cpu_has_avx2();
}

bool PackedWeight::use_vectorized(bool enabled) {
  const bool previous = cpu_has_avx2();
  avx2_enabled = enabled;
  return previous;
}

PackedWeight PackedWeight::from_gguf(const GGUFFile& file, const TensorInfo& tensor,
                                     const std::vector<std::int64_t>& row_order) {
  Layout layout{};
  const auto shape = tensor.shape();
  if (shape.size() != 2 || !layout_of(tensor.type, layout) || shape[1] % layout.values != 0) {
    throw ValueError(fmt::format(
        "'{}': tensor '{}' ({}, shape [{}]) cannot be packed; the fast path multiplies matrices "
        "of F32, F16, Q8_0, Q4_0 or Q4_1",
        file.path().string(), tensor.name,
        tensor_type_name(static_cast<std::uint32_t>(tensor.type)), fmt::join(shape, ", ")));
  }
  PackedWeight weight;
  weight.type_ = tensor.type;
  weight.rows_ = shape[0];
  weight.cols_ = shape[1];
  weight.row_bytes_ = shape[1] / layout.values * layout.bytes;
  std::vector<std::int64_t> order = row_order;
  if (order.empty()) {
    order.resize(static_cast<std::size_t>(weight.rows_));
    for (std::int64_t r = 0; r < weight.rows_; ++r) order[static_cast<std::size_t>(r)] = r;
  }
  auto sorted = order;
  std::sort(sorted.begin(), sorted.end());
  bool permutation = sorted.size() == static_cast<std::size_t>(weight.rows_);
  for (std::size_t r = 0; permutation && r < sorted.size(); ++r) {
    permutation = sorted[r] == static_cast<std::int64_t>(r);
  }
  if (!permutation) {
    throw ValueError(fmt::format("PackedWeight '{}': row_order must list each of its {} rows once",
                                 tensor.name, weight.rows_));
  }
  auto data = std::make_shared<std::vector<std::uint8_t>>(
      static_cast<std::size_t>(weight.rows_ * weight.row_bytes_));
  const std::uint8_t* source = file.data(tensor);
  for (std::int64_t r = 0; r < weight.rows_; ++r) {
    std::memcpy(data->data() + r * weight.row_bytes_,
                source + order[static_cast<std::size_t>(r)] * weight.row_bytes_,
                static_cast<std::size_t>(weight.row_bytes_));
  }
  weight.data_ = std::move(data);
  return weight;
}

void PackedWeight::decode_row(std::int64_t row, float* out) const {
  const std::uint8_t* src = data_->data() + row * row_bytes_;
#if defined(__x86_64__)
  if (cpu_has_avx2() && type_ == TensorType::kQ4_1) return decode_q4_1_row(src, cols_, out);
  if (cpu_has_avx2() && type_ == TensorType::kQ8_0) return decode_q8_0_row(src, cols_, out);
#endif
  decode_row_portable(type_, src, cols_, out);
}

torch::Tensor PackedWeight::dequantized() const {
  if (!defined()) throw ValueError("PackedWeight: dequantized() of an empty weight");
  if (low_rank() == 0) return decoded_blocks();
  return decoded_blocks() + low_rank_A_.matmul(low_rank_B_);  // (in, out)
}

PackedWeight PackedWeight::with_low_rank(const torch::Tensor& A, const torch::Tensor& B) const {
  const auto fits = [](const torch::Tensor& t) {
    return t.defined() && t.dim() == 2 && t.scalar_type() == torch::kFloat && t.device().is_cpu();
  };
  if (!defined() || !fits(A) || !fits(B) || A.size(0) != cols_ || B.size(1) != rows_ ||
      A.size(1) != B.size(0)) {
    throw ValueError(fmt::format(
        "PackedWeight::with_low_rank: a ({} x {}) weight takes A (in {}, r) and B (r, out {}), "
        "float32 on the CPU; got A {} and B {}",
        rows_, cols_, cols_, rows_, A.defined() ? describe_shape(A) : "undefined",
        B.defined() ? describe_shape(B) : "undefined"));
  }
  PackedWeight out = *this;
  const auto a = A.detach().contiguous(), b = B.detach().contiguous();
  out.low_rank_A_ = low_rank() == 0 ? a : torch::cat({low_rank_A_, a}, 1);  // (in, r1 + r2)
  out.low_rank_B_ = low_rank() == 0 ? b : torch::cat({low_rank_B_, b}, 0);  // (r1 + r2, out)
  return out;
}

torch::Tensor PackedWeight::decoded_blocks() const {
  auto out = torch::empty({rows_, cols_});  // (out, in), decoded in parallel by rows
  float* values = out.data_ptr<float>();
  at::parallel_for(0, rows_, 64, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) decode_row(r, values + r * cols_);
  });
  return out.t();  // (in, out)
}

torch::Tensor PackedWeight::rows(const torch::Tensor& ids) const {
  if (!defined() || !ids.defined() || ids.dim() != 1 || ids.scalar_type() != torch::kLong) {
    throw ValueError("PackedWeight::rows expects ids of shape (N) int64 on a defined weight");
  }
  const auto cpu_ids = ids.to(torch::kCPU).contiguous();
  const auto n = cpu_ids.size(0);
  const auto* id = cpu_ids.data_ptr<std::int64_t>();
  auto out = torch::empty({n, cols_});  // (N, in)
  for (std::int64_t i = 0; i < n; ++i) {
    if (id[i] < 0 || id[i] >= rows_) {
      throw ValueError(fmt::format("PackedWeight::rows: id {} is outside [0, {})", id[i], rows_));
    }
    decode_row(id[i], out.data_ptr<float>() + i * cols_);
  }
  return out;
}

torch::Tensor PackedWeight::matmul(const torch::Tensor& x) const {
  auto out = matmul_blocks(x);  // (…, out)
  if (low_rank() == 0) return out;
  return out + x.matmul(low_rank_A_).matmul(low_rank_B_);  // (…, in) -> (…, r) -> (…, out)
}

torch::Tensor PackedWeight::matmul_blocks(const torch::Tensor& x) const {
  if (!defined()) throw ValueError("PackedWeight: matmul with an empty weight");
  if (!x.defined() || x.dim() == 0 || x.size(-1) != cols_ || x.scalar_type() != torch::kFloat ||
      !x.device().is_cpu()) {
    throw ValueError(fmt::format(
        "PackedWeight ({} x {}) expects x of shape (..., {}) float32 on the CPU, got {}; the "
        "packed fast path runs on the CPU (load the dense model for an accelerator)",
        rows_, cols_, cols_,
        x.defined() ? describe_shape(x) + " " + std::string(c10::toString(x.scalar_type())) +
                          " on " + x.device().str()
                    : "an undefined tensor"));
  }
  auto out_shape = x.sizes().vec();
  out_shape.back() = rows_;
  const auto inputs = x.reshape({-1, cols_}).contiguous();  // (N, in)
  const auto n = inputs.size(0);
  if (n > kMaxRowsPerDecode) return inputs.matmul(decoded_blocks()).view(out_shape);
  auto out = torch::empty({n, rows_});  // (N, out)
  const float* in = inputs.data_ptr<float>();
  float* result = out.data_ptr<float>();
#if defined(__x86_64__)
  // One token (decoding): the fused kernels, never writing a decoded value anywhere.
  if (n == 1 && cpu_has_avx2() && type_ == TensorType::kQ4_1) {
    std::vector<float> x_sums(static_cast<std::size_t>(cols_ / 32));  // Σ x over each block
    for (std::size_t b = 0; b < x_sums.size(); ++b) {
      x_sums[b] = std::accumulate(in + 32 * b, in + 32 * (b + 1), 0.0f);
    }
    at::parallel_for(0, rows_, 64, [&](std::int64_t begin, std::int64_t end) {
      q4_1_matvec(data_->data(), row_bytes_, cols_, in, x_sums.data(), begin, end, result);
    });
    return out.view(out_shape);
  }
  if (n == 1 && cpu_has_avx2() && type_ == TensorType::kQ8_0) {
    at::parallel_for(0, rows_, 64, [&](std::int64_t begin, std::int64_t end) {
      q8_0_matvec(data_->data(), row_bytes_, cols_, in, begin, end, result);
    });
    return out.view(out_shape);
  }
#endif
  at::parallel_for(0, rows_, 64, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> row(static_cast<std::size_t>(cols_));  // one decoded row, in L1
    for (std::int64_t r = begin; r < end; ++r) {
      decode_row(r, row.data());
      for (std::int64_t i = 0; i < n; ++i)
        result[i * rows_ + r] = dot(row.data(), in + i * cols_, cols_);
    }
  });
  return out.view(out_shape);
}

}  // namespace g2c::pretrained
