// Module 18's native channel over HTTP: g2c-serve's /api/chat with "tools" (a call decoded under
// the calculator's schema by SmolLM2-135M-Instruct), read by module 16's OllamaBackend, against the
// same turn in this process; then a whole run_with_tools over the server; and a LoRA adapter served
// beside its base under its own name. Skipped, visibly, without the model file.
#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/inference/ollama.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/inference/server.h"
#include "g2c/pretrained/catalog.h"
#include "g2c/pretrained/lora.h"
#include "g2c/tools/tools.h"
#include "g2c_test.h"
#include "running_server.h"
#include "temp_dir.h"

using g2c::inference::ChatOptions;
using json = nlohmann::json;

namespace {

const char* kName = "SmolLM2-135M-Instruct";

std::string missing_model() {
  return g2c_test::missing_pretrained_model(kName);
}

// SmolLM2 through g2c-serve's /api/chat, and the same model in this process with calls decoded
// under the tools' schemas, as the server makes them.
g2c::inference::OllamaBackend served_smollm2(const g2c_test::RunningServer& running) {
  return g2c::inference::OllamaBackend(
      kName, g2c::inference::OllamaOptions().with_base_url(running.url()));
}

g2c::inference::PretrainedBackend in_process_smollm2() {
  return g2c::inference::PretrainedBackend::load(
      kName, g2c::pretrained::LoadOptions().packed(true),
      g2c::inference::PretrainedBackendOptions().with_tool_choice(
          g2c::inference::ToolChoice::Required));
}

}  // namespace

TEST_CASE("serve_answers_a_tool_turn_with_the_call_made_in_process", "[tools]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  g2c_test::RunningServer running;
  auto remote = served_smollm2(running);
  auto local = in_process_smollm2();
  const auto tools = g2c::tools::render_tools_for_ollama({g2c::tools::make_calculator()});
  const json messages = json::array({{{"role", "user"}, {"content", "What is 135 - 85?"}}});
  const auto options = ChatOptions().with_temperature(0).with_max_new_tokens(24);

  const auto served = remote.chat_with_tools(messages, tools, options);
  const auto in_process = local.chat_with_tools(messages, tools, options);
  REQUIRE(served.tool_calls.size() == 1);
  CHECK(served.tool_calls[0]["name"] == "calculator");
  CHECK(served.tool_calls[0]["arguments"].is_object());
  CHECK(served.tool_calls[0]["arguments"]["expression"].is_string());
  REQUIRE(in_process.tool_calls.size() == 1);
  CHECK(served.tool_calls[0]["arguments"] == in_process.tool_calls[0]["arguments"]);

  // A whole native run over HTTP: the call, the calculator, the answer after its result, as in
  // this process.
  const g2c::tools::ToolRegistry registry({g2c::tools::make_calculator()});
  g2c::tools::RunWithToolsOptions loop;
  loop.max_steps = 2;
  loop.sampling = g2c::inference::CompletionOptions().with_temperature(0).with_max_new_tokens(24);
  // What g2c-serve applies to a request in Ollama's protocol that leaves them unsaid.
  loop.sampling.extras = g2c::inference::GenerationExtras::ollama_defaults();
  const auto over_http = g2c::tools::run_with_tools(remote, registry, "What is 135 - 85?", loop);
  const auto here = g2c::tools::run_with_tools(local, registry, "What is 135 - 85?", loop);
  CHECK(over_http.metadata["channel"] == "native");
  REQUIRE_FALSE(over_http.steps.empty());
  REQUIRE(over_http.steps[0].tool_results.size() == 1);
  CHECK(over_http.steps[0].tool_results[0].output() ==
        here.steps.at(0).tool_results.at(0).output());
  CHECK(over_http.final_answer == here.final_answer);
  CHECK(over_http.steps.size() == here.steps.size());

  // Tools that are not a list are refused, by name.
  auto client = running.client();
  const auto bad = client.Post(
      "/api/chat",
      json{{"model", kName}, {"messages", messages}, {"tools", "calculator"}, {"stream", false}}
          .dump(),
      "application/json");
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK_THAT(bad->body, Catch::Matchers::Contains("tools"));
}

TEST_CASE("a_reply_streams_over_http_as_it_does_in_process", "[tools]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  g2c_test::RunningServer running;
  auto remote = served_smollm2(running);
  auto local = in_process_smollm2();
  const json question =
      json::array({{{"role", "user"}, {"content", "What is the capital of France?"}}});
  std::vector<std::string> pieces;
  const auto watched = ChatOptions().with_temperature(0).with_max_new_tokens(24).with_on_text(
      [&](std::string_view piece) { pieces.emplace_back(piece); });
  const auto joined = [&] {
    std::string text;
    for (const auto& piece : pieces) text += piece;
    return text;
  };

  // A text reply: token by token in this process, line by line over /api/chat's stream, the same
  // words either way, and the same as without watching.
  const auto here = local.chat_with_tools(question, json::array(), watched);
  CHECK(here.content == "The capital of France is Paris.");
  CHECK(pieces.size() > 1);
  CHECK(joined() == here.content);
  pieces.clear();
  const auto over_http = remote.chat_with_tools(question, json::array(), watched);
  CHECK(over_http.content == here.content);
  CHECK(pieces.size() > 1);
  CHECK(joined() == over_http.content);
  CHECK(over_http.completion_tokens == here.completion_tokens);  // the stream's done line
  pieces.clear();
  CHECK(remote.chat_with_tools(question, json::array(), ChatOptions(watched).with_on_text({}))
            .content == here.content);
  CHECK(pieces.empty());

  // A call decoded under the schema is a call, not words: nothing is streamed, either way.
  const auto tools = g2c::tools::render_tools_for_ollama({g2c::tools::make_calculator()});
  const json sum = json::array({{{"role", "user"}, {"content", "What is 135 - 85?"}}});
  const auto call_here = local.chat_with_tools(sum, tools, watched);
  const auto call_over_http = remote.chat_with_tools(sum, tools, watched);
  REQUIRE(call_here.tool_calls.size() == 1);
  REQUIRE(call_over_http.tool_calls.size() == 1);
  CHECK(call_over_http.tool_calls[0]["arguments"] == call_here.tool_calls[0]["arguments"]);
  CHECK(pieces.empty());
}

TEST_CASE("serve_offers_a_base_model_with_an_adapter_under_its_own_name", "[tools]") {
  if (const auto missing = missing_model(); !missing.empty()) G2C_SKIP(missing);
  // An adapter that changes the model a little (random B), trained on nothing.
  auto dense = g2c::pretrained::load_pretrained_model(kName);
  g2c::pretrained::LlamaLoRA lora(dense.model,
                                  g2c::pretrained::LlamaLoRAOptions(2).targets({"q", "v"}));
  {
    torch::NoGradGuard no_grad;
    torch::manual_seed(0);
    for (auto& parameter : lora->parameters()) parameter.normal_(0.0, 0.15);
  }
  g2c::testing::TempDir dir;
  const auto path = dir / "adapter.pt";
  g2c::pretrained::save_llama_adapter(
      path, g2c::pretrained::adapter_of(*lora, "SmolLM2-noisy", kName, {{"data", "none"}}));

  g2c::inference::ServerOptions options;
  options.adapters = {path};
  g2c_test::RunningServer running(options);
  auto client = running.client();
  const auto tags = json::parse(client.Get("/api/tags")->body);
  std::vector<std::string> names;
  for (const auto& model : tags["models"]) {
    names.push_back(model["name"]);
    if (model["name"] == "SmolLM2-noisy:latest") {
      CHECK(model["details"]["parent_model"] == std::string(kName) + ":latest");
      CHECK(model["size"].get<std::int64_t>() >
            static_cast<std::int64_t>(std::filesystem::file_size(path)));
    }
  }
  CHECK(std::find(names.begin(), names.end(), "SmolLM2-noisy:latest") != names.end());
  CHECK(std::find(names.begin(), names.end(), std::string(kName) + ":latest") != names.end());

  // The served adapter answers as the same adapter applied in this process, token for token.
  g2c::inference::OllamaBackend remote(
      "smollm2-noisy", g2c::inference::OllamaOptions().with_base_url(running.url()));
  auto local = g2c::inference::PretrainedBackend::load(
      kName, g2c::pretrained::LoadOptions().packed(true), {}, path);
  CHECK(local.info().model_id() == "SmolLM2-noisy");
  const json messages = json::array({{{"role", "user"}, {"content", "Name a colour."}}});
  auto options_chat = ChatOptions().with_temperature(0).with_max_new_tokens(12);
  options_chat.extras = g2c::inference::GenerationExtras::ollama_defaults();
  const auto served = remote.chat_with_tools(messages, json::array(), options_chat);
  const auto in_process = local.chat_with_tools(messages, json::array(), options_chat);
  CHECK(served.content == in_process.content);
  const auto base = g2c::inference::PretrainedBackend::load(kName).chat_with_tools(
      messages, json::array(), options_chat);
  INFO("base: " << base.content << " / adapted: " << in_process.content);
  CHECK(served.content != base.content);

  // Refused at start, by name: a base the server does not have, a name it already serves, a
  // damaged file.
  auto foreign = g2c::pretrained::adapter_of(*lora, "Other-noisy", "SmolLM2-9B", {});
  g2c::pretrained::save_llama_adapter(dir / "foreign.pt", foreign);
  g2c::inference::ServerOptions bad;
  bad.adapters = {dir / "foreign.pt"};
  CHECK_THROWS_WITH(g2c::inference::Server(bad), Catch::Contains("adapts SmolLM2-9B"));
  g2c::pretrained::save_llama_adapter(dir / "clash.pt",
                                      g2c::pretrained::adapter_of(*lora, kName, kName, {}));
  bad.adapters = {dir / "clash.pt"};
  CHECK_THROWS_WITH(g2c::inference::Server(bad), Catch::Contains("already serves"));
  std::filesystem::resize_file(dir / "clash.pt", 100);
  CHECK_THROWS_WITH(g2c::inference::Server(bad), Catch::Contains("clash.pt"));
}
