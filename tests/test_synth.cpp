// Module 16B course tests: synthetic instruction data (g2c/synth), one for one with the Python
// edition's tests/test_synth.py. Suggested order: ngram_overlap (the five overlap tests), then
// dedupe_pairs (the four dedupe tests and the funnel). validate_pair, the prompts, the parser and
// the loop are provided, so their tests pass from the start. The loop runs against a fake teacher
// that misbehaves as real ones do — it repeats itself, pads its lists with commentary, and once
// stutters — with no model and no network.
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/inference/backend.h"
#include "g2c/synth/filter.h"
#include "g2c/synth/generate.h"
#include "g2c_test.h"

using g2c::synth::dedupe_pairs;
using g2c::synth::InstructionPair;
using g2c::synth::ngram_overlap;
using g2c::synth::validate_pair;
using Json = nlohmann::json;

namespace {

InstructionPair pair(std::string user = "What color is the sky?", std::string assistant = "Blue.") {
  return {std::move(user), std::move(assistant)};
}

std::vector<std::string> users(const std::vector<InstructionPair>& pairs) {
  std::vector<std::string> out;
  for (const auto& p : pairs) out.push_back(p.user);
  return out;
}

/// A teacher that misbehaves like a real one. Proposal prompts (they ask for a "numbered list
/// only") get the batches in turn: in-batch and cross-batch repeats, commentary, a blank item, an
/// instruction marked STUTTER. Answer prompts get a clean answer, except a stutter for STUTTER.
class FakeTeacher : public g2c::inference::Backend {
 public:
  explicit FakeTeacher(std::vector<std::string> batches = default_batches())
      : batches_(std::move(batches)) {}

  static std::vector<std::string> default_batches() {
    return {
        "Here you go!\n"
        "1. Name the largest planet in the solar system.\n"
        "2. Translate the word 'cat' into French.\n"
        "3. Name the largest planet in the solar system.\n"  // in-batch duplicate
        "4. STUTTER: repeat something\n",
        "1. Name the largest planet in our solar system.\n"  // near-duplicate of the first
        "2. Count the vowels in the word banana.\n"
        "3. \n"  // blank: the parser drops it
        "4. Rewrite the sentence 'I run fast' in the past tense.\n",
        "1. Give one use for a paperclip.\n"
        "2. What sound does a cow make?\n"
        "3. Spell the word 'rhythm' backwards.\n"
        "4. Give exactly one use for a paperclip.\n",  // near-duplicate of the first
    };
  }

  const g2c::inference::BackendInfo& info() const override { return info_; }

  g2c::inference::InferenceResult complete(const std::string& prompt,
                                           const g2c::inference::CompletionOptions& = {}) override {
    if (prompt.find("numbered list only") != std::string::npos) {
      const auto& batch = batches_[static_cast<std::size_t>(proposal_calls) % batches_.size()];
      ++proposal_calls;
      return result(prompt, batch);
    }
    ++response_calls;
    const auto from = prompt.find("Instruction:") + std::string("Instruction:").size();
    auto instruction = prompt.substr(from, prompt.find("Answer:") - from);
    instruction = instruction.substr(instruction.find_first_not_of(" \n"));
    instruction = instruction.substr(0, instruction.find_last_not_of(" \n") + 1);
    if (instruction.starts_with("STUTTER")) return result(prompt, "yes yes yes yes yes");
    while (!instruction.empty() &&
           std::string(".?!").find(instruction.back()) != std::string::npos) {
      instruction.pop_back();
    }
    for (auto& c : instruction) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return result(prompt, "A concise answer about: " + instruction + ".");
  }

  int proposal_calls = 0;
  int response_calls = 0;

 private:
  g2c::inference::InferenceResult result(const std::string& prompt, const std::string& text) {
    return {prompt, text, std::nullopt, std::nullopt, 0.0, info_};
  }
  std::vector<std::string> batches_;
  g2c::inference::BackendInfo info_{"fake", "fake-teacher"};
};

const std::vector<InstructionPair> kSeeds = {pair("What is the capital of France?", "Paris."),
                                             pair("What is 2+2?", "4.")};

}  // namespace

// --- validate_pair (provided) ------------------------------------------------------------------

TEST_CASE("validate_pair_accepts_a_clean_pair", "[clean]") {
  CHECK(validate_pair(pair()).empty());
}

TEST_CASE("validate_pair_rejects_shape_failures", "[clean]") {
  CHECK(validate_pair(Json("not a dict")) == std::vector<std::string>{"not an object"});
  CHECK_FALSE(validate_pair(Json{{"user", "hi"}}).empty());                   // no assistant
  CHECK_FALSE(validate_pair(pair("What color is the sky?", "   ")).empty());  // blank
  CHECK_FALSE(validate_pair(pair("", "Blue.")).empty());
  CHECK_FALSE(validate_pair(Json{{"user", "hi"}, {"assistant", 4}}).empty());  // not a string
}

TEST_CASE("validate_pair_rejects_runaway_length", "[clean]") {
  CHECK_FALSE(validate_pair(pair("What color is the sky?", std::string(500, 'x'))).empty());
  CHECK(validate_pair(pair("What color is the sky?", std::string(500, 'x')), 1000).empty());
}

TEST_CASE("validate_pair_rejects_echo_and_stutter", "[clean]") {
  CHECK_FALSE(validate_pair(pair("Say hi.", "say hi.")).empty());
  CHECK_FALSE(validate_pair(pair("What color is the sky?", "it is the the the answer")).empty());
  // Two in a row is emphasis, not degeneracy.
  CHECK(validate_pair(pair("What color is the sky?", "it is very very blue")).empty());
}

// --- prompts and parsing (provided) -------------------------------------------------------------

TEST_CASE("instruction_prompt_shows_numbered_examples", "[clean]") {
  const auto prompt = g2c::synth::build_instruction_prompt({"Alpha?", "Beta?"}, 5);
  CHECK_THAT(prompt, Catch::Matchers::Contains("1. Alpha?"));
  CHECK_THAT(prompt, Catch::Matchers::Contains("2. Beta?"));
  CHECK_THAT(prompt, Catch::Matchers::Contains("5 NEW instructions"));
}

TEST_CASE("response_prompt_embeds_the_instruction", "[clean]") {
  CHECK_THAT(g2c::synth::build_response_prompt("What is 2+2?"),
             Catch::Matchers::Contains("What is 2+2?"));
}

TEST_CASE("parse_numbered_list_is_permissive", "[clean]") {
  const std::string text =
      "Sure! Here are some instructions:\n"
      "1. Name the largest planet.\n"
      "2)  Rewrite 'hello' in uppercase. \n"
      "some stray commentary\n"
      "3. \"Count the vowels in banana.\"\n"
      "\n"
      "Hope these help!";
  CHECK(g2c::synth::parse_numbered_list(text) ==
        std::vector<std::string>{"Name the largest planet.", "Rewrite 'hello' in uppercase.",
                                 "Count the vowels in banana."});
  CHECK(g2c::synth::parse_numbered_list("no list here").empty());
}

// --- step 1: ngram_overlap (yours) --------------------------------------------------------------

TEST_CASE("overlap_identical_texts") {
  const std::string text = "name the largest planet in the solar system";
  INFO(
      "ngram_overlap: a text shares all of its n-grams with itself, so the Jaccard index "
      "shared / (|A| + |B| - shared) is 1");
  CHECK(ngram_overlap(text, text) == py_approx(1.0));
  CHECK(ngram_overlap(text, text, 2) == py_approx(1.0));
}

TEST_CASE("overlap_disjoint_texts") {
  CHECK(ngram_overlap("alpha beta gamma delta", "one two three four") == 0.0);
}

TEST_CASE("overlap_known_value") {
  // trigrams: 2 shared of 6 distinct -> 1/3
  INFO(
      "ngram_overlap is the Jaccard index of the two sets of n-grams: shared / distinct in "
      "either = 2 / (4 + 4 - 2); dividing by one text's grams gives 1/2, by their sum 1/4");
  CHECK(ngram_overlap("the cat sat on the mat", "the cat sat on a hat", 3) == py_approx(1.0 / 3));
}

TEST_CASE("overlap_short_texts_and_edges") {
  {
    INFO(
        "ngram_overlap: a text shorter than n words is one gram, all of its words (so a short "
        "text still equals itself)");
    CHECK(ngram_overlap("hello", "hello", 3) == py_approx(1.0));
    CHECK(ngram_overlap("hello", "goodbye", 3) == 0.0);
  }
  {
    INFO(
        "ngram_overlap: two empty texts are the same text (1.0); one empty text shares nothing "
        "(0.0) — decide these before dividing, where 0 / 0 would be NaN");
    CHECK(ngram_overlap("", "", 3) == py_approx(1.0));
    CHECK(ngram_overlap("", "hello", 3) == 0.0);
  }
  INFO("ngram_overlap: n = 0 has no grams: ValueError");
  CHECK_THROWS_AS(ngram_overlap("a b", "a b", 0), g2c::ValueError);
}

TEST_CASE("overlap_is_symmetric_and_case_insensitive") {
  const std::string a = "Rewrite this sentence in the past tense";
  const std::string b = "rewrite THIS sentence in the future tense";
  CHECK(ngram_overlap(a, b) == py_approx(ngram_overlap(b, a)));
  CHECK(ngram_overlap("Hello World", "hello world", 2) == py_approx(1.0));
}

// --- step 2: dedupe_pairs (yours) --------------------------------------------------------------

TEST_CASE("dedupe_drops_exact_and_near_duplicates") {
  const std::vector<InstructionPair> pairs = {
      pair("Name the largest planet in the solar system."),
      pair("Name the largest planet in the solar system."),  // exact
      pair("Name the largest planet in our solar system."),  // near
      pair("Translate the word 'cat' into French."),
  };
  // The near duplicate shares exactly 1/3 of its trigrams with the first: a 0.3 threshold catches
  // it; the unrelated pair sails through.
  INFO(
      "dedupe_pairs: keep a pair only when its overlap with every instruction in the pool — the "
      "seeds (`against`), then each pair already kept — is below the threshold");
  CHECK(users(dedupe_pairs(pairs, 0.3)) ==
        std::vector<std::string>{"Name the largest planet in the solar system.",
                                 "Translate the word 'cat' into French."});
}

TEST_CASE("dedupe_pool_grows_as_it_accepts") {
  // Neither candidate resembles the seed — against a fixed pool both would stay. The growing pool
  // drops the second.
  const std::vector<InstructionPair> pairs = {
      pair("List three primary colors used in painting."),
      pair("List three primary colors used in painting please.")};
  INFO(
      "dedupe_pairs: each kept pair's instruction joins the pool, so later pairs are compared "
      "with the seeds and with every pair kept before them");
  CHECK(dedupe_pairs(pairs, 0.5, {"What is 2+2?"}).size() == 1);
}

TEST_CASE("dedupe_respects_the_seed_pool") {
  const std::vector<InstructionPair> pairs = {pair("Name the largest planet in the solar system!")};
  CHECK(dedupe_pairs(pairs, 0.5, {"Name the largest planet in the solar system."}).empty());
  // The same pair sails through when the seeds don't cover it.
  CHECK(dedupe_pairs(pairs, 0.5, {"Unrelated?"}).size() == 1);
}

TEST_CASE("dedupe_threshold_semantics") {
  const std::vector<InstructionPair> pairs = {pair("the cat sat on the mat"),
                                              pair("the cat sat on a hat")};  // overlap 1/3
  INFO(
      "dedupe_pairs: a pair is a duplicate when its overlap with some instruction in the pool "
      "is >= threshold (at the threshold counts)");
  CHECK(dedupe_pairs(pairs, 0.34).size() == 2);     // below: new
  CHECK(dedupe_pairs(pairs, 1.0 / 3).size() == 1);  // at: a duplicate
  CHECK(dedupe_pairs({}, 0.5).empty());
}

// --- the whole loop, against a misbehaving teacher ----------------------------------------------

TEST_CASE("synthesize_dataset_funnel") {
  FakeTeacher teacher;
  const auto result = g2c::synth::synthesize_dataset(teacher, kSeeds,
                                                     g2c::synth::SynthesisOptions()
                                                         .with_target(6)
                                                         .with_batch_count(4)
                                                         .with_threshold(0.5)
                                                         .with_seed(0));
  // Every accepted pair is clean and new.
  REQUIRE(result.pairs.size() == 6);
  for (const auto& p : result.pairs) CHECK(validate_pair(p).empty());
  const auto instructions = users(result.pairs);
  CHECK(std::set<std::string>(instructions.begin(), instructions.end()).size() == 6);
  // The teacher's repeats and its stutter were caught, and counted.
  const auto& funnel = result.funnel;
  CHECK(funnel.accepted == 6);
  CHECK(funnel.duplicate >= 2);  // the in-batch duplicate and the cross-batch near duplicates
  CHECK(funnel.bad_pair >= 1);   // the stuttered answer
  CHECK(funnel.proposed >= funnel.accepted);
  CHECK(teacher.response_calls >= funnel.accepted);
}

TEST_CASE("synthesize_dataset_stops_on_a_stuck_teacher") {
  FakeTeacher stuck({"1. Name the largest planet in the solar system.\n"});
  const auto result = g2c::synth::synthesize_dataset(stuck, kSeeds,
                                                     g2c::synth::SynthesisOptions()
                                                         .with_target(10)
                                                         .with_batch_count(4)
                                                         .with_threshold(0.5)
                                                         .with_max_rounds(5)
                                                         .with_seed(0));
  // One new idea, endlessly repeated: the round budget ends the loop instead of spinning forever.
  CHECK(result.pairs.size() == 1);
  CHECK(result.funnel.rounds == 5);
  CHECK(result.funnel.duplicate >= 4);
}
