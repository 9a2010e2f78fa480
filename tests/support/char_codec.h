// A test's tokenizer: one id per character of a fixed alphabet (id i is alphabet[i]); characters
// outside it are dropped on encode, ids outside it on decode. What the RL checks sample and score
// with, as the Python edition's tests use a character tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "g2c/inference/local.h"

namespace g2c::testing {

class CharacterCodec : public g2c::inference::TextCodec {
 public:
  explicit CharacterCodec(std::string alphabet) : alphabet_(std::move(alphabet)) {}
  std::vector<std::int64_t> encode(std::string_view text) const override {
    std::vector<std::int64_t> ids;
    for (const char c : text) {
      const auto at = alphabet_.find(c);
      if (at != std::string::npos) ids.push_back(static_cast<std::int64_t>(at));
    }
    return ids;
  }
  std::string decode(const std::vector<std::int64_t>& ids) const override {
    std::string text;
    for (const auto id : ids) {
      if (id >= 0 && id < static_cast<std::int64_t>(alphabet_.size())) {
        text += alphabet_[static_cast<std::size_t>(id)];
      }
    }
    return text;
  }
  std::int64_t size() const { return static_cast<std::int64_t>(alphabet_.size()); }

 private:
  std::string alphabet_;
};

}  // namespace g2c::testing
