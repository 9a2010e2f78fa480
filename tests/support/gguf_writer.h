// Small GGUF files written in tests, byte by byte from the format's definition (version 3,
// little-endian): the reader's checks (framework/gguf_checks.cpp) and the Llama loader's
// (framework/pretrained_checks.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "g2c/pretrained/gguf.h"

namespace g2c::testing {

// Little-endian bytes of a GGUF file, appended field by field.
struct Bytes {
  std::vector<std::uint8_t> data;
  template <typename T>
  Bytes& put(T value) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
    data.insert(data.end(), p, p + sizeof(T));
    return *this;
  }
  Bytes& string(const std::string& s) {
    put<std::uint64_t>(s.size());
    data.insert(data.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& key(const std::string& name, std::uint32_t type) {
    string(name);
    return put<std::uint32_t>(type);
  }
  void pad_to(std::size_t alignment) {
    while (data.size() % alignment != 0) data.push_back(0);
  }
};

// Writes `bytes` to a temporary file of this process and returns its path; the file is removed
// when the returned object goes.
struct TemporaryFile {
  std::filesystem::path path;
  TemporaryFile(const std::vector<std::uint8_t>& bytes, const std::string& name)
      : path(std::filesystem::temp_directory_path() /
             ("g2c_gguf_" + std::to_string(::getpid()) + "_" + name + ".gguf")) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  ~TemporaryFile() { std::filesystem::remove(path); }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
};

// Opens `bytes` as a GGUF file (which maps it); the file is removed again whether the open
// succeeds or throws.
inline g2c::pretrained::GGUFFile open_bytes(const std::vector<std::uint8_t>& bytes,
                                            const std::string& name) {
  const TemporaryFile file(bytes, name);
  return g2c::pretrained::GGUFFile::open(file.path);
}

// A GGUF file of string / uint32 / float32 metadata and float32 (or already encoded) tensors, in
// the order added.
class GGUFWriter {
 public:
  GGUFWriter& text(const std::string& key, const std::string& value) {
    metadata_.key(key, 8).string(value);
    ++entries_;
    return *this;
  }
  GGUFWriter& u32(const std::string& key, std::uint32_t value) {
    metadata_.key(key, 4).put<std::uint32_t>(value);
    ++entries_;
    return *this;
  }
  GGUFWriter& f32(const std::string& key, float value) {
    metadata_.key(key, 6).put<float>(value);
    ++entries_;
    return *this;
  }
  /// A float32 tensor of row-major `shape` (slowest first), stored with the file's fastest-first
  /// dims.
  GGUFWriter& tensor(const std::string& name, const std::vector<std::int64_t>& shape,
                     const std::vector<float>& values) {
    tensors_.push_back({name, shape, values, 0, {}});
    return *this;
  }
  /// A tensor of ggml type `type` (8: Q8_0, 3: Q4_1, ...) whose data is `encoded`, as given.
  GGUFWriter& encoded(const std::string& name, const std::vector<std::int64_t>& shape,
                      std::uint32_t type, const std::vector<std::uint8_t>& encoded) {
    tensors_.push_back({name, shape, {}, type, encoded});
    return *this;
  }
  std::vector<std::uint8_t> bytes() const {
    Bytes f;
    f.put<std::uint32_t>(0x46554747).put<std::uint32_t>(3);
    f.put<std::uint64_t>(tensors_.size()).put<std::uint64_t>(entries_);
    f.data.insert(f.data.end(), metadata_.data.begin(), metadata_.data.end());
    std::uint64_t offset = 0;
    for (const auto& t : tensors_) {
      f.string(t.name).put<std::uint32_t>(static_cast<std::uint32_t>(t.shape.size()));
      for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d) {
        f.put<std::uint64_t>(static_cast<std::uint64_t>(*d));
      }
      f.put<std::uint32_t>(t.type).put<std::uint64_t>(offset);  // type 0: F32
      offset += (t.size() + 31) / 32 * 32;
    }
    f.pad_to(32);
    for (const auto& t : tensors_) {
      for (float v : t.values) f.put<float>(v);
      f.data.insert(f.data.end(), t.raw.begin(), t.raw.end());
      f.pad_to(32);
    }
    return f.data;
  }

 private:
  struct Tensor {
    std::string name;
    std::vector<std::int64_t> shape;
    std::vector<float> values;
    std::uint32_t type;
    std::vector<std::uint8_t> raw;
    std::size_t size() const { return type == 0 ? values.size() * 4 : raw.size(); }
  };
  Bytes metadata_;
  std::uint64_t entries_ = 0;
  std::vector<Tensor> tensors_;
};

}  // namespace g2c::testing
