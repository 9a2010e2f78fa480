// Framework tests of SmolLM2's tokenizer (g2c/pretrained/tokenizer.h): the pre-tokenizer's cuts and
// character classes, BPE and special tokens on a small vocabulary made here, every refusal, and on
// the real file (skipped when it is not here) ids taken from Hugging Face's tokenizer for the same
// file, its ChatML prompt, and decode round trips. scripts/check_pretrained_tokenizer.py holds the
// tokenizer to Hugging Face's on all of TinyShakespeare.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "g2c/core/errors.h"
#include "g2c/pretrained/catalog.h"
#include "g2c/pretrained/tokenizer.h"
#include "g2c_test.h"

using Catch::Matchers::Contains;
using g2c::pretrained::CharClass;
using g2c::pretrained::ChatMessage;
using g2c::pretrained::PreTokenizer;
using g2c::pretrained::PretrainedTokenizer;
using g2c::pretrained::TokenizerTables;
using Ids = std::vector<std::int64_t>;
using Pieces = std::vector<std::string_view>;

namespace {

// SmolLM2's chat template, as its GGUF file holds it.
constexpr std::string_view kSmolLMTemplate =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ "
    "'<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|im_start|>assistant\n' }}{% endif %}";

// A small vocabulary: three control tokens (ids 0-2), the 256 bytes (3-258), then what the merges
// make: "aa" "ab" "bc" "th" "the" "Ġthe".
TokenizerTables small_tables(std::vector<std::string> merges = {"a a", "b c", "a b", "t h", "th e",
                                                                "Ġ the"}) {
  TokenizerTables tables;
  tables.model = "gpt2";
  tables.pre = "smollm";
  tables.tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  tables.token_types = {3, 3, 3};
  for (int byte = 0; byte < 256; ++byte) {
    tables.tokens.push_back(g2c::pretrained::byte_token_text(static_cast<std::uint8_t>(byte)));
    tables.token_types.push_back(1);
  }
  for (const char* made : {"aa", "ab", "bc", "th", "the", "Ġthe"}) {
    tables.tokens.push_back(made);
    tables.token_types.push_back(1);
  }
  tables.merges = std::move(merges);
  tables.bos_id = 1;
  tables.eos_id = 2;
  tables.chat_template = std::string(kSmolLMTemplate);
  return tables;
}

std::int64_t byte_id(char byte) {
  return 3 + static_cast<unsigned char>(byte);
}

// The tokenizer of the real SmolLM2 file, read once; nullptr when the file is not here.
const PretrainedTokenizer* smollm2(std::string& why_not) {
  static std::string missing;
  static const std::optional<PretrainedTokenizer> tokenizer =
      []() -> std::optional<PretrainedTokenizer> {
    try {
      const auto path = g2c::pretrained::pretrained_model_file("SmolLM2-135M-Instruct");
      return PretrainedTokenizer::from_gguf(g2c::pretrained::GGUFFile::open(path));
    } catch (const g2c::ValueError& error) {
      missing = error.what();
      return std::nullopt;
    }
  }();
  why_not = missing;
  return tokenizer ? &*tokenizer : nullptr;
}

// Random bytes with a fixed seed: ASCII, UTF-8 sequences, stray bytes and pieces of special tokens.
std::string random_text(std::mt19937& rng, const std::vector<std::uint8_t>& bytes) {
  static const std::vector<std::string> parts = {
      "<|im_end|>", "<|im_", "  ", "'ll", "12", "é", "\xF0\x9F\x98\x80", "\n\n", " the"};
  std::string text;
  const int length = std::uniform_int_distribution<int>(0, 40)(rng);
  for (int k = 0; k < length; ++k) {
    if (std::uniform_int_distribution<int>(0, 3)(rng) == 0)
      text += parts[std::uniform_int_distribution<std::size_t>(0, parts.size() - 1)(rng)];
    else
      text += static_cast<char>(
          bytes[std::uniform_int_distribution<std::size_t>(0, bytes.size() - 1)(rng)]);
  }
  return text;
}

}  // namespace

TEST_CASE("pre_tokenize_cuts_text_like_the_gpt2_pattern", "[pretrained]") {
  const auto smollm = [](std::string_view text) {
    return g2c::pretrained::pre_tokenize(text, PreTokenizer::kSmolLM);
  };
  const auto gpt2 = [](std::string_view text) {
    return g2c::pretrained::pre_tokenize(text, PreTokenizer::kGPT2);
  };
  // A run of spaces gives its last space to the word after it; at the end it stays whole.
  CHECK(smollm("  hello   world\n\n") == Pieces{" ", " hello", "  ", " world", "\n\n"});
  CHECK(smollm("don't I'll") == Pieces{"don", "'t", " I", "'ll"});
  CHECK(smollm("it'S") == Pieces{"it", "'", "S"});  // contractions are lowercase only
  CHECK(smollm("a\nb") == Pieces{"a", "\n", "b"});
  CHECK(smollm("h\xC3\xA9llo w\xC3\xB6rld?!") == Pieces{"h\xC3\xA9llo", " w\xC3\xB6rld", "?!"});
  CHECK(smollm("\xE3\x80\x80x") == Pieces{"\xE3\x80\x80", "x"});  // U+3000 is a space
  // smollm splits every number character off first; gpt2 keeps " 13" together.
  CHECK(smollm("What is 13 + 28?") ==
        Pieces{"What", " is", " ", "1", "3", " +", " ", "2", "8", "?"});
  CHECK(gpt2("What is 13 + 28?") == Pieces{"What", " is", " 13", " +", " 28", "?"});
  CHECK(smollm("x  12") == Pieces{"x", "  ", "1", "2"});
  CHECK(gpt2("x  12") == Pieces{"x", " ", " 12"});
  // Ill-formed UTF-8: each bad byte is a character of no class, and nothing is lost.
  CHECK(smollm("a\xFF\xFE"
               "b") == Pieces{"a", "\xFF\xFE", "b"});
  CHECK(smollm("\xE2\x82 x") == Pieces{"\xE2\x82", " x"});
  CHECK(smollm("").empty());
}

TEST_CASE("char_class_follows_unicode_letters_numbers_and_white_space", "[pretrained]") {
  CHECK(g2c::pretrained::char_class(U'a') == CharClass::kLetter);
  CHECK(g2c::pretrained::char_class(U'\u4E2D') == CharClass::kLetter);  // 中
  CHECK(g2c::pretrained::char_class(U'\u1C89') == CharClass::kLetter);  // new in Unicode 16
  CHECK(g2c::pretrained::char_class(U'7') == CharClass::kNumber);
  CHECK(g2c::pretrained::char_class(U'\u00BD') == CharClass::kNumber);  // ½ (No)
  CHECK(g2c::pretrained::char_class(U'\u0663') == CharClass::kNumber);  // Arabic-Indic three
  CHECK(g2c::pretrained::char_class(U'\n') == CharClass::kSpace);
  CHECK(g2c::pretrained::char_class(U'\u0085') == CharClass::kSpace);
  CHECK(g2c::pretrained::char_class(U'\u00A0') == CharClass::kSpace);
  CHECK(g2c::pretrained::char_class(U'\u3000') == CharClass::kSpace);
  CHECK(g2c::pretrained::char_class(U'\u001C') == CharClass::kNone);  // isspace() in Python, not \s
  CHECK(g2c::pretrained::char_class(U'+') == CharClass::kNone);
  CHECK(g2c::pretrained::char_class(U'\U0010FFFF') == CharClass::kNone);
}

TEST_CASE("utf8_char_at_takes_ill_formed_bytes_one_at_a_time", "[pretrained]") {
  const auto at = g2c::pretrained::utf8_char_at;
  CHECK(at("\xF0\x9F\x98\x80", 0).code_point == U'\U0001F600');
  CHECK(at("\xF0\x9F\x98\x80", 0).length == 4);
  for (const std::string_view bad : {"\xC0\x80", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                                     "\x80", "\xE2\x82", "\xFF"}) {
    INFO("bytes of length " << bad.size());
    CHECK_FALSE(at(bad, 0).valid);
    CHECK(at(bad, 0).length == 1);
  }
}

TEST_CASE("byte_token_text_is_gpt2s_byte_alphabet", "[pretrained]") {
  CHECK(g2c::pretrained::byte_token_text('a') == "a");
  CHECK(g2c::pretrained::byte_token_text(' ') == "\xC4\xA0");   // Ġ, U+0120
  CHECK(g2c::pretrained::byte_token_text('\n') == "\xC4\x8A");  // Ċ, U+010A
  CHECK(g2c::pretrained::byte_token_text(0) == "\xC4\x80");     // Ā, U+0100
  CHECK(g2c::pretrained::byte_token_text(0xAD) == "\xC5\x83");  // Ń, U+0143: the 68th
  CHECK(g2c::pretrained::byte_token_text(0xFF) == "\xC3\xBF");  // ÿ stands for itself
}

TEST_CASE("bpe_merges_lowest_rank_first_left_to_right", "[pretrained]") {
  const PretrainedTokenizer tok(small_tables());
  const std::int64_t aa = tok.id_of("aa"), ab = tok.id_of("ab"), bc = tok.id_of("bc");
  CHECK(tok.encode("aaa") == Ids{aa, byte_id('a')});  // non-overlapping, from the left
  CHECK(tok.encode("aaaa") == Ids{aa, aa});
  CHECK(tok.encode("abc") == Ids{byte_id('a'), bc});  // "b c" (rank 1) before "a b" (rank 2)
  const PretrainedTokenizer swapped(small_tables({"a a", "a b", "b c"}));
  CHECK(swapped.encode("abc") == Ids{ab, byte_id('c')});
  CHECK(tok.encode(" the the") == Ids{tok.id_of("Ġthe"), tok.id_of("Ġthe")});
  CHECK(tok.encode("the") == Ids{tok.id_of("the")});
  CHECK(tok.decode(tok.encode(" the the")) == " the the");
}

TEST_CASE("special_tokens_are_found_first_and_never_split", "[pretrained]") {
  const PretrainedTokenizer tok(small_tables());
  CHECK(tok.encode("<|im_start|>") == Ids{1});
  CHECK(tok.encode("a<|im_end|>b") == Ids{byte_id('a'), 2, byte_id('b')});
  CHECK(tok.encode("<<|im_end|>>") == Ids{byte_id('<'), 2, byte_id('>')});
  CHECK(tok.encode("<|im_end|><|endoftext|>") == Ids{2, 0});
  const Ids partial = tok.encode("<|im_end|");  // not the whole marker: ordinary bytes
  CHECK(partial.size() == 9);
  CHECK(std::find(partial.begin(), partial.end(), 2) == partial.end());
  CHECK(tok.decode({1, byte_id('x'), 2}) == "<|im_start|>x<|im_end|>");
  CHECK(tok.is_special(2));
  CHECK_FALSE(tok.is_special(byte_id('x')));
}

TEST_CASE("decode_inverts_encode_on_random_bytes", "[pretrained]") {
  const PretrainedTokenizer tok(small_tables());
  std::vector<std::uint8_t> every_byte;
  for (int byte = 0; byte < 256; ++byte) every_byte.push_back(static_cast<std::uint8_t>(byte));
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 500; ++trial) {
    const std::string text = random_text(rng, every_byte);
    INFO("trial " << trial);
    CHECK(tok.decode(tok.encode(text)) == text);
  }
}

TEST_CASE("chatml_template_reads_the_default_system_message_from_the_template", "[pretrained]") {
  const auto chat = g2c::pretrained::ChatMLTemplate::parse(kSmolLMTemplate);
  REQUIRE(chat.default_system().has_value());
  CHECK(*chat.default_system() ==
        "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
  CHECK(chat.format({{"user", "Hi"}}, true) ==
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
        "Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  // A system message of the conversation's own replaces the default; no conversation is refused.
  CHECK(chat.format({{"system", "Be brief."}, {"user", "Hi"}}, false) ==
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
  CHECK_THROWS_WITH(chat.format({}, true), Contains("cannot format an empty conversation"));
  // Another model's default (an escaped newline in the literal), and a template with none.
  std::string other(kSmolLMTemplate);
  const std::string smol =
      "system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face";
  other.replace(other.find(smol), smol.size(), "system\\nYou are Qwen.");
  CHECK(g2c::pretrained::ChatMLTemplate::parse(other).default_system() == "You are Qwen.");
  CHECK_FALSE(g2c::pretrained::ChatMLTemplate::parse(
                  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
                  "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if "
                  "add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
                  .default_system()
                  .has_value());
}

TEST_CASE("pretrained_tokenizer_refuses_tables_it_cannot_follow", "[pretrained]") {
  const auto refused = [](TokenizerTables tables) {
    return PretrainedTokenizer(std::move(tables));
  };
  auto llama = small_tables();
  llama.model = "llama";
  CHECK_THROWS_WITH(refused(llama), Contains("expected 'gpt2' (byte-level BPE), found 'llama'"));
  auto pre = small_tables();
  pre.pre = "llama-bpe";
  CHECK_THROWS_WITH(refused(pre),
                    Contains("expected 'smollm' or 'gpt2'") && Contains("found 'llama-bpe'"));
  auto types = small_tables();
  types.token_types.pop_back();
  CHECK_THROWS_WITH(refused(types), Contains("has 264 entries for 265 tokens"));
  CHECK_THROWS_WITH(refused(small_tables({"a a", "x yz"})),
                    Contains("merge 1 'x yz' names 'yz', which is not a token"));
  CHECK_THROWS_WITH(refused(small_tables({"c d"})),
                    Contains("merge 0 'c d' makes 'cd', which is not a token"));
  CHECK_THROWS_WITH(refused(small_tables({"ab"})), Contains("expected two tokens separated"));
  auto twice = small_tables();
  twice.tokens.back() = "aa";
  CHECK_THROWS_WITH(refused(twice), Contains("tokens 259 and 264 are both 'aa'"));
  auto outside = small_tables();
  outside.tokens.back() = " the";  // a real space is not in the byte alphabet
  CHECK_THROWS_WITH(refused(outside), Contains("not a string of GPT-2's byte alphabet"));
  auto bos = small_tables();
  bos.bos_id = 265;
  CHECK_THROWS_WITH(refused(bos), Contains("bos_token_id: expected an id in [0, 265), found 265"));

  const PretrainedTokenizer tok(small_tables());
  CHECK_THROWS_WITH(tok.decode({265}), Contains("token id 265: expected an id in [0, 265)"));
  CHECK_THROWS_WITH(tok.id_of("<|user|>"), Contains("no token '<|user|>'"));
  auto plain = small_tables();
  plain.chat_template = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}{% endfor %}";
  CHECK_THROWS_WITH(PretrainedTokenizer(plain).format_chat({{"user", "Hi"}}, true),
                    Contains("the chat template is not ChatML"));
  auto none = small_tables();
  none.chat_template.clear();
  CHECK_THROWS_WITH(PretrainedTokenizer(none).format_chat({{"user", "Hi"}}, true),
                    Contains("has no chat template"));
}

TEST_CASE("smollm2_tokenizer_gives_hugging_faces_ids", "[pretrained]") {
  std::string why_not;
  const PretrainedTokenizer* tok = smollm2(why_not);
  if (tok == nullptr) G2C_SKIP(why_not);
  CHECK(tok->vocab_size() == 49152);
  CHECK(tok->bos_id() == 1);
  CHECK(tok->eos_id() == 2);
  CHECK(tok->id_of("<|im_end|>") == 2);
  CHECK(tok->token_text(260) == "\xC4\xA0the");  // Ġthe
  CHECK(tok->is_special(16));                    // <empty_output>, the last control token
  CHECK_FALSE(tok->is_special(17));
  // Each list is what Hugging Face's tokenizer gives for SmolLM2.
  CHECK(tok->encode("What is 13 + 28?") == Ids{1780, 314, 216, 33, 35, 1232, 216, 34, 40, 47});
  CHECK(tok->encode("  hello   world\n\n") == Ids{216, 33662, 256, 905, 1116});
  CHECK(tok->encode("don't I'll") == Ids{12420, 982, 339, 3060});
  CHECK(tok->encode("<|im_start|>user\nHi<|im_end|>") == Ids{1, 4093, 198, 26843, 2});
  // Where the digit split matters ("ĠĠ" "1" "2" and " " "½"), as in SmolLM2's tokenizer.json.
  CHECK(tok->encode("x  12") == Ids{104, 256, 33, 34});
  CHECK(tok->encode("\xC2\xB2\xC2\xB3 \xC2\xBD") == Ids{19133, 39050, 216, 16738});  // ²³ ½
  // A byte without a token (0x04) is dropped, and the bytes around it still merge: "==".
  CHECK(tok->encode("=\x04=") == Ids{1189});
}

TEST_CASE("smollm2_chat_prompt_is_hugging_faces_apply_chat_template", "[pretrained]") {
  std::string why_not;
  const PretrainedTokenizer* tok = smollm2(why_not);
  if (tok == nullptr) G2C_SKIP(why_not);
  const std::vector<ChatMessage> messages = {{"user", "What is the capital of France?"}};
  const std::string prompt = tok->format_chat(messages, /*add_generation_prompt=*/true);
  CHECK(prompt ==
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
        "Face<|im_end|>\n<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
        "<|im_start|>assistant\n");
  CHECK(tok->encode(prompt) == Ids{1,    9690, 198,   2683, 359,  253,  5356, 5646,  11173, 3365,
                                   3511, 308,  34519, 28,   7018, 411,  407,  19712, 8182,  2,
                                   198,  1,    4093,  198,  1780, 314,  260,  3575,  282,   4649,
                                   47,   2,    198,   1,    520,  9531, 198});
}

TEST_CASE("smollm2_decode_inverts_encode_on_random_bytes", "[pretrained]") {
  std::string why_not;
  const PretrainedTokenizer* tok = smollm2(why_not);
  if (tok == nullptr) G2C_SKIP(why_not);
  // Every byte but the 21 SmolLM2's vocabulary has no token for (those are dropped, see above).
  std::vector<std::uint8_t> bytes;
  for (int byte = 0; byte < 256; ++byte) {
    const auto b = static_cast<std::uint8_t>(byte);
    if (tok->encode(std::string(1, static_cast<char>(b))).size() == 1) bytes.push_back(b);
  }
  CHECK(bytes.size() == 235);
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 500; ++trial) {
    const std::string text = random_text(rng, bytes);
    INFO("trial " << trial);
    CHECK(tok->decode(tok->encode(text)) == text);
  }
}
