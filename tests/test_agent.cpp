// Module 19 course tests: the agent (g2c/agent), one for one with the Python edition's
// tests/test_agent.py — its records, parse_react_step, extract_plan and make_plan, the scratchpad,
// the prompts, the ReAct agent and its policy, the native agent — then this edition's additions.
// Each test is named "<Class>::<name>" (the Python method without "test_"). Suggested order, as
// the Python file suggests it: parse_react_step (TestParseReactStep*), extract_plan
// (TestExtractPlan*, TestMakePlan), Scratchpad::render (TestScratchpadRender,
// TestScratchpadTruncation), then Agent::decide_step (TestDecideStep, then TestAgentRun*,
// TestIntegrationSmoke). Tests tagged [clean] pass on the scaffold. Scripted backends (canned
// completions or chat replies, every call kept) stand in for a model.
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_backends.h"
#include "g2c/agent/agent.h"
#include "g2c/agent/native.h"
#include "g2c/core/errors.h"
#include "g2c/inference/backend.h"
#include "g2c/tools/tools.h"
#include "g2c_test.h"

using Catch::Matchers::Contains;
using g2c::agent::Action;
using g2c::agent::Agent;
using g2c::agent::AgentError;
using g2c::agent::AgentOptions;
using g2c::agent::AgentRunResult;
using g2c::agent::AgentStep;
using g2c::agent::DEFAULT_AGENT_SYSTEM;
using g2c::agent::DEFAULT_PLANNING_PROMPT;
using g2c::agent::extract_plan;
using g2c::agent::make_plan;
using g2c::agent::NATIVE_DEFAULT_AGENT_SYSTEM;
using g2c::agent::NativeAgent;
using g2c::agent::NativeAgentOptions;
using g2c::agent::Observation;
using g2c::agent::parse_react_step;
using g2c::agent::ParsedStep;
using g2c::agent::Plan;
using g2c::agent::render_plan_block;
using g2c::agent::render_planning_prompt;
using g2c::agent::render_system_prompt;
using g2c::agent::Scratchpad;
using g2c::inference::BackendInfo;
using g2c::inference::InferenceResult;
using g2c::tools::Tool;
using g2c::tools::ToolRegistry;
using Json = nlohmann::json;
using g2c::testing::FakeBackend;
using g2c::testing::FakeChatBackend;

namespace {

Tool echo_tool() {
  return Tool("echo", "Echo the argument back.",
              {{"type", "object"},
               {"properties", {{"text", {{"type", "string"}, {"description", "Text to echo."}}}}},
               {"required", {"text"}}},
              [](const Json& arguments) -> Json {
                return "echo: " + arguments.at("text").get<std::string>();
              });
}

Tool broken_tool() {
  return Tool(
      "broken", "Always raises ValueError.",
      {{"type", "object"},
       {"properties", {{"x", {{"type", "string"}, {"description", "ignored"}}}}},
       {"required", {"x"}}},
      [](const Json& arguments) -> Json {
        throw g2c::ValueError("intentional failure: " + arguments.at("x").get<std::string>());
      });
}

using Replies = std::vector<FakeChatBackend::Reply>;

ToolRegistry calculator_registry() {
  return ToolRegistry({g2c::tools::make_calculator()});
}

Json calculator_call(const std::string& expression) {
  return {{"name", "calculator"}, {"arguments", {{"expression", expression}}}};
}

NativeAgentOptions native_options(const AgentOptions& agent) {
  NativeAgentOptions options;
  static_cast<AgentOptions&>(options) = agent;
  return options;
}

/// The Python tests' _policy_agent: an agent with the calculator, for decide_step alone (the
/// backend is never called).
Agent policy_agent(FakeBackend& backend, AgentOptions options = {}) {
  options.plan = false;
  return Agent(backend, calculator_registry(), options);
}

/// The Python tests' _inf: a minimal InferenceResult for driving decide_step.
InferenceResult inference_of(const std::string& completion = "") {
  return InferenceResult("prompt", completion, 1, 1, 1.0, BackendInfo("fake", "fake-model"));
}

template <typename Message>
constexpr bool runs = requires(const Agent& agent, Message message) {
  agent.run(message);
};

/// The Python tests' _make_step: an AgentStep with a minimal InferenceResult.
struct StepFields {
  std::string completion = "";
  std::string thought = "";
  std::optional<Action> action = std::nullopt;
  std::optional<Observation> observation = std::nullopt;
  std::optional<std::string> final_answer = std::nullopt;
  std::optional<std::string> parse_error = std::nullopt;
};

AgentStep make_step(StepFields fields) {
  return AgentStep{
      fields.completion,
      fields.thought,
      std::move(fields.action),
      std::move(fields.observation),
      std::move(fields.final_answer),
      std::move(fields.parse_error),
      InferenceResult("prompt", fields.completion, 1, 1, 1.0, BackendInfo("fake", "fake-model"))};
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

template <typename Text>
constexpr bool parses = requires(Text text) {
  parse_react_step(text);
};
template <typename Text>
constexpr bool extracts = requires(Text text) {
  extract_plan(text, "task");
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// The records — provided.

TEST_CASE("TestActionBoilerplate::construction", "[clean]") {
  const Action a("calculator", {{"expression", "2+2"}});
  CHECK(a.tool() == "calculator");
  CHECK(a.arguments() == Json{{"expression", "2+2"}});
}

TEST_CASE("TestActionBoilerplate::frozen", "[clean]") {
  STATIC_REQUIRE(std::is_const_v<std::remove_reference_t<decltype(Action("c", {}).tool())>>);
  STATIC_REQUIRE(std::is_const_v<std::remove_reference_t<decltype(Action("c", {}).arguments())>>);
  CHECK(Action("calc", Json::object()).tool() == "calc");
}

TEST_CASE("TestActionBoilerplate::equality", "[clean]") {
  CHECK(Action("calc", {{"x", 1}}) == Action("calc", {{"x", 1}}));
  CHECK_FALSE(Action("calc", {{"x", 1}}) == Action("calc", {{"x", 2}}));
}

TEST_CASE("TestObservationBoilerplate::default_is_not_error", "[clean]") {
  const Observation o("ok");
  CHECK(o.output() == "ok");
  CHECK_FALSE(o.is_error());
}

TEST_CASE("TestObservationBoilerplate::error_flag", "[clean]") {
  CHECK(Observation("boom", true).is_error());
}

TEST_CASE("TestPlanBoilerplate::construction", "[clean]") {
  const Plan p("solve task", {"step a", "step b"});
  CHECK(p.goal() == "solve task");
  CHECK(p.steps() == std::vector<std::string>{"step a", "step b"});
}

TEST_CASE("TestPlanBoilerplate::default_steps_empty", "[clean]") {
  CHECK(Plan("just a goal").steps().empty());
}

TEST_CASE("TestPlanBoilerplate::empty_goal_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(Plan("", {"a"}), AgentError, MessageContains("goal"));
}

TEST_CASE("TestPlanBoilerplate::non_str_goal_rejected", "[clean]") {
  // A goal that is not a string does not compile.
  STATIC_REQUIRE_FALSE(std::is_constructible_v<Plan, int, std::vector<std::string>>);
  STATIC_REQUIRE(std::is_constructible_v<Plan, std::string, std::vector<std::string>>);
}

TEST_CASE("TestPlanBoilerplate::non_list_steps_rejected", "[clean]") {
  STATIC_REQUIRE_FALSE(std::is_constructible_v<Plan, std::string, std::string>);
}

TEST_CASE("TestPlanBoilerplate::empty_step_rejected", "[clean]") {
  CHECK_THROWS_MATCHES(Plan("g", {"valid", ""}), AgentError, MessageContains("steps[1]"));
}

TEST_CASE("TestPlanBoilerplate::non_str_step_rejected", "[clean]") {
  STATIC_REQUIRE_FALSE(std::is_constructible_v<Plan, std::string, std::vector<int>>);
}

TEST_CASE("TestAgentStepBoilerplate::construction", "[clean]") {
  const auto s = make_step({.thought = "x", .final_answer = "42"});
  CHECK(s.thought == "x");
  CHECK(s.final_answer == "42");
  CHECK_FALSE(s.action.has_value());
  CHECK_FALSE(s.observation.has_value());
  CHECK_FALSE(s.parse_error.has_value());
}

TEST_CASE("TestAgentRunResultBoilerplate::construction", "[clean]") {
  const AgentRunResult r{"hi", std::nullopt, "hello", {}, "final_answer"};
  CHECK(r.user_message == "hi");
  CHECK(r.final_answer == "hello");
  CHECK(r.metadata == Json::object());
}

TEST_CASE("TestAgentRunResultBoilerplate::metadata_default_factory", "[clean]") {
  AgentRunResult r1{"a", std::nullopt, std::nullopt, {}, "max_steps"};
  const AgentRunResult r2{"b", std::nullopt, std::nullopt, {}, "max_steps"};
  r1.metadata["foo"] = 1;
  CHECK_FALSE(r2.metadata.contains("foo"));
}

TEST_CASE("TestParsedStepBoilerplate::construction", "[clean]") {
  const ParsedStep p("x", Action("t", Json::object()), std::nullopt, std::nullopt);
  CHECK(p.thought() == "x");
  REQUIRE(p.action().has_value());
  CHECK(p.action()->tool() == "t");
}

// ---------------------------------------------------------------------------------------------
// parse_react_step — yours.

TEST_CASE("TestParseReactStep::final_answer_only") {
  const auto p = parse_react_step("Final Answer: 42");
  INFO(
      "parse_react_step: the Final Answer is react_field's text with its whitespace stripped "
      "(strip_whitespace), and it is an answer only when something is left");
  CHECK(p.final_answer() == "42");
  CHECK_FALSE(p.action().has_value());
  CHECK_FALSE(p.parse_error().has_value());
  CHECK(p.thought().empty());
}

TEST_CASE("TestParseReactStep::thought_plus_final_answer") {
  const auto p = parse_react_step("Thought: easy\nFinal Answer: 4");
  CHECK(p.thought() == "easy");
  CHECK(p.final_answer() == "4");
  CHECK_FALSE(p.action().has_value());
  CHECK_FALSE(p.parse_error().has_value());
}

TEST_CASE("TestParseReactStep::thought_plus_action") {
  const auto p = parse_react_step(
      "Thought: I need to compute this\nAction: calculator\n"
      R"(Action Input: {"expression": "2+2"})");
  CHECK(p.thought() == "I need to compute this");
  REQUIRE(p.action().has_value());
  CHECK(p.action()->tool() == "calculator");
  CHECK(p.action()->arguments() == Json{{"expression", "2+2"}});
  CHECK_FALSE(p.final_answer().has_value());
  CHECK_FALSE(p.parse_error().has_value());
}

TEST_CASE("TestParseReactStep::action_only_no_thought") {
  const auto p = parse_react_step("Action: echo\nAction Input: {\"text\": \"hi\"}");
  CHECK(p.thought().empty());
  REQUIRE(p.action().has_value());
  CHECK(p.action()->tool() == "echo");
  CHECK(p.action()->arguments() == Json{{"text", "hi"}});
}

TEST_CASE("TestParseReactStep::final_answer_wins_over_action") {
  const auto p = parse_react_step(
      "Thought: I have an answer\nAction: calculator\n"
      "Action Input: {\"expression\": \"2+2\"}\nFinal Answer: 4");
  CHECK_FALSE(p.action().has_value());
  CHECK(p.final_answer() == "4");
  CHECK_FALSE(p.parse_error().has_value());
}

TEST_CASE("TestParseReactStep::multiline_action_input") {
  const auto p = parse_react_step("Action: echo\nAction Input: {\n  \"text\": \"hi\"\n}");
  REQUIRE(p.action().has_value());
  CHECK(p.action()->arguments() == Json{{"text", "hi"}});
}

TEST_CASE("TestParseReactStep::returns_parsedstep") {
  STATIC_REQUIRE(std::is_same_v<decltype(parse_react_step("x")), ParsedStep>);
  CHECK(parse_react_step("Final Answer: x").final_answer() == "x");
}

TEST_CASE("TestParseReactStep::type_error_on_non_str", "[clean]") {
  // Python raises TypeError for 123; here a number or a null pointer does not compile.
  STATIC_REQUIRE_FALSE(parses<int>);
  STATIC_REQUIRE_FALSE(parses<std::nullptr_t>);
  STATIC_REQUIRE(parses<std::string>);
}

TEST_CASE("TestParseReactStepEdgeCases::no_structure_is_parse_error") {
  const auto p = parse_react_step("I don't know what to do.");
  CHECK_FALSE(p.action().has_value());
  CHECK_FALSE(p.final_answer().has_value());
  CHECK(p.parse_error().has_value());
}

TEST_CASE("TestParseReactStepEdgeCases::action_without_action_input_is_error") {
  const auto p = parse_react_step("Action: calculator");
  CHECK_FALSE(p.action().has_value());
  REQUIRE(p.parse_error().has_value());
  CHECK_THAT(*p.parse_error(), Contains("Action Input"));
}

TEST_CASE("TestParseReactStepEdgeCases::action_input_invalid_json_is_error") {
  INFO(
      "parse_react_step: a model's bad JSON is a ParsedStep with a parse_error, never an "
      "exception: catch nlohmann::json::parse_error around the parse");
  const auto p = parse_react_step("Action: calculator\nAction Input: {not valid json}");
  CHECK_FALSE(p.action().has_value());
  REQUIRE(p.parse_error().has_value());
  CHECK_THAT(*p.parse_error(), Contains("JSON"));
}

TEST_CASE("TestParseReactStepEdgeCases::action_input_non_dict_is_error") {
  const auto p = parse_react_step("Action: calculator\nAction Input: [1, 2, 3]");
  CHECK_FALSE(p.action().has_value());
  REQUIRE(p.parse_error().has_value());
  CHECK_THAT(*p.parse_error(), Contains("object"));
}

TEST_CASE("TestParseReactStepEdgeCases::empty_final_answer_treated_as_no_answer") {
  const auto p = parse_react_step("Final Answer:   ");
  CHECK_FALSE(p.final_answer().has_value());
  CHECK(p.parse_error().has_value());
}

TEST_CASE("TestParseReactStepEdgeCases::code_fenced_action_input_tolerated") {
  const auto p = parse_react_step(
      "Action: calculator\nAction Input:\n```json\n{\"expression\": \"1+1\"}\n```");
  INFO(
      "parse_react_step: take the Action Input out of its Markdown fence (strip_code_fences) "
      "before parsing it as JSON; parse_error was: "
      << p.parse_error().value_or("(none)"));
  REQUIRE(p.action().has_value());
  CHECK(p.action()->arguments() == Json{{"expression", "1+1"}});
}

TEST_CASE("TestParseReactStepEdgeCases::trailing_period_on_action_name_stripped") {
  const auto p = parse_react_step("Action: calculator.\nAction Input: {\"expression\": \"2+2\"}");
  REQUIRE(p.action().has_value());
  CHECK(p.action()->tool() == "calculator");
}

TEST_CASE("TestParseReactStepEdgeCases::case_insensitive_markers") {
  const auto p = parse_react_step("thought: hmm\nfinal answer: 7");
  CHECK(p.thought() == "hmm");
  CHECK(p.final_answer() == "7");
}

TEST_CASE("TestParseReactStepEdgeCases::extra_whitespace_around_colons") {
  const auto p = parse_react_step("Thought : hello\nFinal Answer  :  world");
  CHECK(p.thought() == "hello");
  CHECK(p.final_answer() == "world");
}

TEST_CASE("TestParseReactStepEdgeCases::thought_does_not_eat_next_marker") {
  const auto p = parse_react_step("Thought: first\nAction: echo\nAction Input: {\"text\": \"x\"}");
  CHECK(p.thought() == "first");
  CHECK(p.action().has_value());
}

TEST_CASE("TestParseReactStepEdgeCases::prose_around_markers_tolerated") {
  const auto p = parse_react_step(
      "Let me think about this.\nThought: I should call calculator.\nAction: calculator\n"
      "Action Input: {\"expression\": \"1+1\"}");
  REQUIRE(p.action().has_value());
  CHECK(p.action()->tool() == "calculator");
}

TEST_CASE("TestParseReactStepEdgeCases::empty_action_name_is_error") {
  const auto p = parse_react_step("Action:   \nAction Input: {}");
  CHECK_FALSE(p.action().has_value());
  REQUIRE(p.parse_error().has_value());
  CHECK_THAT(*p.parse_error(), Contains("empty"));
}

// This edition's additions.

TEST_CASE("an_action_named_inside_the_thought_is_not_the_action", "[clean]") {
  // Markers count at the start of a line (react_field, provided): the tool is the one on the
  // Action line, not the word after "Action:" in the middle of the thought.
  const std::string text =
      "Thought: my plan is Action: calculator, but first the file\nAction: read_file\n"
      "Action Input: {\"path\": \"notes.md\"}";
  CHECK(g2c::agent::react_field(text, g2c::agent::ReactMarker::Action) == " read_file");
  CHECK(g2c::agent::strip_whitespace(
            *g2c::agent::react_field(text, g2c::agent::ReactMarker::Thought)) ==
        "my plan is Action: calculator, but first the file");
}

TEST_CASE("parse_react_step_reports_each_missing_half_by_name") {
  CHECK_THAT(parse_react_step("Action Input: {\"x\": 1}").parse_error().value_or(""),
             Contains("Action missing"));
  CHECK_THAT(parse_react_step("Action: calculator").parse_error().value_or(""),
             Contains("'calculator'"));
  CHECK_THAT(parse_react_step("nothing here").parse_error().value_or(""), Contains("Final Answer"));
}

// Models end a name with more than a period ("calculator:", "calculator,"); the Python test tries
// the period alone.
TEST_CASE("parse_react_step_strips_every_trailing_punctuation_mark_from_the_tool_name") {
  INFO(
      "parse_react_step: the tool name is the Action stripped of whitespace, then of every "
      "trailing character among \".,;:\" (parser.h, rule 4)");
  for (const std::string ending : {":", ",", ";", ".:", ";."}) {
    const auto p =
        parse_react_step("Action: calculator" + ending + "\nAction Input: {\"expression\": \"1\"}");
    REQUIRE(p.action().has_value());
    CHECK(p.action()->tool() == "calculator");
  }
}

// ---------------------------------------------------------------------------------------------
// extract_plan — yours; make_plan — provided (it needs extract_plan).

TEST_CASE("TestExtractPlan::goal_plus_three_steps") {
  const auto p =
      extract_plan("Goal: solve the task\n1. read the file\n2. extract numbers\n3. compute the sum",
                   "user task");
  REQUIRE(p.has_value());
  CHECK(p->goal() == "solve the task");
  CHECK(p->steps() ==
        std::vector<std::string>{"read the file", "extract numbers", "compute the sum"});
}

TEST_CASE("TestExtractPlan::no_goal_falls_back_to_user_message") {
  const auto p = extract_plan("1. step one\n2. step two", "the original task");
  REQUIRE(p.has_value());
  CHECK(p->goal() == "the original task");
  CHECK(p->steps() == std::vector<std::string>{"step one", "step two"});
}

TEST_CASE("TestExtractPlan::no_steps_returns_none") {
  INFO("extract_plan: a goal without a single numbered step is no plan: return std::nullopt");
  CHECK_FALSE(extract_plan("Goal: solve everything\nThis is just prose, no list.", "task"));
}

TEST_CASE("TestExtractPlan::none_when_no_structure") {
  CHECK_FALSE(extract_plan("blah blah blah", "task"));
}

TEST_CASE("TestExtractPlan::returns_plan_or_none") {
  STATIC_REQUIRE(std::is_same_v<decltype(extract_plan("", "")), std::optional<Plan>>);
  CHECK(extract_plan("Goal: x\n1. a", "task").has_value());
}

TEST_CASE("TestExtractPlanEdgeCases::paren_style_numbering") {
  const auto p = extract_plan("Goal: g\n1) first\n2) second", "task");
  REQUIRE(p.has_value());
  CHECK(p->steps() == std::vector<std::string>{"first", "second"});
}

TEST_CASE("TestExtractPlanEdgeCases::dash_style_numbering") {
  const auto p = extract_plan("Goal: g\n1 - first\n2 - second", "task");
  REQUIRE(p.has_value());
  CHECK(p->steps() == std::vector<std::string>{"first", "second"});
}

TEST_CASE("TestExtractPlanEdgeCases::out_of_order_indices_dropped") {
  const auto p = extract_plan("Goal: g\n1. first\n2. second\n1. RESTART\n3. third", "task");
  INFO(
      "extract_plan: keep a numbered line only when its number is greater than the last kept "
      "one's; a smaller or equal number means the list restarted");
  REQUIRE(p.has_value());
  CHECK(p->steps() == std::vector<std::string>{"first", "second", "third"});
}

TEST_CASE("TestExtractPlanEdgeCases::capped_at_5_steps") {
  const auto p = extract_plan("Goal: g\n1. a\n2. b\n3. c\n4. d\n5. e\n6. f\n7. g", "task");
  INFO("extract_plan: five steps at most (the planning prompt asks for five); stop there");
  REQUIRE(p.has_value());
  CHECK(p->steps() == std::vector<std::string>{"a", "b", "c", "d", "e"});
}

TEST_CASE("TestExtractPlanEdgeCases::empty_step_body_dropped") {
  const auto p = extract_plan("Goal: g\n1. \n2. real step", "task");
  REQUIRE(p.has_value());
  CHECK(p->steps() == std::vector<std::string>{"real step"});
}

TEST_CASE("TestExtractPlanEdgeCases::type_error_on_non_str", "[clean]") {
  STATIC_REQUIRE_FALSE(extracts<int>);
  STATIC_REQUIRE_FALSE(extracts<std::nullptr_t>);
  STATIC_REQUIRE(extracts<std::string>);
}

TEST_CASE("TestExtractPlanEdgeCases::value_error_on_empty_user_message") {
  CHECK_THROWS_AS(extract_plan("Goal: g\n1. a", ""), g2c::ValueError);
}

TEST_CASE("TestExtractPlanEdgeCases::goal_strips_whitespace") {
  const auto p = extract_plan("Goal:   solve   \n1. a", "task");
  REQUIRE(p.has_value());
  CHECK(p->goal() == "solve");
}

TEST_CASE("TestMakePlan::make_plan_uses_planning_prompt") {
  FakeBackend backend({"Goal: solve\n1. step one\n2. step two"});
  const auto p = make_plan(backend, "do something", ToolRegistry({echo_tool()}));
  REQUIRE(p.has_value());
  CHECK(p->goal() == "solve");
  CHECK(p->steps() == std::vector<std::string>{"step one", "step two"});
  REQUIRE(backend.prompts().size() == 1);
  CHECK_THAT(backend.prompts()[0], Contains("do something"));
  CHECK_THAT(backend.prompts()[0], Contains("Goal:"));
}

TEST_CASE("TestMakePlan::make_plan_returns_none_when_unparseable") {
  FakeBackend backend({"I don't know how to plan."});
  CHECK_FALSE(make_plan(backend, "a task", ToolRegistry()).has_value());
}

TEST_CASE("TestMakePlan::make_plan_rejects_empty_user_message", "[clean]") {
  FakeBackend backend({});
  CHECK_THROWS_AS(make_plan(backend, "", ToolRegistry()), g2c::ValueError);
}

TEST_CASE("TestMakePlan::make_plan_includes_tools_in_prompt") {
  FakeBackend backend({"Goal: x\n1. step"});
  make_plan(backend, "task", ToolRegistry({echo_tool()}));
  CHECK_THAT(backend.prompts().at(0), Contains("echo"));
}

// ---------------------------------------------------------------------------------------------
// The scratchpad — render is yours.

TEST_CASE("TestScratchpadConstruction::starts_empty", "[clean]") {
  const Scratchpad sp;
  CHECK(sp.size() == 0);
  CHECK(sp.steps().empty());
}

TEST_CASE("TestScratchpadConstruction::max_chars_must_be_positive", "[clean]") {
  CHECK_THROWS_MATCHES(Scratchpad(0), g2c::ValueError, MessageContains("max_chars"));
  CHECK_THROWS_AS(Scratchpad(-1), g2c::ValueError);
}

TEST_CASE("TestScratchpadConstruction::max_chars_none_is_allowed", "[clean]") {
  CHECK_FALSE(Scratchpad(std::nullopt).max_chars().has_value());
}

TEST_CASE("TestScratchpadConstruction::append_rejects_non_step", "[clean]") {
  STATIC_REQUIRE_FALSE(
      std::is_invocable_v<decltype(&Scratchpad::append), Scratchpad&, std::string>);
  STATIC_REQUIRE(std::is_invocable_v<decltype(&Scratchpad::append), Scratchpad&, AgentStep>);
}

TEST_CASE("TestScratchpadConstruction::repr", "[clean]") {
  std::ostringstream out;
  out << Scratchpad();
  CHECK(out.str() == "Scratchpad(steps=0)");
}

TEST_CASE("TestScratchpadConstruction::steps_returns_snapshot", "[clean]") {
  Scratchpad sp;
  sp.append(make_step({.thought = "t1"}));
  auto snapshot = sp.steps();
  snapshot.push_back(make_step({.thought = "garbage"}));
  CHECK(sp.size() == 1);
}

TEST_CASE("TestScratchpadRender::empty_renders_to_empty_string") {
  CHECK(Scratchpad().render().empty());
}

TEST_CASE("TestScratchpadRender::single_action_step") {
  Scratchpad sp;
  sp.append(make_step({.thought = "use calc",
                       .action = Action("calculator", {{"expression", "2+2"}}),
                       .observation = Observation("4")}));
  CHECK(sp.render() ==
        "Thought: use calc\nAction: calculator\nAction Input: {\"expression\":\"2+2\"}\n"
        "Observation: 4");
}

TEST_CASE("TestScratchpadRender::final_answer_step") {
  Scratchpad sp;
  sp.append(make_step({.thought = "done", .final_answer = "42"}));
  const auto out = sp.render();
  CHECK(out == "Thought: done\nFinal Answer: 42");
  CHECK_THAT(out, !Contains("Action:"));
}

TEST_CASE("TestScratchpadRender::two_steps_separated_by_blank_line") {
  Scratchpad sp;
  sp.append(make_step({.thought = "t1",
                       .action = Action("echo", {{"text", "a"}}),
                       .observation = Observation("echo: a")}));
  sp.append(make_step({.thought = "t2",
                       .action = Action("echo", {{"text", "b"}}),
                       .observation = Observation("echo: b")}));
  const auto out = sp.render();
  INFO(
      "Scratchpad::render: a step's lines are joined by \"\\n\", steps by one blank line "
      "(\"\\n\\n\"); got:\n"
      << out);
  CHECK(count(out, "\n\n") == 1);
  CHECK(count(out, "Thought:") == 2);
  CHECK(count(out, "Action:") == 2);
  CHECK(count(out, "Observation:") == 2);
  CHECK(out.find("t1") < out.find("t2"));
}

TEST_CASE("TestScratchpadRender::error_observation_marked") {
  Scratchpad sp;
  sp.append(make_step({.thought = "try",
                       .action = Action("broken", {{"x", "y"}}),
                       .observation = Observation("ValueError: boom", true)}));
  CHECK_THAT(sp.render(), Contains("Observation: [error] ValueError: boom"));
}

TEST_CASE("TestScratchpadRender::parse_error_step_renders_as_observation") {
  Scratchpad sp;
  sp.append(make_step(
      {.thought = "confused", .parse_error = "no Action, Action Input, or Final Answer found"}));
  CHECK(sp.render() ==
        "Thought: confused\nObservation: [parse error] no Action, Action Input, or Final Answer "
        "found");
}

TEST_CASE("TestScratchpadRender::arguments_rendered_as_json_not_python_repr") {
  Scratchpad sp;
  sp.append(make_step({.thought = "t",
                       .action = Action("echo", {{"text", "hi"}}),
                       .observation = Observation("echo: hi")}));
  const auto out = sp.render();
  CHECK_THAT(out, !Contains("{'text': 'hi'}"));
  CHECK_THAT(out, Contains("\"text\""));
}

TEST_CASE("TestScratchpadRender::step_without_thought_omits_thought_line") {
  Scratchpad sp;
  sp.append(make_step({.thought = "",
                       .action = Action("echo", {{"text", "x"}}),
                       .observation = Observation("echo: x")}));
  const auto out = sp.render();
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    CHECK_FALSE(g2c::agent::strip_whitespace(line) == "Thought:");  // no empty Thought line
  }
  CHECK(out.starts_with("Action: echo"));
}

TEST_CASE("TestScratchpadRender::render_returns_string") {
  STATIC_REQUIRE(std::is_same_v<decltype(Scratchpad().render()), std::string>);
  CHECK(Scratchpad().render().empty());
}

TEST_CASE("TestScratchpadTruncation::under_cap_returns_full_text") {
  Scratchpad sp(10000);
  for (int i = 0; i < 3; ++i) {
    sp.append(make_step({.thought = "step" + std::to_string(i),
                         .action = Action("echo", {{"text", std::to_string(i)}}),
                         .observation = Observation("echo: " + std::to_string(i))}));
  }
  const auto out = sp.render();
  CHECK_THAT(out, Contains("step0") && Contains("step1") && Contains("step2"));
}

TEST_CASE("TestScratchpadTruncation::over_cap_drops_earliest_blocks") {
  Scratchpad sp(200);
  for (int i = 0; i < 10; ++i) {
    sp.append(make_step({.thought = "this is step " + std::to_string(i) + " with some words",
                         .action = Action("echo", {{"text", "value" + std::to_string(i)}}),
                         .observation = Observation("echo result for step " + std::to_string(i))}));
  }
  const auto out = sp.render();
  INFO(
      "Scratchpad::render: over max_chars, drop whole blocks from the front (the oldest step "
      "matters least to the next decision) until the text fits");
  CHECK(out.size() <= 200);
  CHECK_THAT(out, Contains("step 9"));
  CHECK_THAT(out, !Contains("step 0 "));
}

TEST_CASE("TestScratchpadTruncation::keeps_at_least_last_block_even_if_over_cap") {
  Scratchpad sp(10);
  sp.append(make_step({.thought = "this is a long thought far exceeding the cap",
                       .action = Action("echo", {{"text", "x"}}),
                       .observation = Observation("long output that exceeds cap")}));
  INFO(
      "Scratchpad::render: never drop the last block, even when it alone is over max_chars (the "
      "model must see what just happened)");
  CHECK_THAT(sp.render(), Contains("Thought:"));
}

// ---------------------------------------------------------------------------------------------
// The prompts — provided.

TEST_CASE("TestRenderSystemPrompt::empty_tool_list", "[clean]") {
  const auto out = render_system_prompt({});
  CHECK_THAT(out, Contains("(no tools registered)"));
  CHECK_THAT(out, Contains("Thought:"));
  CHECK_THAT(out, Contains("Action:"));
}

TEST_CASE("TestRenderSystemPrompt::includes_tool_names_and_descriptions", "[clean]") {
  const auto out = render_system_prompt({echo_tool()});
  CHECK_THAT(out, Contains("echo: Echo the argument back."));
}

TEST_CASE("TestRenderSystemPrompt::lists_tool_names_in_action_hint", "[clean]") {
  CHECK_THAT(render_system_prompt({echo_tool()}), Contains("Action: <one of echo>"));
}

TEST_CASE("TestRenderSystemPrompt::returns_string", "[clean]") {
  STATIC_REQUIRE(std::is_same_v<decltype(render_system_prompt({})), std::string>);
  CHECK_FALSE(render_system_prompt({}).empty());
}

TEST_CASE("TestRenderPlanningPrompt::includes_user_message", "[clean]") {
  const auto out = render_planning_prompt("a hard task", {echo_tool()});
  CHECK_THAT(out, Contains("a hard task"));
  CHECK_THAT(out, Contains("echo"));
}

TEST_CASE("TestRenderPlanningPrompt::rejects_empty_user_message", "[clean]") {
  CHECK_THROWS_AS(render_planning_prompt("", {echo_tool()}), g2c::ValueError);
}

TEST_CASE("TestRenderPlanningPrompt::includes_format_template", "[clean]") {
  const auto out = render_planning_prompt("task", {});
  CHECK_THAT(out, Contains("Goal:"));
  CHECK_THAT(out, Contains("1."));
}

TEST_CASE("TestRenderPlanBlock::basic", "[clean]") {
  CHECK(render_plan_block("solve x", {"a", "b"}) == "Plan:\nGoal: solve x\n1. a\n2. b");
}

TEST_CASE("TestRenderPlanBlock::empty_steps", "[clean]") {
  const auto out = render_plan_block("just a goal", {});
  CHECK(out == "Plan:\nGoal: just a goal");
  CHECK_THAT(out, !Contains("1."));
}

TEST_CASE("TestModuleConstants::default_agent_system_is_a_string", "[clean]") {
  CHECK(DEFAULT_AGENT_SYSTEM.size() > 100);
}

TEST_CASE("TestModuleConstants::default_planning_prompt_is_a_string", "[clean]") {
  CHECK(DEFAULT_PLANNING_PROMPT.find("Goal:") != std::string_view::npos);
}

// ---------------------------------------------------------------------------------------------
// The agent — construction and the driver provided, the policy (Agent::decide_step) yours.

TEST_CASE("TestAgentConstruction::basic_construction", "[clean]") {
  FakeBackend backend({});
  const ToolRegistry registry;
  const Agent agent(backend, registry, {.plan = false});
  CHECK(&agent.backend() == &backend);
  CHECK(agent.registry().names() == registry.names());
  CHECK(agent.max_steps() == 8);
}

TEST_CASE("TestAgentConstruction::rejects_non_backend", "[clean]") {
  // Something that is not a Backend does not compile.
  STATIC_REQUIRE_FALSE(std::is_constructible_v<Agent, std::string, ToolRegistry, AgentOptions>);
  STATIC_REQUIRE(std::is_constructible_v<Agent, FakeBackend&, ToolRegistry, AgentOptions>);
}

TEST_CASE("TestAgentConstruction::rejects_non_registry", "[clean]") {
  STATIC_REQUIRE_FALSE(std::is_constructible_v<Agent, FakeBackend&, std::string, AgentOptions>);
}

TEST_CASE("TestAgentConstruction::rejects_zero_max_steps", "[clean]") {
  FakeBackend backend({});
  CHECK_THROWS_MATCHES(Agent(backend, ToolRegistry(), {.max_steps = 0, .plan = false}), AgentError,
                       MessageContains("max_steps must be > 0, got 0"));
}

TEST_CASE("TestAgentConstruction::rejects_negative_max_steps", "[clean]") {
  FakeBackend backend({});
  CHECK_THROWS_AS(Agent(backend, ToolRegistry(), {.max_steps = -1, .plan = false}), AgentError);
}

TEST_CASE("TestAgentConstruction::rejects_zero_scratchpad_max_chars", "[clean]") {
  FakeBackend backend({});
  CHECK_THROWS_MATCHES(Agent(backend, ToolRegistry(), {.plan = false, .scratchpad_max_chars = 0}),
                       AgentError, MessageContains("scratchpad_max_chars"));
}

TEST_CASE("TestAgentConstruction::repr", "[clean]") {
  FakeBackend backend({});
  std::ostringstream text;
  text << Agent(backend, ToolRegistry({echo_tool()}), {.plan = false});
  CHECK(text.str() == "Agent(backend=fake, tools=['echo'], max_steps=8)");
}

TEST_CASE("TestAgentRun::one_shot_final_answer") {
  FakeBackend backend({"Final Answer: 42"});
  const auto result =
      Agent(backend, ToolRegistry(), {.max_steps = 3, .plan = false}).run("What is the meaning?");
  CHECK(result.final_answer == "42");
  CHECK(result.stopped_reason == "final_answer");
  REQUIRE(result.steps.size() == 1);
  CHECK(result.steps[0].final_answer == "42");
  CHECK_FALSE(result.steps[0].action.has_value());
}

TEST_CASE("TestAgentRun::returns_agent_run_result") {
  FakeBackend backend({"Final Answer: x"});
  const Agent agent(backend, ToolRegistry(), {.plan = false});
  STATIC_REQUIRE(std::is_same_v<decltype(agent.run("anything")), AgentRunResult>);
  CHECK(agent.run("anything").final_answer == "x");
}

TEST_CASE("TestAgentRun::user_message_recorded") {
  FakeBackend backend({"Final Answer: x"});
  const auto result = Agent(backend, ToolRegistry(), {.plan = false}).run("the original question");
  CHECK(result.user_message == "the original question");
}

TEST_CASE("TestAgentRun::rejects_empty_user_message", "[clean]") {
  FakeBackend backend({});
  const Agent agent(backend, ToolRegistry(), {.plan = false});
  CHECK_THROWS_MATCHES(agent.run(""), g2c::ValueError, MessageContains("non-empty"));
  CHECK(backend.prompts().empty());
}

TEST_CASE("TestAgentRun::rejects_non_string_user_message", "[clean]") {
  // The Python edition's ValueError for a non-string is a compile error here.
  STATIC_REQUIRE_FALSE(runs<int>);
  STATIC_REQUIRE_FALSE(runs<std::nullptr_t>);
  STATIC_REQUIRE(runs<std::string>);
}

TEST_CASE("TestAgentRun::metadata_populated") {
  FakeBackend backend({"Final Answer: ok"});
  const auto result = Agent(backend, ToolRegistry({echo_tool()}), {.plan = false}).run("hi");
  CHECK(result.metadata["n_steps"].get<int>() >= 1);
  CHECK(result.metadata["backend_name"] == "fake");
  CHECK(result.metadata["backend_model_id"] == "fake-model");
  CHECK(result.metadata["tools_available"] == Json::array({"echo"}));
  CHECK(result.metadata["had_plan"] == false);
}

TEST_CASE("TestAgentRun::two_step_action_then_final") {
  FakeBackend backend({"Thought: use echo\nAction: echo\nAction Input: {\"text\": \"hi\"}",
                       "Thought: done\nFinal Answer: echo: hi"});
  const auto result =
      Agent(backend, ToolRegistry({echo_tool()}), {.max_steps = 4, .plan = false}).run("echo hi");
  CHECK(result.final_answer == "echo: hi");
  CHECK(result.stopped_reason == "final_answer");
  REQUIRE(result.steps.size() == 2);
  REQUIRE(result.steps[0].action.has_value());
  CHECK(result.steps[0].action->tool() == "echo");
  REQUIRE(result.steps[0].observation.has_value());
  CHECK(result.steps[0].observation->output() == "echo: hi");
  CHECK_FALSE(result.steps[0].observation->is_error());
  CHECK(result.steps[1].final_answer == "echo: hi");
}

TEST_CASE("TestAgentRun::n_tool_calls_in_metadata") {
  FakeBackend backend({"Thought: a\nAction: echo\nAction Input: {\"text\": \"1\"}",
                       "Thought: b\nAction: echo\nAction Input: {\"text\": \"2\"}",
                       "Final Answer: done"});
  const auto result =
      Agent(backend, ToolRegistry({echo_tool()}), {.max_steps = 5, .plan = false}).run("x");
  CHECK(result.metadata["n_tool_calls"] == 2);
}

TEST_CASE("TestAgentRun::scratchpad_grows_into_prompt") {
  FakeBackend backend({"Action: echo\nAction Input: {\"text\": \"first\"}", "Final Answer: done"});
  Agent(backend, ToolRegistry({echo_tool()}), {.max_steps = 4, .plan = false}).run("test");
  REQUIRE(backend.prompts().size() == 2);
  INFO("A step that acted is remembered: the next prompt shows its observation.");
  CHECK_THAT(backend.prompts()[1], Contains("echo: first"));
}

TEST_CASE("TestAgentRun::prompt_ends_with_thought_marker") {
  FakeBackend backend({"Final Answer: x"});
  Agent(backend, ToolRegistry(), {.plan = false}).run("q");
  REQUIRE(backend.prompts().size() == 1);
  CHECK(g2c::agent::strip_whitespace(backend.prompts()[0]).ends_with("Thought:"));
}

TEST_CASE("TestAgentRunStopConditions::max_steps_when_no_final_answer") {
  FakeBackend backend({"Action: echo\nAction Input: {\"text\": \"1\"}",
                       "Action: echo\nAction Input: {\"text\": \"2\"}"});
  const auto result = Agent(backend, ToolRegistry({echo_tool()}),
                            {.max_steps = 2, .plan = false, .loop_detection = false})
                          .run("x");
  CHECK_FALSE(result.final_answer.has_value());
  CHECK(result.stopped_reason == "max_steps");
  CHECK(result.steps.size() == 2);
}

TEST_CASE("TestAgentRunStopConditions::loop_detection_stops_on_duplicate_action") {
  FakeBackend backend({"Action: echo\nAction Input: {\"text\": \"same\"}",
                       "Action: echo\nAction Input: {\"text\": \"same\"}"});
  const auto result = Agent(backend, ToolRegistry({echo_tool()}),
                            {.max_steps = 10, .plan = false, .loop_detection = true})
                          .run("x");
  INFO("The same action with the same arguments twice in a row ends the run.");
  CHECK(result.stopped_reason == "duplicate_action");
  CHECK(result.steps.size() == 2);
}

TEST_CASE("TestAgentRunStopConditions::loop_detection_off_allows_repeats") {
  FakeBackend backend({"Action: echo\nAction Input: {\"text\": \"same\"}",
                       "Action: echo\nAction Input: {\"text\": \"same\"}", "Final Answer: ok"});
  const auto result = Agent(backend, ToolRegistry({echo_tool()}),
                            {.max_steps = 5, .plan = false, .loop_detection = false})
                          .run("x");
  CHECK(result.final_answer == "ok");
  CHECK(result.stopped_reason == "final_answer");
}

TEST_CASE("TestAgentRunStopConditions::loop_detection_distinguishes_different_args") {
  FakeBackend backend({"Action: echo\nAction Input: {\"text\": \"a\"}",
                       "Action: echo\nAction Input: {\"text\": \"b\"}", "Final Answer: ok"});
  const auto result = Agent(backend, ToolRegistry({echo_tool()}),
                            {.max_steps = 5, .plan = false, .loop_detection = true})
                          .run("x");
  INFO(
      "Loop detection compares the tool and its arguments: the same tool with new arguments is "
      "progress.");
  CHECK(result.stopped_reason == "final_answer");
}

TEST_CASE("TestAgentRunStopConditions::halt_on_stuck") {
  FakeBackend backend({"I have no idea."});
  INFO(
      "Agent::decide_step: a step with neither an action nor a final answer, with "
      "options().halt_on_stuck set, stops the run with stop reason \"no_progress\" (the fake "
      "has one answer, so a run that goes on asks it for a second)");
  const auto result =
      Agent(backend, ToolRegistry(), {.max_steps = 5, .plan = false, .halt_on_stuck = true})
          .run("x");
  CHECK(result.stopped_reason == "no_progress");
  CHECK_FALSE(result.final_answer.has_value());
  REQUIRE(result.steps.size() == 1);
  CHECK(result.steps[0].parse_error.has_value());
}

TEST_CASE("TestAgentRunStopConditions::default_does_not_halt_on_stuck") {
  FakeBackend backend({"I have no idea.", "Final Answer: figured it out"});
  const auto result =
      Agent(backend, ToolRegistry(), {.max_steps = 5, .plan = false, .halt_on_stuck = false})
          .run("x");
  CHECK(result.final_answer == "figured it out");
  CHECK(result.stopped_reason == "final_answer");
  REQUIRE(result.steps.size() == 2);
  CHECK(result.steps[0].parse_error.has_value());
}

TEST_CASE("TestAgentRunErrorRecovery::unknown_tool_surfaces_as_observation_error") {
  FakeBackend backend(
      {"Action: nonexistent\nAction Input: {\"x\": \"y\"}", "Final Answer: gave up"});
  const auto result =
      Agent(backend, ToolRegistry({echo_tool()}), {.max_steps = 5, .plan = false}).run("x");
  REQUIRE(result.steps.at(0).observation.has_value());
  CHECK(result.steps[0].observation->is_error());
  REQUIRE(backend.prompts().size() == 2);
  CHECK_THAT(backend.prompts()[1], Contains("nonexistent"));
}

TEST_CASE("TestAgentRunErrorRecovery::tool_runtime_exception_surfaces") {
  FakeBackend backend({"Action: broken\nAction Input: {\"x\": \"y\"}", "Final Answer: oh well"});
  const auto result =
      Agent(backend, ToolRegistry({broken_tool()}), {.max_steps = 5, .plan = false}).run("x");
  REQUIRE(result.steps.at(0).observation.has_value());
  CHECK(result.steps[0].observation->is_error());
  CHECK_THAT(result.steps[0].observation->output(), Contains("intentional failure"));
}

TEST_CASE("TestAgentRunErrorRecovery::bad_args_surfaces_as_error") {
  FakeBackend backend(
      {"Action: echo\nAction Input: {\"wrong_key\": \"x\"}", "Final Answer: gave up"});
  const auto result =
      Agent(backend, ToolRegistry({echo_tool()}), {.max_steps = 5, .plan = false}).run("x");
  REQUIRE(result.steps.at(0).observation.has_value());
  CHECK(result.steps[0].observation->is_error());
}

TEST_CASE("TestAgentRunErrorRecovery::loop_continues_after_tool_error") {
  FakeBackend backend({"Action: nonexistent\nAction Input: {\"x\": \"y\"}",
                       "Action: echo\nAction Input: {\"text\": \"now I get it\"}",
                       "Final Answer: now I get it"});
  const auto result =
      Agent(backend, ToolRegistry({echo_tool()}), {.max_steps = 5, .plan = false}).run("x");
  INFO("A failed tool call is an observation, not the end of the run.");
  CHECK(result.final_answer == "now I get it");
  CHECK(result.steps.size() == 3);
}

TEST_CASE("TestAgentRunErrorRecovery::error_observation_marked_in_subsequent_prompt") {
  FakeBackend backend({"Action: nonexistent\nAction Input: {\"x\": \"y\"}", "Final Answer: ok"});
  Agent(backend, ToolRegistry({echo_tool()}), {.max_steps = 5, .plan = false}).run("x");
  REQUIRE(backend.prompts().size() == 2);
  CHECK_THAT(backend.prompts()[1], Contains("[error]"));
}

TEST_CASE("TestAgentRunErrorRecovery::parse_error_step_does_not_crash") {
  FakeBackend backend({"Action: echo", "Final Answer: recovered"});
  const auto result =
      Agent(backend, ToolRegistry({echo_tool()}), {.max_steps = 5, .plan = false}).run("x");
  CHECK(result.final_answer == "recovered");
  CHECK(result.steps.at(0).parse_error.has_value());
}

TEST_CASE("TestAgentRunPlanning::plan_called_when_enabled") {
  FakeBackend backend({"Goal: solve\n1. think\n2. answer", "Final Answer: done"});
  const auto result = Agent(backend, ToolRegistry(), {.max_steps = 3, .plan = true}).run("a task");
  REQUIRE(result.plan.has_value());
  CHECK(result.plan->goal() == "solve");
  CHECK(result.plan->steps() == std::vector<std::string>{"think", "answer"});
  CHECK(result.metadata["had_plan"] == true);
}

TEST_CASE("TestAgentRunPlanning::plan_skipped_when_disabled") {
  FakeBackend backend({"Final Answer: ok"});
  const auto result = Agent(backend, ToolRegistry(), {.max_steps = 3, .plan = false}).run("a task");
  CHECK_FALSE(result.plan.has_value());
  CHECK(backend.prompts().size() == 1);  // the loop's call only, no planning call
  CHECK(result.metadata["had_plan"] == false);
}

TEST_CASE("TestAgentRunPlanning::plan_unparseable_falls_through_gracefully") {
  FakeBackend backend({"no structured plan here", "Final Answer: still worked"});
  const auto result = Agent(backend, ToolRegistry(), {.max_steps = 3, .plan = true}).run("a task");
  CHECK_FALSE(result.plan.has_value());
  CHECK(result.final_answer == "still worked");
}

TEST_CASE("TestAgentRunPlanning::plan_appears_in_main_prompt") {
  FakeBackend backend({"Goal: do x\n1. do x first", "Final Answer: done"});
  Agent(backend, ToolRegistry(), {.max_steps = 3, .plan = true}).run("a task");
  REQUIRE(backend.prompts().size() == 2);
  CHECK_THAT(backend.prompts()[1], Contains("Plan:") && Contains("do x first"));
}

// Agent::decide_step alone: feed it a ParsedStep, read the StepOutcome.

TEST_CASE("TestDecideStep::final_answer_stops_and_is_not_remembered") {
  FakeBackend backend({});
  const auto agent = policy_agent(backend);
  const ParsedStep parsed("done", std::nullopt, "42", std::nullopt);
  const auto outcome = agent.decide_step(parsed, inference_of("Final Answer: 42"), {});
  CHECK(outcome.stop_reason == "final_answer");
  INFO("Nothing reads the scratchpad after the last step: a final answer is not remembered.");
  CHECK_FALSE(outcome.remember);
  CHECK(outcome.step.final_answer == "42");
  CHECK_FALSE(outcome.step.action.has_value());
}

// A model that writes an action and a final answer in one step has answered: the answer ends the
// run and the action never runs (agent.h: "in this order"). Checking the action first runs a tool
// nobody will read and carries on past the answer.
TEST_CASE("TestDecideStep::final_answer_wins_over_an_action_in_the_same_step") {
  FakeBackend backend({});
  const auto agent = policy_agent(backend);
  const Action action("calculator", {{"expression", "2 + 2"}});
  const auto outcome =
      agent.decide_step(ParsedStep("both", action, "4", std::nullopt), inference_of(), {});
  INFO(
      "decide_step: look at parsed.final_answer() first, then parsed.action(), then the parse "
      "error; a step with both an answer and an action is an answer");
  CHECK(outcome.stop_reason == "final_answer");
  CHECK(outcome.step.final_answer == "4");
  CHECK_FALSE(outcome.step.observation.has_value());
  CHECK_FALSE(outcome.remember);
}

TEST_CASE("TestDecideStep::action_dispatches_observes_and_continues") {
  FakeBackend backend({});
  const auto agent = policy_agent(backend);
  const Action action("calculator", {{"expression", "2 + 2"}});
  const auto outcome = agent.decide_step(ParsedStep("compute", action, std::nullopt, std::nullopt),
                                         inference_of(), {});
  CHECK_FALSE(outcome.stop_reason.has_value());
  CHECK(outcome.remember);
  CHECK(outcome.step.action == action);
  REQUIRE(outcome.step.observation.has_value());
  CHECK_FALSE(outcome.step.observation->is_error());
  CHECK_THAT(outcome.step.observation->output(), Contains("4"));
}

TEST_CASE("TestDecideStep::repeat_action_with_loop_detection_stops") {
  FakeBackend backend({});
  const auto agent = policy_agent(backend, {.loop_detection = true});
  const Action action("calculator", {{"expression", "1 + 1"}});
  const auto prior = make_step({.action = action, .observation = Observation("2")});
  const auto outcome = agent.decide_step(ParsedStep("again", action, std::nullopt, std::nullopt),
                                         inference_of(), {prior});
  CHECK(outcome.stop_reason == "duplicate_action");
  CHECK(outcome.remember);  // the repeat is still recorded
}

TEST_CASE("TestDecideStep::repeat_action_without_loop_detection_continues") {
  FakeBackend backend({});
  const auto agent = policy_agent(backend, {.loop_detection = false});
  const Action action("calculator", {{"expression", "1 + 1"}});
  const auto prior = make_step({.action = action, .observation = Observation("2")});
  const auto outcome = agent.decide_step(ParsedStep("again", action, std::nullopt, std::nullopt),
                                         inference_of(), {prior});
  CHECK_FALSE(outcome.stop_reason.has_value());
}

TEST_CASE("TestDecideStep::loop_detection_scans_past_stuck_step") {
  FakeBackend backend({});
  const auto agent = policy_agent(backend, {.loop_detection = true});
  const Action action("calculator", {{"expression", "1 + 1"}});
  const auto a_step = make_step({.action = action, .observation = Observation("2")});
  const auto stuck_step = make_step({.parse_error = "no parse"});
  const auto outcome = agent.decide_step(ParsedStep("again", action, std::nullopt, std::nullopt),
                                         inference_of(), {a_step, stuck_step});
  INFO(
      "A, stuck, A is still a repeat: compare with the last step that acted "
      "(previous_action_key), not with the last step.");
  CHECK(outcome.stop_reason == "duplicate_action");
}

TEST_CASE("TestDecideStep::stuck_with_halt_stops_and_is_not_remembered") {
  FakeBackend backend({});
  const auto agent = policy_agent(backend, {.halt_on_stuck = true});
  const auto outcome =
      agent.decide_step(ParsedStep("", std::nullopt, std::nullopt, "bad json"), inference_of(), {});
  INFO(
      "decide_step: with options().halt_on_stuck, a step that could not be read stops the run "
      "(\"no_progress\") and is not remembered");
  CHECK(outcome.stop_reason == "no_progress");
  CHECK_FALSE(outcome.remember);
  CHECK(outcome.step.parse_error == "bad json");
}

TEST_CASE("TestDecideStep::stuck_without_halt_continues_and_remembers") {
  FakeBackend backend({});
  const auto agent = policy_agent(backend, {.halt_on_stuck = false});
  const auto outcome =
      agent.decide_step(ParsedStep("", std::nullopt, std::nullopt, "bad json"), inference_of(), {});
  CHECK_FALSE(outcome.stop_reason.has_value());
  INFO("Without halt_on_stuck the parse error goes back to the model: remember the step.");
  CHECK(outcome.remember);
}

TEST_CASE("TestDecideStep::stuck_falls_back_to_no_parse_label") {
  FakeBackend backend({});
  const auto agent = policy_agent(backend, {.halt_on_stuck = true});
  const auto outcome = agent.decide_step(ParsedStep("", std::nullopt, std::nullopt, std::nullopt),
                                         inference_of(), {});
  CHECK(outcome.step.parse_error == "no parse");
}

TEST_CASE("TestDecideStep::unknown_tool_observation_is_error_and_augmented") {
  FakeBackend backend({});
  const auto agent = policy_agent(backend);
  const auto outcome = agent.decide_step(
      ParsedStep("try", Action("nonexistent", Json::object()), std::nullopt, std::nullopt),
      inference_of(), {});
  REQUIRE(outcome.step.observation.has_value());
  CHECK(outcome.step.observation->is_error());
  CHECK_THAT(outcome.step.observation->output(), Contains("calculator"));
  CHECK_FALSE(outcome.stop_reason.has_value());
}

TEST_CASE("TestDecideStep::policy_does_not_mutate_the_steps_list") {
  FakeBackend backend({});
  const auto agent = policy_agent(backend);
  const std::vector<AgentStep> steps;
  agent.decide_step(ParsedStep("done", std::nullopt, "x", std::nullopt), inference_of(), steps);
  CHECK(steps.empty());
  // decide_step takes the steps by const reference: the driver records, the policy decides.
  STATIC_REQUIRE(
      std::is_same_v<decltype(&Agent::decide_step),
                     g2c::agent::StepOutcome (Agent::*)(const ParsedStep&, const InferenceResult&,
                                                        const std::vector<AgentStep>&) const>);
}

TEST_CASE("TestIntegrationSmoke::calculator_through_agent") {
  FakeBackend backend(
      {"Thought: I need to compute it.\nAction: calculator\n"
       "Action Input: {\"expression\": \"21 * 2\"}",
       "Thought: I have the answer.\nFinal Answer: The result is 42."});
  const auto result =
      Agent(backend, ToolRegistry({g2c::tools::make_calculator()}), {.max_steps = 3, .plan = false})
          .run("What is 21 times 2?");
  CHECK(result.final_answer == "The result is 42.");
  REQUIRE(result.steps.size() == 2);
  REQUIRE(result.steps[0].action.has_value());
  CHECK(result.steps[0].action->tool() == "calculator");
  REQUIRE(result.steps[0].observation.has_value());
  CHECK_FALSE(result.steps[0].observation->is_error());
  CHECK(result.steps[0].observation->output() == "42");
}

TEST_CASE("TestIntegrationSmoke::calculator_recovers_from_bad_expression") {
  FakeBackend backend({"Action: calculator\nAction Input: {\"expression\": \"abc\"}",
                       "Action: calculator\nAction Input: {\"expression\": \"1+1\"}",
                       "Final Answer: 2"});
  const auto result =
      Agent(backend, ToolRegistry({g2c::tools::make_calculator()}), {.max_steps = 5, .plan = false})
          .run("compute 1+1");
  CHECK(result.final_answer == "2");
  REQUIRE(result.steps.size() == 3);
  REQUIRE(result.steps[0].observation.has_value());
  CHECK(result.steps[0].observation->is_error());
  REQUIRE(result.steps[1].observation.has_value());
  CHECK_FALSE(result.steps[1].observation->is_error());
  CHECK(result.steps[1].observation->output() == "2");
}

// ---------------------------------------------------------------------------------------------
// The native agent — provided. Tests that run the calculator also need module 18's
// validate_arguments and calculator_evaluate.

TEST_CASE("TestNativeAgentConstruction::rejects_backend_without_chat_with_tools", "[clean]") {
  FakeBackend backend({"irrelevant"});
  CHECK_THROWS_MATCHES(NativeAgent(backend, ToolRegistry({g2c::tools::make_calculator()})),
                       AgentError, MessageContains("chat_with_tools"));
}

TEST_CASE("TestNativeAgentConstruction::accepts_chat_capable_backend", "[clean]") {
  FakeChatBackend backend(Replies{});
  const NativeAgent agent(backend, ToolRegistry({g2c::tools::make_calculator()}),
                          native_options({.plan = false}));
  CHECK(&agent.backend() == &backend);
  std::ostringstream text;
  text << agent;
  CHECK(text.str() == "NativeAgent(backend=fake-chat, tools=['calculator'], max_steps=8)");
}

TEST_CASE("TestNativeAgentConstruction::rejects_bad_max_steps", "[clean]") {
  FakeChatBackend backend(Replies{});
  CHECK_THROWS_AS(
      NativeAgent(backend, ToolRegistry(), native_options({.max_steps = 0, .plan = false})),
      AgentError);
}

TEST_CASE("TestNativeAgentRun::dispatches_a_tool_call") {
  FakeChatBackend backend(Replies{{"", {calculator_call("12 * 9")}}, {"12 * 9 is 108.", {}}});
  auto options = native_options({.max_steps = 5, .plan = false});
  options.sampling.temperature = 0.0;
  const auto result = NativeAgent(backend, calculator_registry(), options).run("what is 12*9?");
  CHECK(result.stopped_reason == "final_answer");
  CHECK(result.final_answer == "12 * 9 is 108.");
  REQUIRE(result.steps.size() == 2);
  REQUIRE(result.steps[0].action.has_value());
  CHECK(result.steps[0].action->tool() == "calculator");
  REQUIRE(result.steps[0].observation.has_value());
  CHECK(result.steps[0].observation->output() == "108");
  CHECK_FALSE(result.steps[0].observation->is_error());
  CHECK(backend.calls[0].options.temperature == 0.0);
}

TEST_CASE("TestNativeAgentRun::final_answer_from_content_when_no_tool_calls", "[clean]") {
  FakeChatBackend backend(Replies{{"the answer is 42", {}}});
  const auto result =
      NativeAgent(backend, calculator_registry(), native_options({.max_steps = 4, .plan = false}))
          .run("x");
  CHECK(result.final_answer == "the answer is 42");
  CHECK(result.stopped_reason == "final_answer");
  REQUIRE(result.steps.size() == 1);
  CHECK_FALSE(result.steps[0].action.has_value());
}

TEST_CASE("TestNativeAgentRun::thought_carried_from_chat_content") {
  FakeChatBackend backend(
      Replies{{"I should compute this.", {calculator_call("1+1")}}, {"done", {}}});
  const auto result =
      NativeAgent(backend, calculator_registry(), native_options({.max_steps = 4, .plan = false}))
          .run("compute 1+1");
  CHECK(result.steps.at(0).thought == "I should compute this.");
}

TEST_CASE("TestNativeAgentRun::loop_detection_stops_on_duplicate_action") {
  FakeChatBackend backend(Replies{{"", {calculator_call("2+2")}}, {"", {calculator_call("2+2")}}});
  const auto result =
      NativeAgent(backend, calculator_registry(), native_options({.max_steps = 5, .plan = false}))
          .run("x");
  CHECK(result.stopped_reason == "duplicate_action");
  CHECK(result.steps.size() == 2);
}

TEST_CASE("TestNativeAgentRun::max_steps_hit") {
  std::vector<FakeChatBackend::Reply> replies;
  for (int i = 0; i < 10; ++i) replies.push_back({"", {calculator_call(std::to_string(i))}});
  FakeChatBackend backend(replies);
  const auto result =
      NativeAgent(backend, calculator_registry(),
                  native_options({.max_steps = 3, .plan = false, .loop_detection = false}))
          .run("x");
  CHECK(result.stopped_reason == "max_steps");
  CHECK_FALSE(result.final_answer.has_value());
  CHECK(result.steps.size() == 3);
}

TEST_CASE("TestNativeAgentRun::empty_response_stuck_step", "[clean]") {
  FakeChatBackend backend(Replies{{"", {}}, {"recovered", {}}});
  const auto result =
      NativeAgent(backend, calculator_registry(),
                  native_options({.max_steps = 4, .plan = false, .halt_on_stuck = false}))
          .run("x");
  CHECK(result.stopped_reason == "final_answer");
  CHECK(result.final_answer == "recovered");
  REQUIRE(result.steps.size() == 2);
  CHECK(result.steps[0].parse_error.has_value());
  CHECK_FALSE(result.steps[0].action.has_value());
  CHECK_FALSE(result.steps[0].final_answer.has_value());
}

TEST_CASE("TestNativeAgentRun::halt_on_stuck", "[clean]") {
  FakeChatBackend backend(Replies{{"", {}}});
  const auto result =
      NativeAgent(backend, calculator_registry(),
                  native_options({.max_steps = 4, .plan = false, .halt_on_stuck = true}))
          .run("x");
  CHECK(result.stopped_reason == "no_progress");
  CHECK(result.steps.size() == 1);
}

TEST_CASE("TestNativeAgentRun::messages_grow_with_history") {
  FakeChatBackend backend(Replies{{"", {calculator_call("1+1")}}, {"ok done", {}}});
  NativeAgent(backend, calculator_registry(), native_options({.max_steps = 4, .plan = false}))
      .run("hi");
  REQUIRE(backend.calls.size() == 2);
  const auto& turn1 = backend.calls[0].messages;
  REQUIRE(turn1.size() == 2);
  CHECK(turn1[0]["role"] == "system");
  CHECK(turn1[1]["role"] == "user");
  const auto& turn2 = backend.calls[1].messages;
  std::vector<std::string> roles;
  for (const auto& message : turn2) roles.push_back(message["role"]);
  CHECK(roles == std::vector<std::string>{"system", "user", "assistant", "tool"});
  CHECK(turn2[2]["tool_calls"][0]["function"]["name"] == "calculator");
  CHECK(turn2[3]["name"] == "calculator");
  CHECK(turn2[3]["content"] == "2");
}

TEST_CASE("TestNativeAgentRun::tools_passed_as_ollama_specs", "[clean]") {
  FakeChatBackend backend(Replies{{"hi", {}}});
  NativeAgent(backend, calculator_registry(), native_options({.plan = false})).run("x");
  const auto& specs = backend.calls.at(0).tools;
  REQUIRE((specs.is_array() && specs.size() == 1));
  CHECK(specs[0]["type"] == "function");
  CHECK(specs[0]["function"]["name"] == "calculator");
}

TEST_CASE("TestNativeAgentRun::think_param_forwarded", "[clean]") {
  FakeChatBackend backend(Replies{{"hi", {}}});
  auto options = native_options({.plan = false});
  options.think = false;
  NativeAgent(backend, calculator_registry(), options).run("x");
  CHECK(backend.calls.at(0).options.think == false);
}

TEST_CASE("TestNativeAgentRun::think_default_none", "[clean]") {
  FakeChatBackend backend(Replies{{"hi", {}}});
  NativeAgent(backend, calculator_registry(), native_options({.plan = false})).run("x");
  CHECK_FALSE(backend.calls.at(0).options.think.has_value());
}

TEST_CASE("TestNativeAgentRun::metadata_includes_channel_native", "[clean]") {
  FakeChatBackend backend(Replies{{"done", {}}});
  const auto result =
      NativeAgent(backend, calculator_registry(), native_options({.plan = false})).run("x");
  CHECK(result.metadata["channel"] == "native");
  CHECK(result.metadata.contains("n_tool_calls"));
  CHECK(result.metadata.contains("backend_name"));
}

TEST_CASE("TestNativeAgentRun::recovers_from_validation_error") {
  FakeChatBackend backend(
      Replies{{"", {{{"name", "calculator"}, {"arguments", {{"expr", "1+1"}}}}}},
              {"", {calculator_call("1+1")}},
              {"the answer is 2", {}}});
  const auto result =
      NativeAgent(backend, calculator_registry(), native_options({.max_steps = 5, .plan = false}))
          .run("compute 1+1");
  CHECK(result.final_answer == "the answer is 2");
  REQUIRE(result.steps.size() == 3);
  CHECK(result.steps[0].observation->is_error());
  CHECK_FALSE(result.steps[1].observation->is_error());
  CHECK(result.steps[1].observation->output() == "2");
}

TEST_CASE("TestNativeAgentRun::default_system_used_when_not_overridden", "[clean]") {
  FakeChatBackend backend(Replies{{"hi", {}}});
  NativeAgent(backend, calculator_registry(), native_options({.plan = false})).run("x");
  const std::string system = backend.calls.at(0).messages[0]["content"];
  CHECK_THAT(system, Contains(std::string(NATIVE_DEFAULT_AGENT_SYSTEM)));
  // Not the ReAct prompt: its markers would pull the model toward writing calls as text.
  CHECK_THAT(system, !Contains("Thought:") && !Contains("Action Input:"));
}

TEST_CASE("TestNativeAgentRun::custom_system_override", "[clean]") {
  FakeChatBackend backend(Replies{{"ok", {}}});
  auto options = native_options({.plan = false});
  options.system = "CUSTOM SYSTEM";
  NativeAgent(backend, ToolRegistry(), options).run("x");
  CHECK(backend.calls.at(0).messages[0]["content"].get<std::string>().starts_with("CUSTOM SYSTEM"));
}

TEST_CASE("TestNativeAgentRun::rescues_tool_call_emitted_as_content") {
  FakeChatBackend backend(
      Replies{{R"({"name": "calculator", "parameters": {"expression": "2 + 2"}})", {}},
              {"the answer is 4", {}}});
  const auto result =
      NativeAgent(backend, calculator_registry(), native_options({.max_steps = 4, .plan = false}))
          .run("what is 2+2?");
  CHECK(result.stopped_reason == "final_answer");
  CHECK(result.final_answer == "the answer is 4");
  REQUIRE(result.steps.at(0).action.has_value());
  CHECK(result.steps[0].action->tool() == "calculator");
  REQUIRE(result.steps[0].observation.has_value());
  CHECK(result.steps[0].observation->output() == "4");
  CHECK(result.metadata["n_rescued_calls"] == 1);
}

TEST_CASE("TestNativeAgentRun::rescue_uses_arguments_or_parameters_key") {
  FakeChatBackend backend(
      Replies{{R"({"name": "calculator", "arguments": {"expression": "5 + 5"}})", {}}, {"10", {}}});
  const auto result =
      NativeAgent(backend, calculator_registry(), native_options({.max_steps = 4, .plan = false}))
          .run("what is 5+5?");
  REQUIRE(result.steps.at(0).action.has_value());
  CHECK(result.steps[0].observation->output() == "10");
}

TEST_CASE("TestNativeAgentRun::no_rescue_when_content_is_plain_text", "[clean]") {
  FakeChatBackend backend(Replies{{"the answer is 42", {}}});
  const auto result =
      NativeAgent(backend, calculator_registry(), native_options({.max_steps = 4, .plan = false}))
          .run("x");
  CHECK(result.stopped_reason == "final_answer");
  CHECK(result.final_answer == "the answer is 42");
  CHECK(result.metadata["n_rescued_calls"] == 0);
}

TEST_CASE("TestNativeAgentRun::structured_calls_preferred_over_rescue") {
  FakeChatBackend backend(Replies{{R"({"name": "calculator", "parameters": {"expression": "999"}})",
                                   {calculator_call("1 + 1")}},
                                  {"done", {}}});
  const auto result =
      NativeAgent(backend, calculator_registry(), native_options({.max_steps = 4, .plan = false}))
          .run("x");
  REQUIRE(result.steps.at(0).action.has_value());
  CHECK(result.steps[0].action->arguments() == Json{{"expression", "1 + 1"}});
  CHECK(result.metadata["n_rescued_calls"] == 0);
}

TEST_CASE("TestNativeAgentRun::metadata_includes_rescue_count", "[clean]") {
  FakeChatBackend backend(Replies{{"hi", {}}});
  const auto result =
      NativeAgent(backend, calculator_registry(), native_options({.plan = false})).run("x");
  CHECK(result.metadata["n_rescued_calls"] == 0);
}

// ---------------------------------------------------------------------------------------------
// What module 19 offers.

TEST_CASE("TestModuleExports::all_exports_are_importable", "[clean]") {
  // Everything the Python edition exports is reachable from g2c/agent/agent.h and native.h.
  CHECK_FALSE(DEFAULT_AGENT_SYSTEM.empty());
  CHECK_FALSE(DEFAULT_PLANNING_PROMPT.empty());
  CHECK_FALSE(NATIVE_DEFAULT_AGENT_SYSTEM.empty());
  STATIC_REQUIRE(std::is_class_v<Action> && std::is_class_v<Agent> && std::is_class_v<AgentError> &&
                 std::is_class_v<AgentRunResult> && std::is_class_v<AgentStep> &&
                 std::is_class_v<NativeAgent> && std::is_class_v<Observation> &&
                 std::is_class_v<ParsedStep> && std::is_class_v<Plan> &&
                 std::is_class_v<Scratchpad>);
  const auto extract =
      static_cast<std::optional<Plan> (*)(std::string_view, std::string_view)>(&extract_plan);
  CHECK(extract != nullptr);
  CHECK(&make_plan != nullptr);
  CHECK(&render_plan_block != nullptr);
  CHECK(&render_planning_prompt != nullptr);
  CHECK(&render_system_prompt != nullptr);
  const auto parse = static_cast<ParsedStep (*)(std::string_view)>(&parse_react_step);
  CHECK(parse != nullptr);
}

TEST_CASE("TestModuleExports::action_uses_attribute_named_tool", "[clean]") {
  // Action's field is tool, not name (module 18's ToolCall has name).
  CHECK(Action("x", Json::object()).tool() == "x");
}

TEST_CASE("TestModuleExports::observation_is_error_default_false", "[clean]") {
  CHECK_FALSE(Observation("ok").is_error());
}

TEST_CASE("TestModuleExports::tool_error_is_distinct_from_agent_error", "[clean]") {
  STATIC_REQUIRE_FALSE(std::is_base_of_v<g2c::tools::ToolError, AgentError>);
  STATIC_REQUIRE_FALSE(std::is_base_of_v<AgentError, g2c::tools::ToolError>);
}

TEST_CASE("each_step_is_shown_as_soon_as_it_is_recorded") {
  // options.on_step sees every step once, in order, as it is recorded: a call with its
  // observation before the next backend call; the plan is not a step. A terminal shows the
  // tools at work this way.
  std::vector<std::string> seen;
  const auto watch = [&seen](const AgentStep& step) {
    seen.push_back(step.action ? step.action->tool() + " = " +
                                     (step.observation ? step.observation->output() : "?")
                               : step.final_answer.value_or("(stuck)"));
  };
  FakeChatBackend chat(Replies{{"", {calculator_call("12 * 9")}}, {"12 * 9 is 108.", {}}});
  std::size_t calls_when_first_seen = 0;
  auto native = native_options({.max_steps = 5, .plan = true});
  native.on_step = [&](const AgentStep& step) {
    if (seen.empty()) calls_when_first_seen = chat.calls.size();
    watch(step);
  };
  NativeAgent(chat, calculator_registry(), native).run("what is 12*9?");
  CHECK(seen == std::vector<std::string>{"calculator = 108", "12 * 9 is 108."});
  CHECK(calls_when_first_seen == 1);

  seen.clear();
  FakeBackend text(
      {"Goal: multiply\n1. use the calculator",
       "Thought: multiply\nAction: calculator\nAction Input: {\"expression\": \"12 * 9\"}",
       "Thought: done\nFinal Answer: 108"});
  AgentOptions react{.max_steps = 5, .plan = true};
  react.on_step = watch;
  Agent(text, calculator_registry(), react).run("what is 12*9?");
  CHECK(seen == std::vector<std::string>{"calculator = 108", "108"});
}
