// Helpers for the tokenizer tests: a temporary directory and literal id lists.
#pragma once

#include <atomic>
#include <filesystem>
#include <random>
#include <string>

#include "g2c/tokenizer/bpe.h"

namespace g2c::testing {

/// A fresh directory under the system temp folder, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device entropy;
    path_ = std::filesystem::temp_directory_path() /
            ("g2c-tokenizer-test-" + std::to_string(entropy()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// Ids from a braced list: ids({1, 2, 3}).
inline tokenizer::Ids ids(std::initializer_list<tokenizer::TokenId> values) {
  return values;
}

/// The UTF-8 bytes of a text as ids (what a tokenizer without merges encodes).
inline tokenizer::Ids bytes_of(std::string_view text) {
  tokenizer::Ids out;
  for (const char c : text) out.push_back(static_cast<unsigned char>(c));
  return out;
}

}  // namespace g2c::testing
