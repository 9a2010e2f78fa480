// Module 04 framework tests: the fast paths against the reference (property tests over random
// bytes, random UTF-8 with special tokens and real text), every rejection of a malformed file,
// special-token edge cases, very long and empty inputs, UTF-8 replacement, the character and text
// tokenizers.
#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/tokenizer/tokenizer.h"
#include "g2c_test.h"
#include "tokenizer_test_support.h"

using namespace g2c::tokenizer;
using g2c::ValueError;
using g2c::testing::bytes_of;
using g2c::testing::ids;
using g2c::testing::TempDir;

namespace {

// A few sentences of ordinary English prose, for "real text" with a realistic pair distribution.
constexpr std::string_view kProse =
    "The river runs slowly past the old mill, and the miller's children watch the water from "
    "the bridge every evening. They count the leaves that float by, they argue about which one "
    "will reach the sea first, and they go home only when their mother calls them twice. In the "
    "winter the river freezes near the banks; the children then walk along the edge of the ice, "
    "listening to it crack and sing. Their father says that the mill is older than the town, "
    "older than the church, older even than the road that brings the farmers with their grain. "
    "Nobody believes him, but everybody likes to hear the story again.\n"
    "\"Where does the water go?\" asked the youngest. \"To the sea,\" said her brother, \"and then "
    "up into the clouds, and then down again as rain on the hills, and then back to us.\" She "
    "thought about this for a long time. \"So it is the same water, going round and round?\" "
    "\"The same water,\" he said, \"but never the same river.\"\n";

std::string repeat(std::string_view text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

// This file's own source: several kilobytes of real text (code and English comments).
std::string this_source() {
  return g2c::read_file(G2C_TOKENIZER_SAMPLE_TEXT);
}

std::string random_bytes(std::mt19937& rng, std::size_t length, int alphabet) {
  std::uniform_int_distribution<int> pick(0, alphabet - 1);
  std::string text(length, '\0');
  for (char& c : text) c = static_cast<char>(pick(rng) * (256 / alphabet));
  return text;
}

// Random UTF-8 (ASCII, accented letters, CJK, emoji) with special tokens and fragments of them.
std::string random_utf8(std::mt19937& rng, std::size_t pieces,
                        const std::vector<std::string>& specials) {
  static const std::vector<std::string> atoms = {"a", "b",  "ab", " ", "  ", "\n", "th", "e", "é",
                                                 "ö", "中", "文", "🌍", "—",  "<|", "|>", "<"};
  std::uniform_int_distribution<std::size_t> atom(0, atoms.size() - 1);
  std::uniform_int_distribution<int> percent(0, 99);
  std::string text;
  for (std::size_t i = 0; i < pieces; ++i) {
    if (!specials.empty() && percent(rng) < 4) {
      text += specials[std::uniform_int_distribution<std::size_t>(0, specials.size() - 1)(rng)];
    } else {
      text += atoms[atom(rng)];
    }
  }
  return text;
}

// train and train_fast from the same start must learn identical tables and sequences.
void check_fast_training_matches(const std::vector<std::string>& specials, const std::string& text,
                                 std::size_t extra_merges) {
  BPETokenizer reference(specials);
  BPETokenizer fast(specials);
  const std::size_t target = reference.base_vocab_size() + extra_merges;
  reference.train(text, target);
  const Ids fast_ids = fast.train_fast(text, target);
  INFO("text of " << text.size() << " bytes, " << reference.merges().size() << " merges");
  REQUIRE(fast.merges_in_order().size() == reference.merges_in_order().size());
  for (std::size_t i = 0; i < fast.merges_in_order().size(); ++i) {
    const Merge& want = reference.merges_in_order()[i];
    const Merge& got = fast.merges_in_order()[i];
    if (!(want == got)) {
      FAIL("merge #" << i << ": reference " << want.pair << " -> " << want.id << ", fast "
                     << got.pair << " -> " << got.id);
    }
  }
  CHECK(fast == reference);
  CHECK(fast_ids == reference.encode(text));
}

void write_text(const std::filesystem::path& path, std::string_view text) {
  g2c::write_file_atomic(path, text);
}

BPETokenizer load_text(std::string_view text) {
  return BPETokenizer::from_json_text(text);
}

}  // namespace

// --- Fast path = reference ---------------------------------------------------------------------

TEST_CASE("fast_train_equals_reference_on_random_bytes", "[fast]") {
  const int seed = GENERATE(range(0, 12));
  std::mt19937 rng(static_cast<unsigned>(seed));
  // Small alphabets make ties and overlapping runs ("aaaa") common: the hard cases.
  const int alphabet = std::vector<int>{2, 3, 4, 16, 256}[seed % 5];
  const std::size_t length = std::uniform_int_distribution<std::size_t>(0, 1500)(rng);
  INFO("seed " << seed << ", alphabet " << alphabet);
  check_fast_training_matches({}, random_bytes(rng, length, alphabet), 80);
}

TEST_CASE("fast_train_equals_reference_on_random_utf8_with_special_tokens", "[fast]") {
  const int seed = GENERATE(range(0, 10));
  std::mt19937 rng(static_cast<unsigned>(1000 + seed));
  const std::vector<std::string> specials =
      seed % 2 ? course_special_tokens() : std::vector<std::string>{"<|a|>", "<|a|>b", "|"};
  INFO("seed " << seed);
  check_fast_training_matches(specials, random_utf8(rng, 600, specials), 70);
}

TEST_CASE("fast_train_equals_reference_on_real_text", "[fast]") {
  check_fast_training_matches({}, std::string(kProse), 200);
  check_fast_training_matches(course_special_tokens(),
                              std::string(kProse) + "<|endoftext|>" + this_source(), 160);
}

TEST_CASE("fast_encode_equals_reference_encode", "[fast]") {
  BPETokenizer tok = BPETokenizer::with_course_special_tokens();
  tok.train_fast(std::string(kProse) + "<|endoftext|>" + this_source(), 700);
  const int seed = GENERATE(range(0, 8));
  std::mt19937 rng(static_cast<unsigned>(seed));
  const std::string text = seed % 2 ? random_utf8(rng, 400, course_special_tokens())
                                    : random_bytes(rng, 800, 1 << (seed % 8 + 1));
  INFO("seed " << seed);
  CHECK(tok.encode_fast(text) == tok.encode(text));
  for (const std::size_t cap : {tok.base_vocab_size(), std::size_t{300}, std::size_t{500}}) {
    BPETokenizer capped = BPETokenizer::with_course_special_tokens();
    for (const Merge& merge : tok.merges_in_order()) {
      if (merge.id < cap) capped.add_merge(merge.pair, merge.id);
    }
    CHECK(tok.encode_at_vocab(text, cap) == capped.encode(text));
  }
  CHECK(tok.decode(tok.encode_fast(text)) == to_valid_utf8(text));
}

TEST_CASE("fast_encode_equals_reference_on_real_text", "[fast]") {
  BPETokenizer tok;
  tok.train_fast(kProse, 456);
  const std::string source = this_source();
  CHECK(tok.encode_fast(source) == tok.encode(source));
  CHECK(tok.decode(tok.encode_fast(source)) == source);
}

TEST_CASE("training_continues_from_existing_merges", "[fast]") {
  const std::string text = std::string(kProse);
  BPETokenizer direct;
  direct.train(text, 350);
  BPETokenizer in_two;
  in_two.train(text, 300);
  in_two.train(text, 350);
  CHECK(in_two == direct);
  BPETokenizer fast_in_two;
  fast_in_two.train_fast(text, 300);
  fast_in_two.train_fast(text, 350);
  CHECK(fast_in_two == direct);
}

TEST_CASE("training_stops_when_no_pair_is_left", "[fast]") {
  for (const bool fast : {false, true}) {
    BPETokenizer tok;
    std::vector<TrainProgress> reports;
    const auto record = [&](const TrainProgress& p) { reports.push_back(p); };
    if (fast) {
      CHECK(tok.train_fast("abab", 1000, record) == ids({257}));
    } else {
      tok.train("abab", 1000, record);
    }
    CHECK(tok.vocab_size() == 258);  // ab, then abab
    REQUIRE(reports.size() == 1);
    CHECK(reports.back().done);
    CHECK(reports.back().steps == 2);
    CHECK(reports.back().tokens == 1);
    CHECK(reports.back().last_token_repr == "'abab'");
  }
}

// --- Empty and very long inputs ----------------------------------------------------------------

TEST_CASE("empty_inputs", "[edge]") {
  BPETokenizer tok = BPETokenizer::with_course_special_tokens();
  std::vector<TrainProgress> reports;
  CHECK(tok.train_fast("", 400, [&](const TrainProgress& p) { reports.push_back(p); }).empty());
  CHECK(tok.merges().empty());
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].done);
  CHECK(!reports[0].last_pair.has_value());
  tok.train("", 400);
  CHECK(tok.merges().empty());
  CHECK(tok.encode("").empty());
  CHECK(tok.encode_fast("").empty());
  CHECK(tok.encode_base("").empty());
  CHECK(tok.decode({}).empty());
  CHECK(CharTokenizer("").vocab_size() == 0);
}

TEST_CASE("very_long_runs_of_one_byte", "[edge]") {
  // 200,001 a's: every merge is an overlapping (x, x) pair; the odd one out is left at the end.
  const std::string text(200001, 'a');
  check_fast_training_matches({}, text, 14);
  BPETokenizer tok;
  const Ids trained = tok.train_fast(text, 256 + 17);
  CHECK(trained == tok.encode_fast(text));
  CHECK(tok.decode(trained) == text);
}

TEST_CASE("very_long_text_round_trips", "[edge]") {
  std::mt19937 rng(7);
  std::string text = repeat(kProse, 200) + random_utf8(rng, 20000, course_special_tokens());
  BPETokenizer tok = BPETokenizer::with_course_special_tokens();
  const Ids trained = tok.train_fast(text, 1500);
  CHECK(tok.vocab_size() == 1500);
  CHECK(trained == tok.encode_fast(text));
  CHECK(tok.decode(trained) == text);
  CHECK(trained.size() < text.size() / 3);
}

// --- Special tokens ----------------------------------------------------------------------------

TEST_CASE("special_tokens_longest_match_wins", "[special]") {
  const BPETokenizer tok({"<|a|>", "<|a|>b"});
  CHECK(tok.encode_base("<|a|>b<|a|>") == ids({257, 256}));
  CHECK(tok.encode_base("<|a|") == bytes_of("<|a|"));
}

TEST_CASE("special_tokens_adjacent_and_at_edges", "[special]") {
  const BPETokenizer tok = BPETokenizer::with_course_special_tokens();
  CHECK(tok.encode_base("<|user|><|end|>") == ids({258, 262}));
  CHECK(tok.encode_fast("<|pad|>x<|pad|>") == ids({263, 120, 263}));
  CHECK(tok.encode_base("<|endoftext") == bytes_of("<|endoftext"));
  CHECK(tok.decode({256, 104, 256}) == "<|endoftext|>h<|endoftext|>");
}

TEST_CASE("special_tokens_never_merge_with_neighbours", "[special]") {
  BPETokenizer tok = BPETokenizer::with_course_special_tokens();
  const std::string text = repeat("hi<|end|>hi<|end|>", 30);
  tok.train_fast(text, tok.base_vocab_size() + 20);
  for (const Merge& merge : tok.merges_in_order()) {
    CHECK_FALSE(tok.is_special(merge.pair.left));
    CHECK_FALSE(tok.is_special(merge.pair.right));
  }
  const Ids encoded = tok.encode_fast(text);
  CHECK(std::count(encoded.begin(), encoded.end(), tok.special_id("<|end|>")) == 60);
  CHECK_THROWS_AS(tok.add_merge({256, 104}, static_cast<TokenId>(tok.vocab_size())), ValueError);
}

TEST_CASE("special_id_unknown_names_the_known_tokens", "[special]") {
  const BPETokenizer tok({"<|user|>"});
  CHECK_THROWS_WITH(tok.special_id("<|bot|>"), Catch::Contains("<|user|>"));
}

// --- tokenizer.json ----------------------------------------------------------------------------

TEST_CASE("tokenizer_json_is_byte_identical_to_python_edition", "[persistence]") {
  TempDir dir;
  BPETokenizer tok({"<|end|>"});
  tok.add_merge({97, 98}, 257);
  tok.save(dir / "tokenizer.json");
  CHECK(g2c::read_file(dir / "tokenizer.json") ==
        "{\n  \"format\": \"g2c.bpe\",\n  \"version\": 2,\n  \"special_tokens\": [\n    "
        "\"<|end|>\"\n  ],\n  \"merges\": [\n    [\n      97,\n      98,\n      257\n    ]\n  "
        "]\n}\n");
}

TEST_CASE("tokenizer_json_version_1_is_accepted", "[persistence]") {
  const BPETokenizer tok = load_text(
      R"({"format": "g2c.bpe", "version": 1, "merges": [[97, 98, 256], [256, 99, 257]]})");
  CHECK(tok.special_tokens().empty());
  CHECK(tok.vocab()[257] == "abc");
}

TEST_CASE("tokenizer_json_non_ascii_special_tokens_round_trip", "[persistence]") {
  TempDir dir;
  const BPETokenizer tok({"<|é|>", "🌍"});
  tok.save(dir / "tokenizer.json");
  CHECK(g2c::read_file(dir / "tokenizer.json").find("\\u00e9") != std::string::npos);
  CHECK(BPETokenizer::load(dir / "tokenizer.json") == tok);
}

TEST_CASE("tokenizer_json_rejections", "[persistence]") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"", "not valid JSON"},
      {"{\"format\": \"g2c.bpe\", ", "not valid JSON"},
      {"[1, 2]", "JSON object"},
      {R"({"version": 2, "merges": []})", "not a g2c BPE tokenizer"},
      {R"({"format": "other", "version": 2, "merges": []})", "not a g2c BPE tokenizer"},
      {R"({"format": 7, "version": 2, "merges": []})", "not a g2c BPE tokenizer"},
      {R"({"format": "g2c.bpe", "merges": []})", "version"},
      {R"({"format": "g2c.bpe", "version": 3, "merges": []})", "version 3"},
      {R"({"format": "g2c.bpe", "version": "2", "merges": []})", "version"},
      {R"({"format": "g2c.bpe", "version": 2, "special_tokens": "x", "merges": []})",
       "special_tokens"},
      {R"({"format": "g2c.bpe", "version": 2, "special_tokens": [1], "merges": []})",
       "special_tokens"},
      {R"({"format": "g2c.bpe", "version": 2, "special_tokens": ["a", "a"], "merges": []})",
       "unique"},
      {R"({"format": "g2c.bpe", "version": 2, "special_tokens": [""], "merges": []})", "non-empty"},
      {R"({"format": "g2c.bpe", "version": 2})", "merges"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": {}})", "merges"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": [[97, 98]]})", "[a, b, new_id]"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": [97]})", "[a, b, new_id]"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": [[97, "b", 256]]})", "integer"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": [[97, 98.0, 256]]})", "integer"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": [[97, true, 256]]})", "integer"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": [[-1, 98, 256]]})", "not a valid token id"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": [[97, 98, 99999999999]]})",
       "not a valid token id"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": [[97, 98, 257]]})", "consecutively"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": [[97, 98, 256], [97, 99, 256]]})",
       "consecutively"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": [[97, 300, 256]]})", "unknown id 300"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": [[256, 97, 256]]})", "unknown id 256"},
      {R"({"format": "g2c.bpe", "version": 2, "special_tokens": ["<|x|>"], "merges": [[256, 97, 257]]})",
       "special token"},
      {R"({"format": "g2c.bpe", "version": 2, "merges": [[97, 98, 256], [97, 98, 257]]})",
       "already merges"},
  };
  for (const Case& c : cases) {
    INFO("input: " << c.text);
    CHECK_THROWS_AS(load_text(c.text), ValueError);
    CHECK_THROWS_WITH(load_text(c.text), Catch::Contains(c.message));
  }
}

TEST_CASE("tokenizer_json_missing_file_names_the_path", "[persistence]") {
  TempDir dir;
  CHECK_THROWS_AS(BPETokenizer::load(dir / "nope.json"), ValueError);
  CHECK_THROWS_WITH(BPETokenizer::load(dir / "nope.json"), Catch::Contains("nope.json"));
}

// --- ids.uint32 and artifacts ------------------------------------------------------------------

TEST_CASE("token_ids_are_little_endian", "[persistence]") {
  TempDir dir;
  save_token_ids({0x01020304u, 4096}, dir / "ids.uint32");
  CHECK(g2c::read_file(dir / "ids.uint32") == std::string("\x04\x03\x02\x01\x00\x10\x00\x00", 8));
}

TEST_CASE("token_ids_rejections", "[persistence]") {
  CHECK(parse_token_ids("").empty());
  CHECK_THROWS_WITH(parse_token_ids(std::string(5, '\0')), Catch::Contains("multiple of 4"));
  CHECK_THROWS_WITH(parse_token_ids(std::string("\x00\x01\x00\x00", 4), 256),
                    Catch::Contains("outside the vocabulary"));
  CHECK(parse_token_ids(std::string("\xff\x00\x00\x00", 4), 256) == ids({255}));
  TempDir dir;
  CHECK_THROWS_AS(load_token_ids(dir / "missing.uint32"), ValueError);
}

TEST_CASE("artifact_rejections", "[persistence]") {
  TempDir dir;
  BPETokenizer tok;
  tok.add_merge({97, 98}, 256);
  const nlohmann::ordered_json manifest = {{"name", "X"}, {"token_count", 2}};
  CHECK_THROWS_WITH(load_artifact(dir / "absent"), Catch::Contains("not found"));
  CHECK_THROWS_AS(save_artifact(tok, ids({257}), manifest, dir.path()), ValueError);

  save_artifact(tok, ids({256, 97}), manifest, dir.path());
  CHECK(load_artifact(dir.path()).ids == ids({256, 97}));

  write_text(dir / "manifest.json", "{\"token_count\": 3}");
  CHECK_THROWS_WITH(load_artifact(dir.path()), Catch::Contains("token_count"));
  CHECK_NOTHROW(load_artifact(dir.path(), /*with_ids=*/false));
  write_text(dir / "manifest.json", "[]");
  CHECK_THROWS_WITH(load_artifact(dir.path()), Catch::Contains("JSON object"));
  write_text(dir / "manifest.json", "{oops");
  CHECK_THROWS_WITH(load_artifact(dir.path()), Catch::Contains("not valid JSON"));
  std::filesystem::remove(dir / "manifest.json");
  CHECK_THROWS_WITH(load_artifact(dir.path()), Catch::Contains("manifest.json"));

  save_artifact(tok, ids({256, 97}), manifest, dir.path());
  save_token_ids(ids({256, 300}), dir / "ids.uint32");
  CHECK_THROWS_WITH(load_artifact(dir.path()), Catch::Contains("outside the vocabulary"));
  write_text(dir / "ids.uint32", "abc");
  CHECK_THROWS_WITH(load_artifact(dir.path()), Catch::Contains("multiple of 4"));
  write_text(dir / "tokenizer.json", "{\"format\": \"g2c.bpe\", \"version\": 9, \"merges\": []}");
  CHECK_THROWS_WITH(load_artifact(dir.path()), Catch::Contains("version"));
}

TEST_CASE("named_artifacts_resolve_under_the_artifacts_root", "[persistence]") {
  TempDir root;
  ::setenv("G2C_ARTIFACTS_DIR", root.path().c_str(), 1);
  CHECK(tokenizer_artifact_dir("ShakespeareTokenizer") ==
        root.path() / "tokenizers" / "ShakespeareTokenizer");
  CHECK_FALSE(tokenizer_artifact_exists(kShakespeareTokenizer));
  CHECK_THROWS_WITH(load_shakespeare_tokenizer(),
                    Catch::Contains("scripts/make_tokenizer_artifacts.sh"));
  CHECK_THROWS_WITH(load_tokenizer_artifact(kG2CTokenizer), Catch::Contains("G2CTokenizer"));

  const TextTokenizer fallback = shakespeare_or_characters("to be or not", 2048, false);
  CHECK_FALSE(fallback.is_bpe());
  CHECK(fallback.description() == "characters (7)");

  BPETokenizer tok = BPETokenizer::with_course_special_tokens();
  const Ids trained = tok.train_fast(repeat(kProse, 3), 400);
  save_artifact(tok, trained, {{"name", "ShakespeareTokenizer"}, {"token_count", trained.size()}},
                tokenizer_artifact_dir(kShakespeareTokenizer));
  CHECK(load_shakespeare_tokenizer() == tok);
  const TextTokenizer bpe = shakespeare_or_characters("unused", 300, false);
  CHECK(bpe.is_bpe());
  CHECK(bpe.size() == 300);
  CHECK(bpe.description() == "ShakespeareTokenizer at vocab 300");
  const TextTokenizer capped = shakespeare_or_characters("unused", 2048, false);
  CHECK(capped.size() == 400);
  CHECK_FALSE(artifact_or_characters(kG2CTokenizer, "abc", std::nullopt, false).is_bpe());
  const TextTokenizer whole =
      artifact_or_characters(kShakespeareTokenizer, "", std::nullopt, false);
  CHECK(whole.size() == 400);
  ::unsetenv("G2C_ARTIFACTS_DIR");
}

// --- UTF-8 -------------------------------------------------------------------------------------

TEST_CASE("invalid_utf8_is_replaced_like_python", "[utf8]") {
  const std::string r(kReplacementCharacter);
  // Expected values are Python's bytes.decode("utf-8", errors="replace").
  CHECK(to_valid_utf8("\xE2\x82") == r);
  CHECK(to_valid_utf8("\xE2\x82\xAC") == "€");
  CHECK(to_valid_utf8("\xF0\x80\x80") == r + r + r);
  CHECK(to_valid_utf8("\xED\xA0\x80") == r + r + r);
  CHECK(to_valid_utf8("\xC0\xAF") == r + r);
  CHECK(to_valid_utf8("\xF4\x90\x80\x80") == r + r + r + r);
  CHECK(to_valid_utf8("\xE2\x28\xA1") == r + "(" + r);
  CHECK(to_valid_utf8("\xF0\x9F\x98!") == r + "!");
  CHECK(to_valid_utf8("\xFF") == r);
  CHECK(to_valid_utf8("ok \xF0\x9F\x8C\x8D") == "ok 🌍");
  CHECK(is_valid_utf8("héllo 🌍"));
  CHECK_FALSE(is_valid_utf8("\xC3"));
}

TEST_CASE("utf8_lengths_and_prefixes_count_characters", "[utf8]") {
  CHECK(utf8_length("héllo 🌍") == 7);
  CHECK(utf8_prefix("héllo", 2) == "hé");
  CHECK(utf8_prefix("hi", 10) == "hi");
  CHECK(utf8_characters("a\xC3\xA9\xFF") == std::vector<std::string>{"a", "é", "\xEF\xBF\xBD"});
}

TEST_CASE("python_repr_matches_python", "[utf8]") {
  CHECK(python_repr("the") == "'the'");
  CHECK(python_repr("it's") == "\"it's\"");
  CHECK(python_repr("a'b\"c") == "'a\\'b\"c'");
  CHECK(python_repr("\n\t\\") == "'\\n\\t\\\\'");
  CHECK(python_repr("\x01 é") == "'\\x01 é'");
}

TEST_CASE("display_token_escapes_control_characters", "[utf8]") {
  CHECK(display_token(" the") == " the");
  CHECK(display_token("\n\n") == "\\n\\n");
  CHECK(display_token("  ") == "\u2423\u2423");
  CHECK(display_token("\xE2\x82") == "\uFFFD");
}

// --- Character and text tokenizers -------------------------------------------------------------

TEST_CASE("char_tokenizer_sorts_by_code_point_and_round_trips", "[chars]") {
  const CharTokenizer chars("héllo wörld");
  CHECK(chars.symbols() == std::vector<std::string>{" ", "d", "h", "l", "o", "r", "w", "é", "ö"});
  CHECK(chars.decode(chars.encode("hölé")) == "hölé");
  CHECK(chars.encode("hé") == ids({2, 7}));
  CHECK_THROWS_WITH(chars.encode("hx"), Catch::Contains("'x'"));
  CHECK(chars.encode("hx", chars.fallback_id()) == ids({2, 0}));
  CHECK_THROWS_AS(chars.decode({10}), ValueError);
}

TEST_CASE("text_tokenizer_caps_and_checks_ids", "[chars]") {
  auto bpe = std::make_shared<BPETokenizer>(BPETokenizer::with_course_special_tokens());
  bpe->train_fast(repeat(kProse, 2), 330);
  const TextTokenizer capped = TextTokenizer::from_bpe(bpe, 300, "Prose");
  CHECK(capped.size() == 300);
  const std::vector<std::int64_t> encoded = capped.encode(kProse);
  CHECK(std::all_of(encoded.begin(), encoded.end(), [](std::int64_t id) { return id < 300; }));
  CHECK(capped.decode(encoded) == kProse);
  CHECK_THROWS_AS(capped.decode({300}), ValueError);
  CHECK_THROWS_AS(capped.decode({-1}), ValueError);
  CHECK(capped.token_label(10) == "\\n");

  const TextTokenizer chars = TextTokenizer::from_chars(CharTokenizer("abc "));
  CHECK(chars.encode("cab?") == std::vector<std::int64_t>{3, 1, 2, 0});
  CHECK(chars.decode({1, 2}) == "ab");
}

// --- Merges imported from an external list -----------------------------------------------------

namespace {

/// The merges of `tok` as an external list writes them: the bytes of both parts, by id.
std::vector<std::pair<std::string, std::string>> merges_as_bytes(const BPETokenizer& tok) {
  std::vector<std::pair<std::string, std::string>> list;
  for (const auto& merge : tok.merges_in_order()) {
    list.emplace_back(tok.token_bytes(merge.pair.left), tok.token_bytes(merge.pair.right));
  }
  return list;
}

}  // namespace

TEST_CASE("imported_merges_rebuild_a_trained_tokenizer_in_any_order") {
  BPETokenizer trained;
  trained.train_fast(std::string(kProse), 300);
  auto list = merges_as_bytes(trained);
  REQUIRE(list.size() == 300 - 256);

  BPETokenizer in_order;
  in_order.import_merges(list);
  CHECK(in_order == trained);  // the same merges with the same ids

  // Backwards, every composite is named before the merge that creates it: each still resolves,
  // and the vocabulary holds the same tokens (under other ids).
  std::reverse(list.begin(), list.end());
  BPETokenizer reversed;
  reversed.import_merges(list);
  auto tokens = [](const BPETokenizer& tok) {
    auto vocab = tok.vocab();
    std::sort(vocab.begin(), vocab.end());
    return vocab;
  };
  CHECK(tokens(reversed) == tokens(trained));
  for (const auto& merge : reversed.merges_in_order()) {
    CHECK(merge.pair.left < merge.id);
    CHECK(merge.pair.right < merge.id);
  }
  std::string joined;
  for (const TokenId id : reversed.encode_fast(std::string(kProse)))
    joined += reversed.token_bytes(id);
  CHECK(joined == std::string(kProse));
}

TEST_CASE("import_merges_refuses_a_list_that_cannot_resolve_and_changes_nothing") {
  BPETokenizer tok;
  tok.import_merges({{"a", "b"}});
  const BPETokenizer before = tok;
  CHECK_THROWS_WITH(tok.import_merges({{"c", "d"}, {"xy", "z"}}),
                    Catch::Contains("merge #1") && Catch::Contains("cannot be resolved"));
  CHECK(tok == before);
  CHECK(tok.vocab_size() == 257);
  CHECK_THROWS_AS(tok.import_merges({{"", "a"}}), ValueError);
  CHECK_THROWS_WITH(tok.import_merges({{"c", "d"}, {"c", "d"}}), Catch::Contains("merge #1"));
  CHECK(tok == before);
  BPETokenizer with_specials = BPETokenizer::with_course_special_tokens();
  // A special token's bytes are not a token a merge can use: "<|endoftext|>" never resolves.
  CHECK_THROWS_AS(with_specials.import_merges({{"<|endoftext|>", "a"}}), ValueError);
}
