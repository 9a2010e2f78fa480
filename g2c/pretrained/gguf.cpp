#include "g2c/pretrained/gguf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::pretrained {

namespace {

constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr std::uint32_t kVersion = 3;
constexpr int kMaxArrayDepth = 4;  // arrays of arrays are allowed; this bounds a hostile file
constexpr std::uint64_t kMaxValues = std::uint64_t{1} << 48;  // per tensor, far above any model

// Bytes per block and values per block of each tensor type.
struct BlockLayout {
  std::uint64_t bytes;
  std::int64_t values;
};

bool block_layout(std::uint32_t type, BlockLayout& layout) {
  switch (static_cast<TensorType>(type)) {
    case TensorType::kF32:
      layout = {4, 1};
      return true;
    case TensorType::kF16:
      layout = {2, 1};
      return true;
    case TensorType::kBF16:
      layout = {2, 1};
      return true;
    case TensorType::kQ4_0:
      layout = {18, 32};
      return true;  // f16 d, 16 bytes of nibbles
    case TensorType::kQ4_1:
      layout = {20, 32};
      return true;  // f16 d, f16 m, 16 bytes
    case TensorType::kQ5_0:
      layout = {22, 32};
      return true;
    case TensorType::kQ5_1:
      layout = {24, 32};
      return true;
    case TensorType::kQ8_0:
      layout = {34, 32};
      return true;  // f16 d, 32 int8
    case TensorType::kQ8_1:
      layout = {36, 32};
      return true;
    case TensorType::kQ2_K:
      layout = {84, 256};
      return true;
    case TensorType::kQ3_K:
      layout = {110, 256};
      return true;
    case TensorType::kQ4_K:
      layout = {144, 256};
      return true;
    case TensorType::kQ5_K:
      layout = {176, 256};
      return true;
    case TensorType::kQ6_K:
      layout = {210, 256};
      return true;
    case TensorType::kQ8_K:
      layout = {292, 256};
      return true;
  }
  return false;
}

const char* value_type_name(GGUFType type) {
  switch (type) {
    case GGUFType::kUint8:
      return "uint8";
    case GGUFType::kInt8:
      return "int8";
    case GGUFType::kUint16:
      return "uint16";
    case GGUFType::kInt16:
      return "int16";
    case GGUFType::kUint32:
      return "uint32";
    case GGUFType::kInt32:
      return "int32";
    case GGUFType::kFloat32:
      return "float32";
    case GGUFType::kBool:
      return "bool";
    case GGUFType::kString:
      return "string";
    case GGUFType::kArray:
      return "array";
    case GGUFType::kUint64:
      return "uint64";
    case GGUFType::kInt64:
      return "int64";
    case GGUFType::kFloat64:
      return "float64";
  }
  return "unknown";
}

// Reads the header, metadata and tensor infos from the mapped bytes, every read bounds-checked.
class Cursor {
 public:
  Cursor(const std::uint8_t* bytes, std::uint64_t size, const std::filesystem::path& path)
      : bytes_(bytes), size_(size), path_(path) {}

  std::uint64_t position() const { return position_; }

  template <typename T>
  T read(const char* what) {
    T value;
    std::memcpy(&value, take(sizeof(T), what), sizeof(T));  // GGUF is little-endian, as is x86/ARM
    return value;
  }

  std::string read_string(const char* what) {
    const auto length = read<std::uint64_t>(what);
    if (length > size_ - position_) fail(what, fmt::format("a string of {} bytes", length));
    const auto* start = reinterpret_cast<const char*>(take(length, what));
    return std::string(start, length);
  }

  GGUFValue read_value(GGUFType type, const std::string& key, int depth = 0) {
    GGUFValue out;
    out.type = type;
    const char* what = "a metadata value";
    switch (type) {
      case GGUFType::kUint8:
        out.value = std::uint64_t{read<std::uint8_t>(what)};
        break;
      case GGUFType::kInt8:
        out.value = std::int64_t{read<std::int8_t>(what)};
        break;
      case GGUFType::kUint16:
        out.value = std::uint64_t{read<std::uint16_t>(what)};
        break;
      case GGUFType::kInt16:
        out.value = std::int64_t{read<std::int16_t>(what)};
        break;
      case GGUFType::kUint32:
        out.value = std::uint64_t{read<std::uint32_t>(what)};
        break;
      case GGUFType::kInt32:
        out.value = std::int64_t{read<std::int32_t>(what)};
        break;
      case GGUFType::kUint64:
        out.value = read<std::uint64_t>(what);
        break;
      case GGUFType::kInt64:
        out.value = read<std::int64_t>(what);
        break;
      case GGUFType::kFloat32:
        out.value = double{read<float>(what)};
        break;
      case GGUFType::kFloat64:
        out.value = read<double>(what);
        break;
      case GGUFType::kBool: {
        const auto byte = read<std::uint8_t>(what);
        if (byte > 1) fail(what, fmt::format("a bool of value {} for '{}' (0 or 1)", byte, key));
        out.value = byte == 1;
        break;
      }
      case GGUFType::kString:
        out.value = read_string(what);
        break;
      case GGUFType::kArray: {
        if (depth >= kMaxArrayDepth)
          fail(what, fmt::format("arrays nested deeper than {} in '{}'", kMaxArrayDepth, key));
        const auto element_type = read_type(key);
        const auto count = read<std::uint64_t>("an array's length");
        // Every element takes at least one byte: a count beyond the file is a corrupt one.
        if (count > size_ - position_)
          fail("an array", fmt::format("{} elements for '{}'", count, key));
        std::vector<GGUFValue> elements;
        elements.reserve(count);
        for (std::uint64_t i = 0; i < count; ++i) {
          elements.push_back(read_value(element_type, key, depth + 1));
        }
        out.value = std::move(elements);
        break;
      }
    }
    return out;
  }

  GGUFType read_type(const std::string& key) {
    const auto type = read<std::uint32_t>("a value type");
    if (type > static_cast<std::uint32_t>(GGUFType::kFloat64)) {
      fail("a value type", fmt::format("type {} for '{}' (GGUF v3 has types 0 to 12)", type, key));
    }
    return static_cast<GGUFType>(type);
  }

  [[noreturn]] void fail(const char* what, const std::string& found) const {
    throw ValueError(
        fmt::format("{}: byte {}: {} is not valid here: {}. Is the file complete? "
                    "Compare its size and sha256 with the source's.",
                    path_.string(), position_, what, found));
  }

 private:
  const std::uint8_t* take(std::uint64_t count, const char* what) {
    if (count > size_ - position_) {
      throw ValueError(
          fmt::format("{}: truncated at byte {} of {} while reading {}: the file ends "
                      "early. Fetch it again (scripts/setup.sh checks size and sha256).",
                      path_.string(), position_, size_, what));
    }
    const auto* start = bytes_ + position_;
    position_ += count;
    return start;
  }

  const std::uint8_t* bytes_;
  std::uint64_t size_;
  std::uint64_t position_ = 0;
  const std::filesystem::path& path_;
};

// The value of an integer entry of either signedness, as int64 (refused when it does not fit).
std::int64_t as_integer(const GGUFValue& value, const std::string& key,
                        const std::filesystem::path& path) {
  if (const auto* i = std::get_if<std::int64_t>(&value.value)) return *i;
  if (const auto* u = std::get_if<std::uint64_t>(&value.value)) {
    if (*u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw ValueError(fmt::format("{}: '{}' = {} does not fit an int64", path.string(), key, *u));
    }
    return static_cast<std::int64_t>(*u);
  }
  throw ValueError(fmt::format("{}: '{}' is a {}, not an integer", path.string(), key,
                               value_type_name(value.type)));
}

}  // namespace

std::string tensor_type_name(std::uint32_t type) {
  switch (static_cast<TensorType>(type)) {
    case TensorType::kF32:
      return "F32";
    case TensorType::kF16:
      return "F16";
    case TensorType::kBF16:
      return "BF16";
    case TensorType::kQ4_0:
      return "Q4_0";
    case TensorType::kQ4_1:
      return "Q4_1";
    case TensorType::kQ5_0:
      return "Q5_0";
    case TensorType::kQ5_1:
      return "Q5_1";
    case TensorType::kQ8_0:
      return "Q8_0";
    case TensorType::kQ8_1:
      return "Q8_1";
    case TensorType::kQ2_K:
      return "Q2_K";
    case TensorType::kQ3_K:
      return "Q3_K";
    case TensorType::kQ4_K:
      return "Q4_K";
    case TensorType::kQ5_K:
      return "Q5_K";
    case TensorType::kQ6_K:
      return "Q6_K";
    case TensorType::kQ8_K:
      return "Q8_K";
  }
  return fmt::format("type {}", type);
}

std::int64_t TensorInfo::numel() const {
  std::int64_t n = 1;
  for (const auto d : dims) n *= d;
  return n;
}

std::vector<std::int64_t> TensorInfo::shape() const {
  return std::vector<std::int64_t>(dims.rbegin(), dims.rend());
}

struct GGUFFile::Mapping {
  const std::uint8_t* bytes = nullptr;
  std::uint64_t size = 0;
  ~Mapping() {
    if (bytes != nullptr) munmap(const_cast<std::uint8_t*>(bytes), size);
  }
};

GGUFFile GGUFFile::open(const std::filesystem::path& path) {
  GGUFFile file;
  file.path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw ValueError(
        fmt::format("cannot open GGUF file '{}': {}", path.string(), std::strerror(errno)));
  }
  struct stat status {};
  if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    throw ValueError(fmt::format("'{}' is not a regular file", path.string()));
  }
  auto mapping = std::make_shared<Mapping>();
  mapping->size = static_cast<std::uint64_t>(status.st_size);
  if (mapping->size > 0) {
    void* bytes = mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (bytes == MAP_FAILED) {
      ::close(fd);
      throw ValueError(fmt::format("cannot map '{}': {}", path.string(), std::strerror(errno)));
    }
    mapping->bytes = static_cast<const std::uint8_t*>(bytes);
  }
  ::close(fd);  // the mapping keeps the file's pages
  file.mapping_ = mapping;

  Cursor cursor(mapping->bytes, mapping->size, file.path_);
  if (cursor.read<std::uint32_t>("the magic number") != kMagic) {
    throw ValueError(
        fmt::format("'{}' is not a GGUF file: it does not start with \"GGUF\"", path.string()));
  }
  file.version_ = cursor.read<std::uint32_t>("the version");
  if (file.version_ != kVersion) {
    throw ValueError(fmt::format("'{}' is GGUF version {}; this reader reads version {}",
                                 path.string(), file.version_, kVersion));
  }
  const auto tensor_count = cursor.read<std::uint64_t>("the tensor count");
  const auto metadata_count = cursor.read<std::uint64_t>("the metadata count");
  if (tensor_count > mapping->size || metadata_count > mapping->size) {
    cursor.fail("the counts",
                fmt::format("{} tensors and {} metadata entries", tensor_count, metadata_count));
  }
  for (std::uint64_t i = 0; i < metadata_count; ++i) {
    std::string key = cursor.read_string("a metadata key");
    const GGUFType type = cursor.read_type(key);
    GGUFValue value = cursor.read_value(type, key);
    if (!file.metadata_.emplace(key, std::move(value)).second) {
      cursor.fail("a metadata key", fmt::format("'{}' a second time", key));
    }
  }
  if (file.has("general.alignment")) {
    const auto alignment = file.integer("general.alignment");
    if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
      throw ValueError(fmt::format("'{}': general.alignment = {} is not a power of two",
                                   path.string(), alignment));
    }
    file.alignment_ = static_cast<std::uint64_t>(alignment);
  }

  for (std::uint64_t i = 0; i < tensor_count; ++i) {
    TensorInfo tensor;
    tensor.name = cursor.read_string("a tensor name");
    const auto dim_count = cursor.read<std::uint32_t>("a tensor's dimension count");
    if (dim_count == 0 || dim_count > 4) {
      cursor.fail("a tensor's dimension count",
                  fmt::format("{} for '{}' (1 to 4)", dim_count, tensor.name));
    }
    std::uint64_t values = 1;  // bounded as it grows: a corrupt dimension must not overflow it
    for (std::uint32_t d = 0; d < dim_count; ++d) {
      const auto size = cursor.read<std::uint64_t>("a tensor dimension");
      if (size == 0 || size > kMaxValues / values) {
        cursor.fail("a tensor dimension", fmt::format("{} in '{}'", size, tensor.name));
      }
      values *= size;
      tensor.dims.push_back(static_cast<std::int64_t>(size));
    }
    const auto type = cursor.read<std::uint32_t>("a tensor type");
    BlockLayout layout{};
    if (!block_layout(type, layout)) {
      throw ValueError(
          fmt::format("'{}': tensor '{}' has ggml type {}, which this reader does not "
                      "know (the course's files use F32, F16, Q8_0, Q4_0 and Q4_1)",
                      path.string(), tensor.name, type));
    }
    tensor.type = static_cast<TensorType>(type);
    tensor.offset = cursor.read<std::uint64_t>("a tensor offset");
    if (tensor.dims[0] % layout.values != 0) {
      throw ValueError(fmt::format(
          "'{}': tensor '{}' has rows of {} values, not a multiple of the "
          "{} values of a {} block",
          path.string(), tensor.name, tensor.dims[0], layout.values, tensor_type_name(type)));
    }
    tensor.bytes = static_cast<std::uint64_t>(tensor.numel() / layout.values) * layout.bytes;
    if (!file.tensor_index_.emplace(tensor.name, file.tensors_.size()).second) {
      cursor.fail("a tensor name", fmt::format("'{}' a second time", tensor.name));
    }
    file.tensors_.push_back(std::move(tensor));
  }
  // The data section starts at the next multiple of the alignment.
  const std::uint64_t a = file.alignment_;
  file.data_start_ = (cursor.position() + a - 1) / a * a;
  for (const auto& tensor : file.tensors_) {
    if (tensor.offset % a != 0) {
      throw ValueError(
          fmt::format("'{}': tensor '{}' starts at offset {}, not a multiple of the "
                      "alignment {}",
                      path.string(), tensor.name, tensor.offset, a));
    }
    const std::uint64_t end = file.data_start_ + tensor.offset + tensor.bytes;
    if (file.data_start_ > mapping->size || tensor.offset > mapping->size ||
        tensor.bytes > mapping->size || end > mapping->size) {
      throw ValueError(
          fmt::format("'{}': tensor '{}' ({} bytes at offset {}) ends past the end of "
                      "the file ({} bytes): the file is truncated",
                      path.string(), tensor.name, tensor.bytes, tensor.offset, mapping->size));
    }
  }
  return file;
}

const GGUFValue& GGUFFile::value(const std::string& key) const {
  const auto found = metadata_.find(key);
  if (found == metadata_.end()) {
    throw ValueError(fmt::format("'{}' has no metadata key '{}'", path_.string(), key));
  }
  return found->second;
}

std::int64_t GGUFFile::integer(const std::string& key) const {
  return as_integer(value(key), key, path_);
}

double GGUFFile::real(const std::string& key) const {
  const GGUFValue& v = value(key);
  if (const auto* d = std::get_if<double>(&v.value)) return *d;
  return static_cast<double>(as_integer(v, key, path_));
}

bool GGUFFile::boolean(const std::string& key) const {
  const GGUFValue& v = value(key);
  if (const auto* b = std::get_if<bool>(&v.value)) return *b;
  throw ValueError(
      fmt::format("{}: '{}' is a {}, not a bool", path_.string(), key, value_type_name(v.type)));
}

const std::string& GGUFFile::string(const std::string& key) const {
  const GGUFValue& v = value(key);
  if (const auto* s = std::get_if<std::string>(&v.value)) return *s;
  throw ValueError(
      fmt::format("{}: '{}' is a {}, not a string", path_.string(), key, value_type_name(v.type)));
}

std::vector<std::string> GGUFFile::strings(const std::string& key) const {
  const GGUFValue& v = value(key);
  const auto* elements = std::get_if<std::vector<GGUFValue>>(&v.value);
  std::vector<std::string> out;
  if (elements != nullptr) {
    out.reserve(elements->size());
    for (const auto& element : *elements) {
      const auto* s = std::get_if<std::string>(&element.value);
      if (s == nullptr) break;
      out.push_back(*s);
    }
    if (out.size() == elements->size()) return out;
  }
  throw ValueError(fmt::format("{}: '{}' is not an array of strings", path_.string(), key));
}

std::vector<std::int64_t> GGUFFile::integers(const std::string& key) const {
  const GGUFValue& v = value(key);
  const auto* elements = std::get_if<std::vector<GGUFValue>>(&v.value);
  if (elements == nullptr) {
    throw ValueError(fmt::format("{}: '{}' is not an array of integers", path_.string(), key));
  }
  std::vector<std::int64_t> out;
  out.reserve(elements->size());
  for (const auto& element : *elements) out.push_back(as_integer(element, key, path_));
  return out;
}

bool GGUFFile::has_tensor(const std::string& name) const {
  return tensor_index_.count(name) != 0;
}

const TensorInfo& GGUFFile::tensor(const std::string& name) const {
  const auto found = tensor_index_.find(name);
  if (found == tensor_index_.end()) {
    throw ValueError(fmt::format("'{}' has no tensor '{}'", path_.string(), name));
  }
  return tensors_[found->second];
}

const std::uint8_t* GGUFFile::data(const TensorInfo& tensor) const {
  return mapping_->bytes + data_start_ + tensor.offset;
}

float half_to_float(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1fu;
  std::uint32_t mantissa = half & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {  // infinity or NaN: the payload moves up with the mantissa
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal: rebias 15 -> 127
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // ±0
    bits = sign;
  } else {  // subnormal half: a normal float once the mantissa is shifted up to its leading 1
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (static_cast<std::uint32_t>(113 - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

namespace {

std::uint16_t read_u16(const std::uint8_t* bytes) {
  std::uint16_t value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

// Q8_0: d (f16), then 32 signed bytes; value j = q_j * d.
void dequantize_q8_0_block(const std::uint8_t* block, float* out) {
  const float d = half_to_float(read_u16(block));
  const auto* q = reinterpret_cast<const std::int8_t*>(block + 2);
  for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(q[j]) * d;
}

// Q4_0: d (f16), then 16 bytes; value j = (nibble_j - 8) * d, low nibbles first, high after.
void dequantize_q4_0_block(const std::uint8_t* block, float* out) {
  const float d = half_to_float(read_u16(block));
  const std::uint8_t* q = block + 2;
  for (int j = 0; j < 16; ++j) {
    out[j] = static_cast<float>((q[j] & 0x0f) - 8) * d;
    out[j + 16] = static_cast<float>((q[j] >> 4) - 8) * d;
  }
}

}  // namespace

float read_half(const std::uint8_t* bytes) {
  return half_to_float(read_u16(bytes));
}

std::vector<float> dequantize(const GGUFFile& file, const TensorInfo& tensor) {
  const auto n = static_cast<std::size_t>(tensor.numel());
  std::vector<float> out(n);
  const std::uint8_t* bytes = file.data(tensor);
  const auto blocks = [&](std::uint64_t block_bytes, void (*one)(const std::uint8_t*, float*)) {
    for (std::size_t b = 0; b < n / 32; ++b) one(bytes + b * block_bytes, out.data() + b * 32);
  };
  switch (tensor.type) {
    case TensorType::kF32:
      std::memcpy(out.data(), bytes, n * sizeof(float));
      break;
    case TensorType::kF16:
      for (std::size_t i = 0; i < n; ++i) out[i] = half_to_float(read_u16(bytes + 2 * i));
      break;
    case TensorType::kQ8_0:
      blocks(34, dequantize_q8_0_block);
      break;
    case TensorType::kQ4_0:
      blocks(18, dequantize_q4_0_block);
      break;
    case TensorType::kQ4_1:
      blocks(20, dequantize_q4_1_block);
      break;
    default:
      throw ValueError(
          fmt::format("'{}': tensor '{}' is {}; the course dequantizes F32, F16, "
                      "Q8_0, Q4_0 and Q4_1",
                      file.path().string(), tensor.name,
                      tensor_type_name(static_cast<std::uint32_t>(tensor.type))));
  }
  return out;
}

}  // namespace g2c::pretrained
