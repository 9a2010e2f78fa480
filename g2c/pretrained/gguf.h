// GGUF, the file format of llama.cpp and Ollama: one file holds a model's metadata (architecture,
// sizes, tokenizer) and its tensors, many of them quantized in blocks of 32 values. Version 3:
//
//   header      "GGUF", version (u32), tensor count (u64), metadata count (u64)
//   metadata    key (string) + value type (u32) + value, for each entry
//   tensor info name (string), dims (u32 count, u64 each, fastest first), type (u32), offset (u64)
//   padding     to general.alignment (32 unless the metadata says otherwise)
//   data        every tensor at its offset from here, each offset a multiple of the alignment
//
// A string is a u64 length and that many UTF-8 bytes; all numbers are little-endian. The file is
// memory-mapped: tensors are read in place, never copied until they are dequantized. Plain C++,
// no LibTorch (like the tokenizer): the reader builds and is tested in seconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace g2c::pretrained {

/// The type of a metadata value, as the file numbers it.
enum class GGUFType : std::uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

/// One metadata value. Integers of every width are held as int64 or uint64 (signed or not as in the
/// file), floats as double; an array holds its elements, all of one type.
struct GGUFValue {
  GGUFType type = GGUFType::kUint8;
  std::variant<std::int64_t, std::uint64_t, double, bool, std::string, std::vector<GGUFValue>>
      value;
};

/// The types of tensor data this reader knows the sizes of (ggml's numbering). Dequantization
/// covers F32, F16, Q4_0, Q4_1 and Q8_0.
enum class TensorType : std::uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kBF16 = 30,
};

/// "Q4_1", "F32", ... or "type 17" for a number this reader does not know.
std::string tensor_type_name(std::uint32_t type);

struct TensorInfo {
  std::string name;
  std::vector<std::int64_t> dims;  // as in the file: fastest-varying first (a row's length first)
  TensorType type = TensorType::kF32;
  std::uint64_t offset = 0;  // from the start of the data section
  std::uint64_t bytes = 0;   // its data's size, from the type's block size

  std::int64_t numel() const;
  /// Row-major shape, slowest first: the file's dims reversed. A (out, in) weight matrix is stored
  /// with dims {in, out}.
  std::vector<std::int64_t> shape() const;
};

/// An open GGUF file. Opening reads and checks everything but the tensor data: a file that is
/// truncated, not GGUF, of another version, or whose tensors fall outside it is refused with a
/// ValueError naming the file, the byte offset and what was being read.
class GGUFFile {
 public:
  static GGUFFile open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  std::uint32_t version() const { return version_; }
  std::uint64_t alignment() const { return alignment_; }
  const std::map<std::string, GGUFValue>& metadata() const { return metadata_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }

  bool has(const std::string& key) const { return metadata_.count(key) != 0; }
  /// The value of `key`; ValueError naming the key and the file when it is missing.
  const GGUFValue& value(const std::string& key) const;
  /// Typed reads: ValueError when the key is missing or holds another kind of value.
  std::int64_t integer(const std::string& key) const;
  double real(const std::string& key) const;  // a float, or an integer
  bool boolean(const std::string& key) const;
  const std::string& string(const std::string& key) const;
  std::vector<std::string> strings(const std::string& key) const;
  std::vector<std::int64_t> integers(const std::string& key) const;

  /// The tensor called `name`; ValueError naming it when the file has none.
  const TensorInfo& tensor(const std::string& name) const;
  bool has_tensor(const std::string& name) const;
  /// The tensor's bytes, in place in the mapped file.
  const std::uint8_t* data(const TensorInfo& tensor) const;

 private:
  struct Mapping;
  std::filesystem::path path_;
  std::shared_ptr<Mapping> mapping_;  // shared: copies of the file object share one mapping
  std::uint32_t version_ = 0;
  std::uint64_t alignment_ = 32;
  std::uint64_t data_start_ = 0;
  std::map<std::string, GGUFValue> metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::size_t> tensor_index_;
};

/// IEEE half precision to float, exactly (subnormals, infinities and NaN included).
float half_to_float(std::uint16_t half);

/// The tensor's values as float32, in row-major order (numel values). F32 is copied, F16 widened,
/// Q8_0, Q4_0 and Q4_1 dequantized block by block as ggml defines them; any other type is refused
/// by name.
std::vector<float> dequantize(const GGUFFile& file, const TensorInfo& tensor);

/// The little-endian float16 at `bytes`, as a float: the scales and minimums of quantized blocks.
float read_half(const std::uint8_t* bytes);

/// One block of 32 Q4_1 values (20 bytes: scale d and minimum m as float16, then 16 bytes of
/// 4-bit codes q): value j = q_j * d + m, the low nibbles giving values 0..15, the high 16..31.
/// Module 16's student function (g2c/pretrained/dequantize.cpp). Example: d = 0.5, m = -1, first
/// byte 0x31 -> out[0] = 1·0.5 - 1 = -0.5, out[16] = 3·0.5 - 1 = 0.5.
void dequantize_q4_1_block(const std::uint8_t* block, float* out);

}  // namespace g2c::pretrained
