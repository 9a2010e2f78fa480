// libFuzzer target: train on fuzzed text, then check every invariant of the tokenizer.
//   byte 0: bits 0-5 the number of merges to learn, bit 6 course special tokens on/off
//   the rest: first half the training text, second half a probe text
// Invariants: train_fast == train (same merges, on small inputs), encode_fast == encode,
// decode(encode(x)) == x with invalid UTF-8 replaced, the result is valid UTF-8, capped encodings
// round-trip, tokenizer.json round-trips. Any violation aborts (a crash libFuzzer reports).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "g2c/tokenizer/bpe.h"
#include "g2c/tokenizer/utf8.h"

using namespace g2c::tokenizer;

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

BPETokenizer make(bool specials) {
  return specials ? BPETokenizer::with_course_special_tokens() : BPETokenizer();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t merges = data[0] & 63;
  const bool specials = (data[0] & 64) != 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string_view train_text = rest.substr(0, rest.size() / 2);
  const std::string_view probe = rest.substr(rest.size() / 2);

  BPETokenizer fast = make(specials);
  const std::size_t target = fast.base_vocab_size() + merges;
  const Ids trained = fast.train_fast(train_text, target);
  require(trained == fast.encode_fast(train_text));
  if (train_text.size() <= 2048) {
    BPETokenizer reference = make(specials);
    reference.train(train_text, target);
    require(reference == fast);
  }
  for (const std::string_view text : {train_text, probe}) {
    const Ids ids = fast.encode_fast(text);
    if (text.size() <= 2048) require(ids == fast.encode(text));
    const std::string decoded = fast.decode(ids);
    require(decoded == to_valid_utf8(text));
    require(is_valid_utf8(decoded));
    const Ids capped = fast.encode_at_vocab(text, fast.base_vocab_size() + merges / 2);
    require(capped.size() >= ids.size());
    require(fast.decode(capped) == decoded);
  }
  require(BPETokenizer::from_json_text(fast.to_json().dump()) == fast);
  return 0;
}
