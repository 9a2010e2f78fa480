// The token level an exercise trains on, chosen the way the course describes it: module 04's BPE
// tokenizer artifacts when they exist, else one id per character.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "g2c/tokenizer/text_tokenizer.h"

namespace g2c::exercises {

/// level "char": one id per character of `text`. level "bpe": the G2CTokenizer at `vocab_size`
/// when `prefer_g2c` and its artifact are there, else the ShakespeareTokenizer capped at
/// `vocab_size`, else characters (with a note on stderr saying how to build the artifact).
/// ValueError for any other level.
g2c::tokenizer::TextTokenizer course_tokenizer(const std::string& level, std::string_view text,
                                               std::size_t vocab_size = 2048,
                                               bool prefer_g2c = false);

/// What result files record about a tokenizer: {"kind": "bpe" | "char", "description",
/// "vocab_size"}.
nlohmann::json tokenizer_json(const g2c::tokenizer::TextTokenizer& tokenizer);

}  // namespace g2c::exercises
