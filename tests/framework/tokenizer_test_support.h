// Helpers for the tokenizer tests: a temporary directory (temp_dir.h) and literal id lists.
#pragma once

#include <string>

#include "g2c/tokenizer/bpe.h"
#include "temp_dir.h"

namespace g2c::testing {

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
