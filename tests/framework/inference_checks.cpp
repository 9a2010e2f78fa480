// Framework checks of module 16's backend over the pretrained model (g2c/inference/
// pretrained_backend.h), on the real SmolLM2-135M-Instruct file (skipped, visibly, without it):
// the chat template's answer the course tests know, the same answer from the float32 and the
// packed weights, raw continuation, the benchmark over it, and what it refuses (tool names a model
// cannot spell among them).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "g2c/core/errors.h"
#include "g2c/inference/benchmark.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c_test.h"

using Catch::Matchers::Contains;
using g2c::inference::CompletionOptions;
using g2c::inference::PretrainedBackend;
using g2c::inference::PretrainedBackendOptions;

namespace {

const char* kName = "SmolLM2-135M-Instruct";

// Why the checks cannot run here ("" when the model file is there).
std::string missing_model() {
  try {
    g2c::pretrained::pretrained_model_file(kName);  // ValueError naming the fix when missing
    return "";
  } catch (const g2c::ValueError& error) {
    return error.what();
  }
}

// The backend over the real file, packed or float32.
PretrainedBackend smol(bool packed, PretrainedBackendOptions options = {}) {
  return PretrainedBackend::load(kName, g2c::pretrained::LoadOptions().packed(packed), options);
}

CompletionOptions greedy(std::int64_t tokens) {
  return CompletionOptions().with_temperature(0).with_max_new_tokens(tokens);
}

}  // namespace

TEST_CASE("pretrained_backend_answers_in_the_chat_template", "[inference]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  for (const bool packed : {true, false}) {
    auto backend = smol(packed);
    INFO((packed ? "packed" : "float32"));
    CHECK(backend.info().name() == "pretrained");
    CHECK(backend.info().model_id() == kName);
    CHECK(backend.info().extra()["weights"] == (packed ? "packed" : "float32"));
    CHECK(backend.info().extra()["parameters"] == 134515008);
    const auto result = backend.complete("What is the capital of France?", greedy(32));
    CHECK(result.completion == "The capital of France is Paris.");
    CHECK(result.prompt_tokens == 37);  // the question inside SmolLM2's ChatML template
    CHECK(result.completion_tokens == 7);
    CHECK(result.metadata["template"] == "chatml");
    CHECK(result.metadata["stopped"] == true);
    CHECK(result.metadata["sampling"]["temperature"] == 0.0);
    CHECK(result.tokens_per_second().has_value());
  }
}

TEST_CASE("pretrained_backend_raw_continues_the_text", "[inference]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  auto backend = smol(true, PretrainedBackendOptions().with_raw(true));
  const auto result = backend.complete("The capital of France is", greedy(4));
  CHECK(result.metadata["template"] == "raw");
  CHECK(result.prompt_tokens == 5);  // no template around the prompt
  CHECK(result.completion_tokens == 4);
  CHECK_FALSE(result.completion.empty());
}

TEST_CASE("benchmark_over_the_pretrained_backend", "[inference]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  auto backend = smol(true);
  const auto result =
      g2c::inference::benchmark(backend, {"Name a colour.", "Name a fruit.", "Name a planet."},
                                greedy(8), {{"suite", "one-word answers"}});
  CHECK(result.n == 3);
  CHECK(result.backend.name() == "pretrained");
  REQUIRE(result.completion_tokens_total.has_value());
  CHECK(*result.completion_tokens_total > 0);
  CHECK(result.latency_ms_p50 <= result.latency_ms_p90);
  CHECK(result.tokens_per_second_overall.value() > 0);
  CHECK(result.metadata["suite"] == "one-word answers");
}

TEST_CASE("pretrained_backend_refuses_what_it_cannot_answer", "[inference]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  auto backend = smol(true);
  CHECK_THROWS_WITH(backend.complete("", greedy(4)), Contains("empty"));
  CHECK_THROWS_WITH(backend.complete("Hi", greedy(0)), Contains("max_new_tokens"));
  std::string long_prompt;
  for (int i = 0; i < 9000; ++i) long_prompt += " word";
  CHECK_THROWS_WITH(backend.complete(long_prompt, greedy(4)), Contains("context 8192"));
  CHECK_THROWS_AS(PretrainedBackend(nullptr), g2c::ValueError);
}

TEST_CASE("pretrained_backend_refuses_tool_names_a_model_cannot_spell", "[inference]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  // Two names that share the prefix q": spelling under a mask of the names ends at the quote and
  // names no tool. Refused before decoding, for the constrained backend and the free one alike.
  const auto tool = [](const std::string& name) {
    return nlohmann::json{{"type", "function"},
                          {"function",
                           {{"name", name},
                            {"parameters",
                             {{"type", "object"},
                              {"properties", {{"x", {{"type", "string"}}}}},
                              {"required", {"x"}}}}}}};
  };
  const nlohmann::json messages = {{{"role", "user"}, {"content", "call q"}}};
  for (const auto choice :
       {g2c::inference::ToolChoice::Required, g2c::inference::ToolChoice::Auto}) {
    auto backend = smol(true, PretrainedBackendOptions().with_tool_choice(choice));
    const nlohmann::json tools = {tool("q\"\x01"), tool("q\"\x02")};
    CHECK_THROWS_AS(backend.chat_with_tools(messages, tools, {}), g2c::ValueError);
    CHECK_THROWS_WITH(backend.chat_with_tools(messages, nlohmann::json::array({tool("a b")}), {}),
                      Contains("1 to 64 letters"));
  }
}

TEST_CASE("pretrained_backend_streams_the_reply_it_returns", "[inference]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  auto backend = smol(true);
  std::vector<std::string> pieces;
  const auto result = backend.complete(
      "What is the capital of France?",
      greedy(32).with_on_text([&](std::string_view piece) { pieces.emplace_back(piece); }));
  CHECK(result.completion == "The capital of France is Paris.");
  // One piece a token (7, the end token not among them), and together the reply.
  CHECK(static_cast<std::int64_t>(pieces.size()) == result.completion_tokens);
  std::string joined;
  for (const auto& piece : pieces) {
    CHECK_FALSE(piece.empty());
    joined += piece;
  }
  CHECK(joined == result.completion);
  // Streaming changes what is seen, not what is generated.
  CHECK(backend.complete("What is the capital of France?", greedy(32)).completion ==
        result.completion);
}
