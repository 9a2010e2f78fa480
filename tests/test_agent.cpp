// Module 19 course tests: the agent (g2c/agent), one for one with the Python edition's
// tests/test_agent.py — its records, parse_react_step, extract_plan and make_plan, the scratchpad
// and the prompts so far (the agent's loop and the native agent follow) — then this edition's
// additions. Each test is named "<Class>::<name>" (the Python method without "test_"). Suggested
// order, as the Python file suggests it: parse_react_step (TestParseReactStep*), extract_plan
// (TestExtractPlan*, TestMakePlan), Scratchpad::render (TestScratchpadRender,
// TestScratchpadTruncation). Tests tagged [clean] pass on the scaffold. A scripted backend
// (canned completions, every prompt kept) stands in for a model.
#include <regex>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/agent/agent.h"
#include "g2c/core/errors.h"
#include "g2c/inference/backend.h"
#include "g2c/tools/tools.h"
#include "g2c_test.h"

using Catch::Matchers::Contains;
using g2c::agent::Action;
using g2c::agent::AgentError;
using g2c::agent::AgentRunResult;
using g2c::agent::AgentStep;
using g2c::agent::DEFAULT_AGENT_SYSTEM;
using g2c::agent::DEFAULT_PLANNING_PROMPT;
using g2c::agent::extract_plan;
using g2c::agent::make_plan;
using g2c::agent::Observation;
using g2c::agent::parse_react_step;
using g2c::agent::ParsedStep;
using g2c::agent::Plan;
using g2c::agent::render_plan_block;
using g2c::agent::render_planning_prompt;
using g2c::agent::render_system_prompt;
using g2c::agent::Scratchpad;
using g2c::inference::Backend;
using g2c::inference::BackendInfo;
using g2c::inference::CompletionOptions;
using g2c::inference::InferenceResult;
using g2c::tools::Tool;
using g2c::tools::ToolRegistry;
using Json = nlohmann::json;

namespace {

/// A backend that answers with canned completions in order and keeps every prompt.
class FakeBackend : public Backend {
 public:
  explicit FakeBackend(std::vector<std::string> completions)
      : completions_(std::move(completions)), info_("fake", "fake-model") {}
  const BackendInfo& info() const override { return info_; }
  InferenceResult complete(const std::string& prompt, const CompletionOptions&) override {
    if (next_ >= completions_.size()) {
      throw std::logic_error("FakeBackend exhausted: prompt was " + prompt);
    }
    prompts.push_back(prompt);
    return InferenceResult(prompt, completions_[next_++], 1, 1, 1.0, info_);
  }
  std::vector<std::string> prompts;

 private:
  std::vector<std::string> completions_;
  std::size_t next_ = 0;
  BackendInfo info_;
};

Tool echo_tool() {
  return Tool("echo", "Echo the argument back.",
              {{"type", "object"},
               {"properties", {{"text", {{"type", "string"}, {"description", "Text to echo."}}}}},
               {"required", {"text"}}},
              [](const Json& arguments) -> Json {
                return "echo: " + arguments.at("text").get<std::string>();
              });
}

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
  REQUIRE(p.has_value());
  CHECK(p->steps() == std::vector<std::string>{"first", "second", "third"});
}

TEST_CASE("TestExtractPlanEdgeCases::capped_at_5_steps") {
  const auto p = extract_plan("Goal: g\n1. a\n2. b\n3. c\n4. d\n5. e\n6. f\n7. g", "task");
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
  REQUIRE(backend.prompts.size() == 1);
  CHECK_THAT(backend.prompts[0], Contains("do something"));
  CHECK_THAT(backend.prompts[0], Contains("Goal:"));
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
  CHECK_THAT(backend.prompts.at(0), Contains("echo"));
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
  CHECK_FALSE(std::regex_search(out, std::regex("(^|\n)Thought:[ \t]*(\n|$)")));
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
  CHECK(out.size() <= 200);
  CHECK_THAT(out, Contains("step 9"));
  CHECK_THAT(out, !Contains("step 0 "));
}

TEST_CASE("TestScratchpadTruncation::keeps_at_least_last_block_even_if_over_cap") {
  Scratchpad sp(10);
  sp.append(make_step({.thought = "this is a long thought far exceeding the cap",
                       .action = Action("echo", {{"text", "x"}}),
                       .observation = Observation("long output that exceeds cap")}));
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
