// Module 18 course tests: constrained decoding (g2c/sampling/constrained.h), one for one with the
// Python edition's tests/test_constrained.py. Tests tagged [clean] pass on the scaffold.
//
// Suggested order: allowed_token_mask (mask_*), then generate_json (the generation tests,
// vocab_pieces_mismatch_raises and prompt_validation). generate_json draws its tokens with module
// 11's sample_next_token, so the generation tests also need module 11 written (or
// `-DG2C_SOLUTIONS=11`). The JsonPrefixAutomaton and vocab_pieces are implemented for you: their
// tests pass from the start and double as a readable spec of the grammar.
//
// The generation tests use a rigged model whose logits always prefer ungrammatical tokens: if the
// mask has a hole, the model drives straight through it.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/sampling/constrained.h"
#include "g2c_test.h"
#include "one_thread.h"

using g2c::sampling::allowed_token_mask;
using g2c::sampling::generate_json;
using g2c::sampling::GenerateJsonOptions;
using g2c::sampling::JsonPrefixAutomaton;
using g2c::sampling::LogitsModel;
using g2c::sampling::MaskCache;
using g2c::sampling::vocab_pieces;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

// Piece order IS the logit order (descending). The '"' piece outranks everything so greedy closes
// strings immediately; 'x' — the piece a free-running model would love — ranks dead last but is
// still the only letter available, so any hole in the mask surfaces as an 'x' where the grammar
// forbade one.
const std::vector<std::string> kPieces = {"\"", "{", "}", ":", "a", " ", "1", "x"};
const std::vector<float> kLogits = {8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0};

/// Returns the same fixed logits at every position, every step.
class RiggedLM : public LogitsModel {
 public:
  explicit RiggedLM(const std::vector<float>& logits = kLogits)
      : logits_(torch::tensor(logits, torch::kFloat32)) {}
  torch::Tensor forward(const torch::Tensor& ids) override {
    return logits_.view({1, 1, -1}).expand({ids.size(0), ids.size(1), -1});  // (B, T, V)
  }
  std::int64_t max_seq_len() const override { return 64; }
  std::int64_t vocab_size() const override { return logits_.size(0); }
  torch::Device device() const override { return torch::kCPU; }

 private:
  torch::Tensor logits_;
};

std::string continuation_text(const torch::Tensor& full_ids, std::int64_t prompt_len) {
  std::string text;
  for (std::int64_t i = prompt_len; i < full_ids.size(0); ++i) {
    text += kPieces.at(static_cast<std::size_t>(full_ids[i].item<std::int64_t>()));
  }
  return text;
}

// The ids are arbitrary; the model ignores them.
torch::Tensor prompt() {
  return torch::tensor({0, 1, 2}, torch::kLong);
}

/// Just enough tokenizer for vocab_pieces: decode of a one-id list.
struct StubTokenizer {
  std::string decode(const std::vector<std::int64_t>& ids) const {
    return kPieces.at(static_cast<std::size_t>(ids.at(0)));
  }
};

at::Generator seeded(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

std::set<std::int64_t> true_indices(const torch::Tensor& mask) {
  std::set<std::int64_t> out;
  for (std::int64_t i = 0; i < mask.size(0); ++i) {
    if (mask[i].item<bool>()) out.insert(i);
  }
  return out;
}

std::vector<bool> as_bools(const torch::Tensor& mask) {
  std::vector<bool> out;
  for (std::int64_t i = 0; i < mask.size(0); ++i) out.push_back(mask[i].item<bool>());
  return out;
}

}  // namespace

// --- Boilerplate: the automaton is a readable spec of the grammar ------------------------------

TEST_CASE("automaton_accepts_valid_prefixes", "[clean]") {
  const JsonPrefixAutomaton automaton;
  // clang-format off
  for (const std::string prefix : {
           R"({)",
           R"({")",
           R"({"name")",
           R"({"name":)",
           R"({"name": "calc)",
           R"({"name": "calc", "arguments": {"expression": "2 + 2")",
           R"({ "a" : 1 )",
           R"({"n": -12.5)",
           R"({"a": {"b": {"c": "d")",
           R"({"s": "with \"escaped\" quotes)",
           " \n {",  // leading whitespace before the root (within the ration)
       }) {
    // clang-format on
    INFO(prefix);
    CHECK(automaton.advance(automaton.initial(), prefix).has_value());
  }
}

TEST_CASE("automaton_rejects_invalid_prefixes", "[clean]") {
  const JsonPrefixAutomaton automaton;
  for (const std::string bad : {
           R"(x)",        // root must be an object
           R"([)",        // arrays are outside the subset
           R"({,)",       //
           R"({'a')",     // single quotes are not JSON
           R"({"a" 1)",   // missing colon
           R"({"a": })",  //
           R"({"a": .5)"  // numbers need a leading digit
       }) {
    INFO(bad);
    CHECK_FALSE(automaton.advance(automaton.initial(), bad).has_value());
  }
  // A bare minus IS a valid prefix (a digit can follow)...
  CHECK(automaton.advance(automaton.initial(), R"({"a": -)").has_value());
  // ...but it can't be closed without one.
  CHECK_FALSE(automaton.advance(automaton.initial(), R"({"a": -})").has_value());
}

TEST_CASE("automaton_enforces_json_number_rules", "[clean]") {
  const JsonPrefixAutomaton automaton;
  // Leading zeros are not JSON: a parser refuses {"a": 01}, so the automaton must too, or the
  // parse guarantee breaks.
  CHECK_FALSE(automaton.advance(automaton.initial(), R"({"a": 01)").has_value());
  CHECK_FALSE(automaton.advance(automaton.initial(), R"({"a": 1.})").has_value());  // '.' + digit
  CHECK_FALSE(automaton.advance(automaton.initial(), R"({"a": 1.2.)").has_value());
  for (const std::string ok :
       {R"({"a": 0})", R"({"a": 0.5})", R"({"a": -0.5})", R"({"a": 10, "b": 2})"}) {
    INFO(ok);
    const auto state = automaton.advance(automaton.initial(), ok);
    CHECK((state && automaton.is_complete(*state)));
  }
}

TEST_CASE("automaton_rations_whitespace", "[clean]") {
  const JsonPrefixAutomaton automaton;
  // Whitespace between tokens is legal JSON but RATIONED to 3 characters: unbounded runs let a
  // prose model hide in whitespace forever instead of committing to a structural character.
  CHECK(automaton.advance(automaton.initial(), "   {").has_value());
  CHECK_FALSE(automaton.advance(automaton.initial(), "    {").has_value());
  CHECK_FALSE(automaton.advance(automaton.initial(), "{\"a\":\n\n\n\n1}").has_value());
  CHECK(automaton.advance(automaton.initial(), "{\"a\":\n\n\n1}").has_value());
  // Inside strings, spaces are content: no ration applies.
  const auto state = automaton.advance(automaton.initial(), R"({"a": "s p a     c e s"})");
  CHECK((state && automaton.is_complete(*state)));
}

TEST_CASE("automaton_rejects_raw_control_characters_in_strings", "[clean]") {
  const JsonPrefixAutomaton automaton;
  CHECK_FALSE(automaton.advance(automaton.initial(), "{\"a\": \"line\none").has_value());
  CHECK_FALSE(automaton.advance(automaton.initial(), "{\"a\": \"tab\tone").has_value());
  // The escaped forms are fine.
  CHECK(automaton.advance(automaton.initial(), R"({"a": "line\none)").has_value());
}

TEST_CASE("automaton_completion_is_terminal", "[clean]") {
  const JsonPrefixAutomaton automaton;
  const auto state = automaton.advance(automaton.initial(), R"({"name": "calc"})");
  REQUIRE((state && automaton.is_complete(*state)));
  // Nothing at all is allowed after the root closes, not even whitespace. This is what makes
  // constrained generation stop.
  for (const std::string character : {" ", "\n", "{", "}", "x"}) {
    INFO(character);
    CHECK_FALSE(automaton.advance(state, character).has_value());
  }
}

TEST_CASE("automaton_complete_strings_always_parse", "[clean]") {
  const JsonPrefixAutomaton automaton;
  for (const std::string text : {
           R"({})",
           R"({"name": "calc", "arguments": {"expression": "2 + 2"}})",
           R"({ "a" : { "b" : -3.25 } })",
           R"({"s": "esc \\ and \" done"})",
       }) {
    INFO(text);
    const auto state = automaton.advance(automaton.initial(), text);
    CHECK((state && automaton.is_complete(*state)));
    CHECK_NOTHROW(nlohmann::json::parse(text));  // the guarantee the grammar exists to provide
  }
}

TEST_CASE("vocab_pieces_decodes_each_id_once", "[clean]") {
  CHECK(vocab_pieces(StubTokenizer(), static_cast<std::int64_t>(kPieces.size())) == kPieces);
}

// --- Step 1: allowed_token_mask --------------------------------------------------------------

TEST_CASE("mask_allows_exactly_the_grammatical_pieces") {
  const JsonPrefixAutomaton automaton;
  const auto mask = allowed_token_mask(automaton, automaton.initial(), kPieces);
  CHECK(mask.scalar_type() == torch::kBool);
  CHECK(mask.sizes() == torch::IntArrayRef({static_cast<std::int64_t>(kPieces.size())}));
  // At the very start only '{' and whitespace are grammatical.
  CHECK(true_indices(mask) == std::set<std::int64_t>{1, 5});
}

TEST_CASE("mask_rejects_empty_pieces") {
  const JsonPrefixAutomaton automaton;
  const std::vector<std::string> pieces = {"", "{", ""};
  const auto mask = allowed_token_mask(automaton, automaton.initial(), pieces);
  // Empty pieces advance nothing: allowing one is an infinite loop.
  CHECK(as_bools(mask) == std::vector<bool>{false, true, false});
}

TEST_CASE("mask_is_all_false_on_a_complete_state") {
  const JsonPrefixAutomaton automaton;
  const auto state = automaton.advance(automaton.initial(), "{}");
  REQUIRE((state && automaton.is_complete(*state)));
  const auto mask = allowed_token_mask(automaton, *state, kPieces);
  CHECK_FALSE(mask.any().item<bool>());
}

TEST_CASE("mask_checks_multicharacter_pieces_as_units") {
  const JsonPrefixAutomaton automaton;
  const auto state = automaton.advance(automaton.initial(), R"({"name")");
  REQUIRE(state);
  const std::vector<std::string> pieces = {R"(": ")", ": ", "\"", "}", "xy"};
  const auto mask = allowed_token_mask(automaton, *state, pieces);
  // After a closed key: ': ' hops to the value slot in one piece; '": "' would need a second
  // quote; '}' needs a value first.
  CHECK(as_bools(mask) == std::vector<bool>{false, true, false, false, false});
}

// --- Step 2: generate_json -------------------------------------------------------------------

TEST_CASE("greedy_generation_is_forced_grammatical") {
  // The model's favourite token is '"' and its least favourite is 'x', but at step 0 neither is
  // grammatical: the mask forces '{'. Hand-tracing the greedy path through the grammar gives
  // exactly:
  RiggedLM model;
  const auto out = generate_json(model, prompt(), kPieces,
                                 GenerateJsonOptions().max_new_tokens(50).temperature(0.0));
  const auto text = continuation_text(out, prompt().size(0));
  CHECK(text == R"({"":""})");
  CHECK_NOTHROW(nlohmann::json::parse(text));
}

TEST_CASE("generation_stops_when_the_root_object_closes") {
  RiggedLM model;
  const auto out = generate_json(model, prompt(), kPieces,
                                 GenerateJsonOptions().max_new_tokens(50).temperature(0.0));
  // 7 tokens close the object; the rest of the budget must NOT be spent.
  CHECK(out.size(0) == prompt().size(0) + 7);
  CHECK(torch::equal(out.narrow(0, 0, prompt().size(0)), prompt()));
}

TEST_CASE("output_always_parses_or_is_a_valid_prefix") {
  const JsonPrefixAutomaton automaton;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    RiggedLM model;
    const auto out = generate_json(model, prompt(), kPieces,
                                   GenerateJsonOptions()
                                       .max_new_tokens(40)
                                       .temperature(1.5)  // hot: the model WANTS to misbehave
                                       .generator(seeded(seed)));
    const auto text = continuation_text(out, prompt().size(0));
    INFO("seed " << seed << " left the grammar: " << text);
    const auto state = automaton.advance(automaton.initial(), text);
    REQUIRE(state);
    if (automaton.is_complete(*state)) {
      CHECK_NOTHROW(nlohmann::json::parse(text));  // finished -> must parse
    }
  }
}

TEST_CASE("warpers_compose_inside_the_allowed_set") {
  // top_k = 2 AFTER the mask keeps the 2 best *grammatical* tokens. Applied before the mask, the
  // 2 best tokens overall ('"', '{') would both be ungrammatical at many states and softmax would
  // give NaN.
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    RiggedLM model;
    const auto out = generate_json(
        model, prompt(), kPieces,
        GenerateJsonOptions().max_new_tokens(40).temperature(1.0).top_k(2).generator(seeded(seed)));
    const auto text = continuation_text(out, prompt().size(0));
    const JsonPrefixAutomaton automaton;
    INFO("seed " << seed << ": " << text);
    CHECK(automaton.advance(automaton.initial(), text).has_value());
  }
}

TEST_CASE("greedy_mode_still_respects_the_mask") {
  // Greedy bypasses the warpers, but the mask is a constraint, not a warper. The unconstrained
  // greedy choice at step 0 would be '"' (the highest logit); the constrained one must be '{'.
  RiggedLM model;
  const auto out = generate_json(model, prompt(), kPieces,
                                 GenerateJsonOptions().max_new_tokens(1).temperature(0.0));
  CHECK(kPieces.at(static_cast<std::size_t>(out[-1].item<std::int64_t>())) == "{");
}

TEST_CASE("mask_cache_is_consulted_and_shared") {
  // Seeding the cache with an all-false mask for the initial state must halt generation before
  // the first token: proof the cache is authoritative, not advisory.
  const JsonPrefixAutomaton automaton;
  RiggedLM model;
  MaskCache poisoned;
  poisoned.emplace(automaton.initial(),
                   torch::zeros({static_cast<std::int64_t>(kPieces.size())}, torch::kBool));
  INFO(
      "generate_json: look the state's mask up in the cache first (compute and store it only "
      "when missing), and when the mask allows nothing, stop before sampling: a row of -inf "
      "has nothing to sample");
  const auto halted = generate_json(
      model, prompt(), kPieces,
      GenerateJsonOptions().max_new_tokens(10).temperature(0.0).mask_cache(&poisoned));
  CHECK(halted.size(0) == prompt().size(0));  // nothing generated

  // A shared cache across calls must not change outputs (the mask is a pure function of the
  // automaton state) and must fill up.
  MaskCache cache;
  const auto options = GenerateJsonOptions().max_new_tokens(50).temperature(0.0).mask_cache(&cache);
  const auto first = generate_json(model, prompt(), kPieces, options);
  const auto populated = cache.size();
  const auto second = generate_json(model, prompt(), kPieces, options);
  CHECK(torch::equal(first, second));
  CHECK(populated > 0);
  CHECK(cache.size() == populated);
}

TEST_CASE("vocab_pieces_mismatch_raises") {
  RiggedLM model;
  const std::vector<std::string> short_pieces(kPieces.begin(), kPieces.end() - 1);
  CHECK_THROWS_MATCHES(generate_json(model, prompt(), short_pieces,
                                     GenerateJsonOptions().max_new_tokens(5).temperature(0.0)),
                       g2c::ValueError, MessageContains("pieces"));
}

TEST_CASE("prompt_validation") {
  RiggedLM model;
  CHECK_THROWS_AS(generate_json(model, torch::zeros({0}, torch::kLong), kPieces,
                                GenerateJsonOptions().max_new_tokens(5)),
                  g2c::ValueError);
  CHECK_THROWS_AS(generate_json(model, prompt(), kPieces,
                                GenerateJsonOptions().max_new_tokens(5).temperature(-1.0)),
                  g2c::ValueError);
}

TEST_CASE("budget_exhaustion_yields_a_valid_prefix") {
  // Two tokens are not enough to close an object: the result must be truncated but grammatical,
  // never malformed.
  RiggedLM model;
  const auto out = generate_json(model, prompt(), kPieces,
                                 GenerateJsonOptions().max_new_tokens(2).temperature(0.0));
  const auto text = continuation_text(out, prompt().size(0));
  const JsonPrefixAutomaton automaton;
  const auto state = automaton.advance(automaton.initial(), text);
  REQUIRE(state);
  CHECK_FALSE(automaton.is_complete(*state));
}

namespace {
/// RiggedLM with a window of four positions: it records the longest input it was given and, like
/// a real model past its position table, refuses a longer one.
class FourTokenWindowLM : public RiggedLM {
 public:
  torch::Tensor forward(const torch::Tensor& ids) override {
    longest = std::max(longest, ids.size(1));
    if (ids.size(1) > max_seq_len()) throw std::runtime_error("input longer than the window");
    return RiggedLM::forward(ids);
  }
  std::int64_t max_seq_len() const override { return 4; }
  std::int64_t longest = 0;
};
}  // namespace

TEST_CASE("generation_feeds_the_model_at_most_its_window") {
  // A 3-token prompt and 6 new tokens make 9: past the window, only the newest 4 go in. The
  // Python tests' model has a window of 64, which their generations never reach.
  FourTokenWindowLM model;
  INFO(
      "generate_json: each step feeds the model the last model.max_seq_len() ids only (crop "
      "the front of the sequence), as module 11's generate does");
  const auto out = generate_json(model, prompt(), kPieces,
                                 GenerateJsonOptions().max_new_tokens(6).temperature(0.0));
  CHECK(out.size(0) > model.max_seq_len());
  CHECK(model.longest == model.max_seq_len());
}
