#include "exercises/common/course_tokenizer.h"

#include "g2c/core/errors.h"
#include "g2c/tokenizer/artifacts.h"

namespace g2c::exercises {

g2c::tokenizer::TextTokenizer course_tokenizer(const std::string& level, std::string_view text,
                                               std::size_t vocab_size, bool prefer_g2c) {
  using g2c::tokenizer::TextTokenizer;
  if (level == "char") {
    return TextTokenizer::from_chars(g2c::tokenizer::CharTokenizer(text));
  }
  if (level != "bpe") {
    throw ValueError("unknown token level '" + level + "': use bpe or char");
  }
  if (prefer_g2c) {
    auto g2c_tokenizer = g2c::tokenizer::artifact_or_characters(g2c::tokenizer::kG2CTokenizer, text,
                                                                vocab_size, /*verbose=*/false);
    if (g2c_tokenizer.is_bpe()) {
      return g2c_tokenizer;
    }
  }
  return g2c::tokenizer::shakespeare_or_characters(text, vocab_size);
}

nlohmann::json tokenizer_json(const g2c::tokenizer::TextTokenizer& tokenizer) {
  return {{"kind", tokenizer.is_bpe() ? "bpe" : "char"},
          {"description", tokenizer.description()},
          {"vocab_size", tokenizer.size()}};
}

}  // namespace g2c::exercises
