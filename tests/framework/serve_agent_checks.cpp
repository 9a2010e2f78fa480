// Module 19's agents on a real model, in this process and over HTTP: SmolLM2-135M-Instruct through
// PretrainedBackend, and the same model served by g2c-serve and read by module 16's OllamaBackend.
// Greedy decoding makes both runs the same run, step for step — which checks that what the agents
// send (the ReAct transcript as a prompt, the native agent's assistant and tool messages) reaches
// the server as it reaches the model here. Skipped, visibly, without the model file.
#include <string>

#include <nlohmann/json.hpp>

#include "g2c/agent/agent.h"
#include "g2c/agent/native.h"
#include "g2c/inference/ollama.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/pretrained/catalog.h"
#include "g2c/tools/tools.h"
#include "g2c_test.h"
#include "running_server.h"

namespace {

const char* kName = "SmolLM2-135M-Instruct";
const char* kTask = "What is 135 - 85?";

/// The parts of two runs that must agree: each step's completion, action and observation, and how
/// the run ended.
void check_same_run(const g2c::agent::AgentRunResult& a, const g2c::agent::AgentRunResult& b) {
  CHECK(a.stopped_reason == b.stopped_reason);
  CHECK(a.final_answer == b.final_answer);
  REQUIRE(a.steps.size() == b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    INFO("step " << i);
    CHECK(a.steps[i].completion == b.steps[i].completion);
    CHECK(a.steps[i].action == b.steps[i].action);
    CHECK(a.steps[i].observation == b.steps[i].observation);
    CHECK(a.steps[i].parse_error == b.steps[i].parse_error);
  }
}

}  // namespace

TEST_CASE("agents_over_g2c_serve_take_the_steps_they_take_in_process", "[agent]") {
  if (const auto missing = g2c_test::missing_pretrained_model(kName); !missing.empty()) {
    G2C_SKIP(missing);
  }
  g2c_test::RunningServer running;
  g2c::inference::OllamaBackend remote(
      kName, g2c::inference::OllamaOptions().with_base_url(running.url()));
  auto local = g2c::inference::PretrainedBackend::load(
      kName, g2c::pretrained::LoadOptions().packed(true),
      g2c::inference::PretrainedBackendOptions().with_tool_choice(
          g2c::inference::ToolChoice::Required));
  const g2c::tools::ToolRegistry registry({g2c::tools::make_calculator()});
  auto sampling = g2c::inference::CompletionOptions().with_temperature(0).with_max_new_tokens(40);
  // What g2c-serve applies to a request in Ollama's protocol that leaves them unsaid (the remote
  // backend sends the four sampling settings only).
  sampling.extras = g2c::inference::GenerationExtras::ollama_defaults();

  SECTION("the ReAct agent") {
    g2c::agent::AgentOptions options{.max_steps = 3, .plan = false, .sampling = sampling};
    const auto over_http = g2c::agent::Agent(remote, registry, options).run(kTask);
    const auto here = g2c::agent::Agent(local, registry, options).run(kTask);
    REQUIRE_FALSE(here.steps.empty());
    check_same_run(over_http, here);
  }
  SECTION("the native agent: a call decoded under the schema, then the answer after its result") {
    g2c::agent::NativeAgentOptions options;
    options.max_steps = 3;
    options.plan = false;
    options.sampling = sampling;
    const auto over_http = g2c::agent::NativeAgent(remote, registry, options).run(kTask);
    const auto here = g2c::agent::NativeAgent(local, registry, options).run(kTask);
    REQUIRE_FALSE(here.steps.empty());
    REQUIRE(here.steps[0].action.has_value());
    CHECK(here.steps[0].action->tool() == "calculator");
    REQUIRE(here.steps[0].observation.has_value());
    CHECK_FALSE(here.steps[0].observation->is_error());
    check_same_run(over_http, here);
    CHECK(over_http.metadata["channel"] == "native");
  }
}
