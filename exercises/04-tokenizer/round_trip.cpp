// Exercise 04.3 — the lossless round trip: punctuation, whitespace and multi-byte Unicode survive
// encode -> decode, whatever the merges, because every byte is in the base vocabulary. Also shows
// what decode does with a token sequence cut inside a character (U+FFFD, never an exception).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "g2c/tokenizer/bpe.h"
#include "g2c/tokenizer/utf8.h"

namespace exercise_04_round_trip {

using namespace g2c::tokenizer;

namespace {

// A token as Python would show it: 'text' when its bytes are whole characters, else the bytes,
// b'\xc3', because a multi-byte character can be split across tokens.
std::string piece(const BPETokenizer& tokenizer, TokenId id) {
  const std::string& bytes = tokenizer.token_bytes(id);
  if (is_valid_utf8(bytes)) return python_repr(bytes);
  std::string out = "b'";
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte == '\'' || byte == '\\')
      out += fmt::format("\\{}", c);
    else if (byte >= 0x20 && byte < 0x7F)
      out += c;
    else
      out += fmt::format("\\x{:02x}", byte);
  }
  return out + "'";
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 04, exercise 3: round trips on punctuation, whitespace and Unicode"};
  g2c::exercises::CommonOptions options;
  options.out = "results/04-tokenizer";
  std::size_t vocab_size = 400;
  std::size_t train_chars = 20000;  // your train is O(merges x length): keep it small
  std::vector<std::string> texts = {"Hello, World!",
                                    "  leading and trailing spaces  ",
                                    "tabs\tand\nnew\nlines\r\n",
                                    "punctuation: ;:!?.,'\"()[]{}<>-_/\\|@#$%^&*~`",
                                    "héllo wörld — naïve café",
                                    "日本語のテキスト",
                                    "emoji 🌍🚀👩‍👩‍👧 and flags 🇫🇷",
                                    "mixed: ROMEO. O, she doth teach the torches to burn bright! 🔥",
                                    "<|endoftext|> is a special token here",
                                    ""};
  g2c::exercises::add_common_options(app, options);
  app.add_option("--vocab-size", vocab_size, "Vocabulary to train to");
  app.add_option("--train-chars", train_chars, "Characters of TinyShakespeare to train on");
  app.add_option("--texts", texts, "Texts to round-trip").no_default();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const std::string corpus = g2c::exercises::load_tinyshakespeare();
    BPETokenizer tokenizer = BPETokenizer::with_course_special_tokens();
    tokenizer.train(utf8_prefix(corpus, train_chars), vocab_size);
    fmt::print("trained to vocab {} on {} characters of TinyShakespeare\n\n",
               tokenizer.vocab_size(), train_chars);

    nlohmann::json cases = nlohmann::json::array();
    int failures = 0;
    for (const std::string& text : texts) {
      const Ids ids = tokenizer.encode(text);
      const std::string decoded = tokenizer.decode(ids);
      std::vector<std::string> pieces;
      for (const TokenId id : ids) pieces.push_back(piece(tokenizer, id));
      const bool ok = decoded == text;
      failures += ok ? 0 : 1;
      fmt::print("{} {}\n   {} bytes -> {} tokens: {}\n", ok ? "ok  " : "FAIL", python_repr(text),
                 text.size(), ids.size(), fmt::join(pieces, " "));
      cases.push_back({{"text", text},
                       {"bytes", text.size()},
                       {"ids", ids},
                       {"tokens", pieces},
                       {"decoded", decoded},
                       {"ok", ok}});
    }

    // A sequence cut in the middle of "é" (C3 A9): decode replaces the partial character.
    const Ids cut = {0xC3};
    const std::string replaced = tokenizer.decode(cut);
    fmt::print("\ndecode([0xC3]) (half of 'é') = {} (U+FFFD, the replacement character)\n",
               python_repr(replaced));

    auto result = g2c::exercises::run_metadata("04_round_trip", options, device);
    result["config"] = {{"vocab_size", vocab_size}, {"train_chars", train_chars}, {"texts", texts}};
    result["cases"] = cases;
    result["failures"] = failures;
    result["partial_utf8"] = {{"ids", cut}, {"decoded", replaced}};
    result["figures"] = nlohmann::json::array();
    g2c::exercises::save_result(options, "round_trip.json", result);
    fmt::print("{} of {} texts round-trip exactly\n", texts.size() - failures, texts.size());
  });
}

}  // namespace exercise_04_round_trip
