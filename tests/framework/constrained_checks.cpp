// Module 18 framework tests: constrained decoding against independent oracles. The automaton
// against a real JSON parser (nlohmann::json): every string of up to five characters over the
// grammar's alphabet, every accepted prefix of up to seven, random documents written with
// rationed whitespace and characters of every UTF-8 length, and byte mutations of them — every
// complete text parses, every valid text is accepted with all its prefixes, every accepted prefix
// extends to a text that parses. Then the memoised masks against a brute-force sweep, random
// models under the mask (outputs parse or are valid prefixes, the mask never empties early), the
// KV-cached Llama adapter against the model's full forward, vocab_pieces against the tokenizers'
// own encode, bad arguments, and SmolLM2 itself under the grammar (skipped, visibly, without its
// file).
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/pretrained/catalog.h"
#include "g2c/pretrained/generation.h"
#include "g2c/pretrained/llama.h"
#include "g2c/pretrained/logits_model.h"
#include "g2c/sampling/constrained.h"
#include "g2c/tokenizer/text_tokenizer.h"
#include "g2c_test.h"
#include "one_thread.h"
#include "smollm2.h"
#include "tiny_llama.h"

using g2c::pretrained::vocab_pieces;  // SmolLM2's tokenizer
using g2c::sampling::allowed_token_mask;
using g2c::sampling::check_generate_json_arguments;
using g2c::sampling::generate_json;
using g2c::sampling::GenerateJsonOptions;
using g2c::sampling::JsonPrefixAutomaton;
using g2c::sampling::JsonState;
using g2c::sampling::JsonStateHash;
using g2c::sampling::LogitsModel;
using g2c::sampling::MaskCache;
using g2c::sampling::vocab_pieces;
using Json = nlohmann::json;
using Catch::Matchers::Contains;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

const JsonPrefixAutomaton kAutomaton;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// What the grammar promises to accept, judged by the parser: valid JSON whose root is an object,
// with nothing (not even whitespace) after the root's '}'. (Callers keep to the subset: no arrays,
// literals, exponents or \u escapes, and whitespace runs of at most three.)
bool parser_accepts_as_root_object(const std::string& text) {
  if (text.empty() || is_space(text.back()) || !Json::accept(text)) return false;
  return Json::parse(text).is_object();
}

// Every string of `length` characters over `alphabet`, passed to `visit`.
void for_each_string(const std::string& alphabet, std::size_t length,
                     const std::function<void(const std::string&)>& visit) {
  std::string text(length, alphabet[0]);
  std::vector<std::size_t> digits(length, 0);
  while (true) {
    visit(text);
    std::size_t i = 0;
    while (i < length && ++digits[i] == alphabet.size()) {
      digits[i] = 0;
      text[i] = alphabet[0];
      ++i;
    }
    if (i == length) return;
    text[i] = alphabet[digits[i]];
  }
}

// The shortest text that completes `state` over a few closing characters (breadth first over
// states): what the automaton believes finishes the document. The parser then judges it.
class Completions {
 public:
  const std::optional<std::string>& of(const JsonState& state) {
    const auto found = memo_.find(state);
    if (found != memo_.end()) return found->second;
    return memo_.emplace(state, search(state)).first->second;
  }

 private:
  static std::optional<std::string> search(const JsonState& start) {
    static const std::vector<std::string> kSteps = {"}", "\"",   ":",    "0",
                                                    "{", "\x80", "\xA0", "\x90"};
    std::deque<std::pair<JsonState, std::string>> queue = {{start, ""}};
    std::unordered_map<JsonState, bool, JsonStateHash> seen = {{start, true}};
    while (!queue.empty()) {
      auto [state, text] = queue.front();
      queue.pop_front();
      if (JsonPrefixAutomaton::is_complete(state)) return text;
      for (const auto& step : kSteps) {
        const auto next = kAutomaton.advance(state, step);
        if (next && seen.emplace(*next, true).second) queue.emplace_back(*next, text + step);
      }
    }
    return std::nullopt;
  }

  std::unordered_map<JsonState, std::optional<std::string>, JsonStateHash> memo_;
};

// Random documents of the grammar's subset, written with 0-3 whitespace characters between
// tokens, and with strings of characters of every UTF-8 length, escapes and the edges of RFC
// 3629's ranges. nlohmann writes each string and number (it escapes what JSON needs).
class RandomDocuments {
 public:
  explicit RandomDocuments(std::uint32_t seed) : random_(seed) {}

  std::string next() {
    std::string text = whitespace();
    write_object(text, 0);
    return text;
  }

 private:
  std::size_t below(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(random_);
  }

  std::string whitespace() {
    static const char kSpaces[] = {' ', '\n', '\t', '\r'};
    std::string out;
    for (std::size_t n = below(4); n > 0; --n) out += kSpaces[below(4)];
    return out;
  }

  std::string random_string() {
    // ASCII, the characters JSON escapes, DEL, then é, €, U+0800, U+D7FF, U+E000, 😀, U+10FFFF.
    // clang-format off
    static const std::vector<std::string> kCharacters = {
        "a", "b", "Z", " ", "\"", "\\", "/", "\n", "\t", "\b", "\f", "\r", "{", "}", ":", ",",
        "\x7F", "\xC3\xA9", "\xE2\x82\xAC", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80",
        "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF"};
    // clang-format on
    std::string out;
    for (std::size_t n = below(6); n > 0; --n) out += kCharacters[below(kCharacters.size())];
    return out;
  }

  std::string random_number() {
    const auto value = static_cast<long long>(below(8001)) - 4000;
    if (below(2) == 0) return Json(value).dump();        // an integer: -4000 .. 4000
    return Json(static_cast<double>(value) / 4).dump();  // -1000.0 .. 1000.0 in quarters
  }

  void write_object(std::string& text, int depth) {
    text += "{";
    const auto members = below(4);
    for (std::size_t m = 0; m < members; ++m) {
      if (m > 0) text += ",";
      text += whitespace() + Json(random_string()).dump() + whitespace() + ":" + whitespace();
      const auto kind = below(depth < 3 ? 3 : 2);
      if (kind == 0) {
        text += Json(random_string()).dump();
      } else if (kind == 1) {
        text += random_number();
      } else {
        write_object(text, depth + 1);
      }
      text += whitespace();
    }
    if (members == 0) text += whitespace();
    text += "}";
  }

  std::mt19937 random_;
};

// Logits drawn afresh at every call from a seeded generator: a model with no preference at all.
class RandomLM : public LogitsModel {
 public:
  RandomLM(std::int64_t vocab, std::uint64_t seed)
      : vocab_(vocab), generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}
  torch::Tensor forward(const torch::Tensor& ids) override {
    return torch::randn({ids.size(0), ids.size(1), vocab_}, generator_) * 3;  // (B, T, V)
  }
  std::int64_t max_seq_len() const override { return 16; }
  std::int64_t vocab_size() const override { return vocab_; }
  torch::Device device() const override { return torch::kCPU; }

 private:
  std::int64_t vocab_;
  at::Generator generator_;
};

// Every byte alone, an empty piece, and pieces cut from random documents (many of them holding
// part of a character): a vocabulary as awkward as a byte-level tokenizer's.
std::vector<std::string> awkward_pieces(std::size_t cut_pieces, std::uint32_t seed) {
  std::vector<std::string> pieces;
  for (int byte = 0; byte < 256; ++byte) pieces.emplace_back(1, static_cast<char>(byte));
  pieces.emplace_back();
  RandomDocuments documents(seed);
  std::mt19937 random(seed);
  while (pieces.size() < 257 + cut_pieces) {
    const auto text = documents.next();
    const auto start = std::uniform_int_distribution<std::size_t>(0, text.size() - 1)(random);
    const auto length = std::uniform_int_distribution<std::size_t>(2, 8)(random);
    pieces.push_back(text.substr(start, length));
  }
  return pieces;
}

std::string joined(const std::vector<std::string>& pieces, const torch::Tensor& ids,
                   std::int64_t from) {
  std::string text;
  for (std::int64_t i = from; i < ids.size(0); ++i) {
    text += pieces.at(static_cast<std::size_t>(ids[i].item<std::int64_t>()));
  }
  return text;
}

}  // namespace

TEST_CASE("every_short_string_is_complete_exactly_when_the_parser_accepts_it", "[constrained]") {
  // 14 characters, every string of up to five of them: 579,195 strings.
  const std::string alphabet = "{}\":, 01-.a\\n\t";
  std::int64_t complete = 0;
  for (std::size_t length = 0; length <= 5; ++length) {
    for_each_string(alphabet, length, [&](const std::string& text) {
      const bool automaton_complete =
          kAutomaton.is_complete(kAutomaton.advance(kAutomaton.initial(), text));
      const bool parser = parser_accepts_as_root_object(text);
      if (automaton_complete != parser) {
        FAIL_CHECK("\"" << text << "\": automaton complete " << automaton_complete
                        << ", parser accepts " << parser);
      }
      complete += automaton_complete;
    });
  }
  CHECK(complete > 40);
}

TEST_CASE("every_accepted_prefix_extends_to_a_text_the_parser_accepts", "[constrained]") {
  // Depth first over the accepted prefixes of up to seven characters (a rejected one is cut off
  // with everything after it), including bytes of a two-byte character and an invalid
  // continuation after ED (a surrogate).
  const std::string alphabet = "{}\":, 0-.a\\n\xC3\xA9\xED";
  Completions completions;
  std::int64_t prefixes = 0, complete = 0;
  std::function<void(const std::string&, const JsonState&)> visit = [&](const std::string& text,
                                                                        const JsonState& state) {
    ++prefixes;
    const auto& completion = completions.of(state);
    if (!completion) {
      FAIL_CHECK("\"" << text << "\" is accepted but nothing completes it");
    } else if (!parser_accepts_as_root_object(text + *completion)) {
      FAIL_CHECK("\"" << text << "\" + \"" << *completion << "\" is complete but does not parse");
    }
    if (JsonPrefixAutomaton::is_complete(state)) {
      ++complete;
      CHECK(completion == std::string());
    }
    if (text.size() == 7) return;
    for (const char c : alphabet) {
      if (const auto next = kAutomaton.advance(state, std::string(1, c))) visit(text + c, *next);
    }
  };
  visit("", kAutomaton.initial());
  INFO(prefixes << " prefixes, " << complete << " complete");
  CHECK(prefixes > 10000);
  CHECK(complete > 20);
}

TEST_CASE("random_documents_are_accepted_with_every_prefix", "[constrained]") {
  RandomDocuments documents(18);
  for (int n = 0; n < 2000; ++n) {
    const auto text = documents.next();
    INFO(text);
    REQUIRE(parser_accepts_as_root_object(text));  // the generator writes valid JSON
    auto state = std::optional<JsonState>(kAutomaton.initial());
    for (std::size_t i = 0; i < text.size(); ++i) {
      state = kAutomaton.advance(state, text.substr(i, 1));
      if (!state) FAIL("rejected at byte " << i << " of " << text.size());
      if (i + 1 < text.size()) REQUIRE_FALSE(JsonPrefixAutomaton::is_complete(*state));
    }
    REQUIRE(JsonPrefixAutomaton::is_complete(state));
    CHECK(kAutomaton.advance(kAutomaton.initial(), text) == state);  // all at once, the same
  }
}

TEST_CASE("mutated_documents_are_complete_only_when_they_parse", "[constrained]") {
  // One byte replaced, inserted or deleted: what the automaton calls complete must parse, and
  // what it accepts as a prefix must still extend to a text that parses. Mutations inside a
  // multi-byte character are how invalid UTF-8 gets in.
  RandomDocuments documents(1818);
  std::mt19937 random(7);
  Completions completions;
  std::int64_t complete = 0, rejected = 0;
  for (int n = 0; n < 20000; ++n) {
    auto text = documents.next();
    const auto at = std::uniform_int_distribution<std::size_t>(0, text.size() - 1)(random);
    const auto byte = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(random));
    switch (n % 3) {
      case 0:
        text[at] = byte;
        break;
      case 1:
        text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), byte);
        break;
      default:
        text.erase(at, 1);
        break;
    }
    const auto state = kAutomaton.advance(kAutomaton.initial(), text);
    if (!state) {
      ++rejected;
      continue;
    }
    INFO(text);
    if (JsonPrefixAutomaton::is_complete(*state)) {
      ++complete;
      CHECK(parser_accepts_as_root_object(text));
    } else {
      const auto& completion = completions.of(*state);
      REQUIRE(completion);
      CHECK(parser_accepts_as_root_object(text + *completion));
    }
  }
  CHECK(complete > 1000);
  CHECK(rejected > 1000);
}

TEST_CASE("utf8_inside_strings_follows_rfc_3629", "[constrained]") {
  const auto inside = *kAutomaton.advance(kAutomaton.initial(), R"({"k": ")");
  // Whole characters of every length, and the edges of the ranges, are content.
  for (const std::string ok : {"\xC3\xA9", "\xE2\x82\xAC", "\xE0\xA0\x80", "\xED\x9F\xBF",
                               "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF", "\x7F"}) {
    const auto state = kAutomaton.advance(inside, ok + "\"}");
    CHECK(JsonPrefixAutomaton::is_complete(state));
    CHECK(parser_accepts_as_root_object(R"({"k": ")" + ok + "\"}"));
  }
  // Overlong forms, surrogates, past U+10FFFF, stray continuation bytes, bytes never in UTF-8.
  for (const std::string bad :
       {"\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xED\xA0\x80", "\xF0\x80\x80\x80",
        "\xF4\x90\x80\x80", "\x80", "\xBF", "\xF5", "\xFF"}) {
    CHECK_FALSE(kAutomaton.advance(inside, bad).has_value());
    CHECK_FALSE(Json::accept(R"({"k": ")" + bad + "\"}"));
  }
  // A string cannot close, and an escape cannot start, in the middle of a character.
  const auto half = kAutomaton.advance(inside, "\xE2\x82");
  REQUIRE(half);
  CHECK_FALSE(kAutomaton.advance(half, "\"").has_value());
  CHECK_FALSE(kAutomaton.advance(half, "\\").has_value());
  CHECK(kAutomaton.advance(half, "\xAC\"}").has_value());
  // Outside strings only ASCII is grammatical.
  CHECK_FALSE(kAutomaton.advance(kAutomaton.initial(), "\xC3\xA9").has_value());
}

TEST_CASE("numbers_do_not_hold_whitespace", "[constrained]") {
  for (const std::string bad : {R"({"a": - 1})", R"({"a": 1. 5})",
                                R"({"a": -)"
                                "\n"
                                "0}"}) {
    CHECK_FALSE(kAutomaton.advance(kAutomaton.initial(), bad).has_value());
    CHECK_FALSE(Json::accept(bad));
  }
  for (const std::string ok : {R"({"a": -1 })", R"({"a": 1.5 , "b":0})", R"({"a":0	})"}) {
    CHECK(JsonPrefixAutomaton::is_complete(kAutomaton.advance(kAutomaton.initial(), ok)));
    CHECK(Json::accept(ok));
  }
}

TEST_CASE("the_whitespace_ration_is_a_setting", "[constrained]") {
  const JsonPrefixAutomaton strict(0), loose(8);
  CHECK_FALSE(strict.advance(strict.initial(), " {").has_value());
  CHECK(JsonPrefixAutomaton::is_complete(strict.advance(strict.initial(), R"({"a":"b c"})")));
  CHECK(loose.advance(loose.initial(), "        {").has_value());
  CHECK_FALSE(loose.advance(loose.initial(), "         {").has_value());
  CHECK_THROWS_MATCHES(JsonPrefixAutomaton(-1), g2c::ValueError,
                       MessageContains("max_whitespace_run must be 0..255"));
  CHECK(g2c::sampling::to_string(kAutomaton.initial()) ==
        "(kPreRoot, depth=0, whitespace_run=0, utf8=kNothing)");
}

TEST_CASE("memoised_masks_equal_the_brute_force_sweep", "[constrained]") {
  const auto pieces = awkward_pieces(1500, 3);
  const auto vocab = static_cast<std::int64_t>(pieces.size());
  MaskCache cache;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    RandomLM model(vocab, seed);
    generate_json(model, torch::tensor({0}, torch::kLong), pieces,
                  GenerateJsonOptions()
                      .max_new_tokens(40)
                      .temperature(seed % 2 ? 0.7 : 1.5)
                      .mask_cache(&cache));
  }
  REQUIRE(cache.size() > 10);
  for (const auto& [state, mask] : cache) {
    INFO(g2c::sampling::to_string(state));
    REQUIRE(mask.sizes() == torch::IntArrayRef{vocab});
    REQUIRE(mask.scalar_type() == torch::kBool);
    const auto* flags = mask.contiguous().data_ptr<bool>();
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < vocab; ++i) {
      const auto& piece = pieces[static_cast<std::size_t>(i)];
      auto walked = std::optional<JsonState>(state);  // byte by byte, by hand
      for (const char c : piece) walked = kAutomaton.advance(walked, std::string(1, c));
      wrong += flags[i] != (!piece.empty() && walked.has_value());
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("random_models_under_the_mask_write_valid_json_or_valid_prefixes", "[constrained]") {
  const auto pieces = awkward_pieces(3000, 11);
  const auto vocab = static_cast<std::int64_t>(pieces.size());
  MaskCache cache;
  std::int64_t complete = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    RandomLM model(vocab, seed);
    const auto prompt = torch::tensor({5, 6, 7}, torch::kLong);
    const std::int64_t budget = 60;
    const auto out =
        generate_json(model, prompt, pieces,
                      GenerateJsonOptions()
                          .max_new_tokens(budget)
                          .temperature(1.0 + static_cast<double>(seed % 3))
                          .top_p(seed % 5 == 0 ? std::optional<double>(0.9) : std::nullopt)
                          .generator(at::make_generator<at::CPUGeneratorImpl>(seed))
                          .mask_cache(&cache));
    REQUIRE(torch::equal(out.narrow(0, 0, 3), prompt));
    const auto text = joined(pieces, out, 3);
    INFO("seed " << seed << ": " << text);
    const auto state = kAutomaton.advance(kAutomaton.initial(), text);
    REQUIRE(state);
    if (JsonPrefixAutomaton::is_complete(*state)) {
      ++complete;
      CHECK(parser_accepts_as_root_object(text));
    } else {
      CHECK(out.size(0) == 3 + budget);  // only the budget stops an incomplete text
    }
  }
  CHECK(complete > 10);
}

TEST_CASE("generate_json_keeps_its_contract", "[constrained]") {
  const std::vector<std::string> pieces = {"\"", "{", "}", ":", "a", " ", "1", "x"};
  class Fixed : public LogitsModel {
   public:
    torch::Tensor forward(const torch::Tensor& ids) override {
      ++calls;
      longest = std::max(longest, ids.size(1));
      return torch::arange(8, 0, -1, torch::kFloat).view({1, 1, 8}).expand({1, ids.size(1), 8});
    }
    std::int64_t max_seq_len() const override { return 4; }
    std::int64_t vocab_size() const override { return 8; }
    torch::Device device() const override { return torch::kCPU; }
    std::int64_t calls = 0, longest = 0;
  } model;
  // No budget: the prompt alone, without a forward pass.
  const auto prompt = torch::tensor({1, 2, 3, 4, 5}, torch::kInt32);
  auto out = generate_json(model, prompt, pieces, GenerateJsonOptions().max_new_tokens(0));
  CHECK(out.scalar_type() == torch::kLong);
  CHECK(torch::equal(out, prompt.to(torch::kLong)));
  CHECK(model.calls == 0);
  // The context is cropped to max_seq_len; a fixed generator gives a fixed text.
  const auto a = generate_json(model, prompt, pieces,
                               GenerateJsonOptions().max_new_tokens(30).generator(
                                   at::make_generator<at::CPUGeneratorImpl>(4)));
  const auto b = generate_json(model, prompt, pieces,
                               GenerateJsonOptions().max_new_tokens(30).generator(
                                   at::make_generator<at::CPUGeneratorImpl>(4)));
  CHECK(torch::equal(a, b));
  CHECK(model.longest == 4);
  // No gradient is built.
  CHECK_FALSE(a.requires_grad());
}

TEST_CASE("bad_arguments_are_refused_with_what_was_expected", "[constrained]") {
  const std::vector<std::string> pieces(8, "a");
  class Eight : public LogitsModel {
   public:
    torch::Tensor forward(const torch::Tensor& ids) override {
      return torch::zeros({1, ids.size(1), 8});
    }
    std::int64_t max_seq_len() const override { return 4; }
    std::int64_t vocab_size() const override { return 8; }
    torch::Device device() const override { return torch::kCPU; }
  } model;
  const auto prompt = torch::tensor({1, 2}, torch::kLong);
  const auto check = [&](const torch::Tensor& ids, const std::vector<std::string>& p,
                         const GenerateJsonOptions& options) {
    check_generate_json_arguments(model, ids, p, options);
  };
  CHECK_NOTHROW(check(prompt, pieces, {}));
  CHECK_THROWS_MATCHES(check(prompt, std::vector<std::string>(7, "a"), {}), g2c::ValueError,
                       MessageContains("V = 8 logits per position but 7 pieces"));
  CHECK_THROWS_MATCHES(check(torch::zeros({1, 2}, torch::kLong), pieces, {}), g2c::ValueError,
                       MessageContains("non-empty 1-D integer tensor"));
  CHECK_THROWS_MATCHES(check(torch::tensor({0.5, 1.0}), pieces, {}), g2c::ValueError,
                       MessageContains("non-empty 1-D integer tensor"));
  CHECK_THROWS_MATCHES(check(torch::tensor({1, 8}, torch::kLong), pieces, {}), g2c::ValueError,
                       MessageContains("outside the model vocab [0, 8)"));
  CHECK_THROWS_MATCHES(check(prompt, pieces, GenerateJsonOptions().max_new_tokens(-1)),
                       g2c::ValueError, MessageContains("max_new_tokens must be >= 0"));
  CHECK_THROWS_MATCHES(check(prompt, pieces, GenerateJsonOptions().temperature(std::nan(""))),
                       g2c::ValueError, MessageContains("temperature must be finite and >= 0"));
  CHECK_THROWS_MATCHES(check(prompt, pieces, GenerateJsonOptions().top_k(0)), g2c::ValueError,
                       MessageContains("top_k must be >= 1"));
  CHECK_THROWS_MATCHES(check(prompt, pieces, GenerateJsonOptions().top_p(1.5)), g2c::ValueError,
                       MessageContains("top_p must be in (0, 1]"));
  struct NoTokenizer {
    std::string decode(const std::vector<std::int64_t>&) const { return ""; }
  };
  CHECK_THROWS_MATCHES(vocab_pieces(NoTokenizer(), -1), g2c::ValueError,
                       MessageContains("vocab_size must be >= 0"));
}

TEST_CASE("course_tokenizer_pieces_concatenate_to_the_text", "[constrained]") {
  const std::string text =
      "Café, naïve: {\"ok\": 1} — 😀 and more café! The quick brown fox jumps over the lazy dog.";
  auto bpe =
      std::make_shared<g2c::tokenizer::BPETokenizer>(std::vector<std::string>{"<|endoftext|>"});
  bpe->train_fast(text, 300);
  const auto tokenizer = g2c::tokenizer::TextTokenizer::from_bpe(bpe, std::nullopt);
  const auto pieces = vocab_pieces(tokenizer, tokenizer.size());
  REQUIRE(static_cast<std::int64_t>(pieces.size()) == tokenizer.size());
  CHECK(pieces[static_cast<std::size_t>(bpe->special_id("<|endoftext|>"))].empty());
  CHECK(pieces[0xC3] == "\xC3");  // one byte of a character, not U+FFFD
  std::string back;
  for (const auto id : tokenizer.encode(text)) back += pieces[static_cast<std::size_t>(id)];
  CHECK(back == text);
  CHECK_THROWS_MATCHES(vocab_pieces(tokenizer, tokenizer.size() + 1), g2c::ValueError,
                       MessageContains("vocab_size must be 0.."));
  const auto chars = g2c::tokenizer::TextTokenizer::from_chars(g2c::tokenizer::CharTokenizer(text));
  const auto char_pieces = vocab_pieces(chars, chars.size());
  back.clear();
  for (const auto id : chars.encode(text)) back += char_pieces[static_cast<std::size_t>(id)];
  CHECK(back == text);
}

TEST_CASE("the_cached_llama_adapter_equals_the_full_forward", "[constrained]") {
  torch::manual_seed(18);
  const auto options = g2c::testing::tiny_llama_options();
  g2c::pretrained::LlamaModel model(options);
  torch::NoGradGuard no_grad;
  g2c::pretrained::LlamaLogitsModel adapter(*model);
  CHECK(adapter.max_seq_len() == 32);
  CHECK(adapter.vocab_size() == 20);
  const auto ids = torch::randint(0, 20, {1, 12}, torch::kLong);
  // Growing contexts (the cache serves them), then a different one (it starts again).
  for (const std::int64_t length : {3, 4, 5, 9, 12, 2, 6}) {
    INFO("length " << length);
    auto context = ids.narrow(1, 0, length);
    if (length == 2) context = torch::tensor({{7, 7}}, torch::kLong);
    const auto cached = adapter(context);  // (1, 1, V)
    REQUIRE(cached.sizes() == torch::IntArrayRef{1, 1, 20});
    const auto full = model->forward(context).select(1, -1);  // (1, V)
    CHECK(torch::allclose(cached.select(1, 0), full, 1e-5, 1e-5));
  }
}

TEST_CASE("smollm2_writes_json_that_parses_under_the_grammar", "[constrained]") {
  G2C_SKIP_WITHOUT_SMOLLM2();
  auto smol = g2c::pretrained::load_pretrained_model("SmolLM2-135M-Instruct",
                                                     g2c::pretrained::LoadOptions().packed(true));
  const auto vocab = smol.model->options.vocab_size();
  const auto pieces = vocab_pieces(smol.tokenizer, vocab);
  REQUIRE(static_cast<std::int64_t>(pieces.size()) == 49152);
  CHECK(pieces[static_cast<std::size_t>(smol.tokenizer.eos_id())].empty());  // <|im_end|>
  // Pieces concatenate to the text, partial characters included.
  const std::string sample = "Le café coûte 3 € — 😀 {\"name\": \"calculator\"}";
  std::string back;
  for (const auto id : smol.tokenizer.encode(sample)) back += pieces[static_cast<std::size_t>(id)];
  CHECK(back == sample);

  const auto prompt_text = smol.tokenizer.format_chat(
      {{"user",
        "Call the calculator tool for 13 + 28. Answer with JSON only, like {\"name\": "
        "\"calculator\", \"arguments\": {\"expression\": \"...\"}}."}},
      /*add_generation_prompt=*/true);
  const auto prompt = torch::tensor(smol.tokenizer.encode(prompt_text), torch::kLong);
  g2c::pretrained::LlamaLogitsModel model(*smol.model);
  MaskCache cache;
  const auto out =
      generate_json(model, prompt, pieces,
                    GenerateJsonOptions().max_new_tokens(48).temperature(0).mask_cache(&cache));
  const auto text = joined(pieces, out, prompt.size(0));
  INFO("SmolLM2 under the grammar: " << text);
  std::cout << "SmolLM2 under the grammar (" << out.size(0) - prompt.size(0) << " tokens, "
            << cache.size() << " masks): " << text << std::endl;
  const auto state = kAutomaton.advance(kAutomaton.initial(), text);
  REQUIRE(state);
  if (JsonPrefixAutomaton::is_complete(*state)) {
    CHECK(parser_accepts_as_root_object(text));
  } else {
    CHECK(out.size(0) - prompt.size(0) == 48);
  }
}
