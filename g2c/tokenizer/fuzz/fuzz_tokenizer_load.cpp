// libFuzzer target: the tokenizer.json and ids.uint32 loaders on arbitrary bytes. Every input must
// either load or be rejected with g2c::ValueError; anything else (another exception, a crash, a
// sanitizer report) is a bug. A tokenizer that loads must encode, decode and save again.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/artifacts.h"
#include "g2c/tokenizer/bpe.h"

using namespace g2c::tokenizer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const BPETokenizer tokenizer = BPETokenizer::from_json_text(bytes);
    const Ids ids = tokenizer.encode_fast("hello <|endoftext|> world, ab abc");
    tokenizer.decode(ids);
    if (!(BPETokenizer::from_json_text(tokenizer.to_json().dump()) == tokenizer)) __builtin_trap();
  } catch (const g2c::ValueError&) {
  }
  try {
    parse_token_ids(bytes, /*vocab_size=*/300);
  } catch (const g2c::ValueError&) {
  }
  return 0;
}
