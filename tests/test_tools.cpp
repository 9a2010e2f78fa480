// Module 18 course tests: tools (g2c/tools), one for one with the Python edition's
// tests/test_tools.py, then this edition's additions (the calculator's grammar and Python's
// arithmetic, the sandbox against symbolic links, run_python's limits). Each test is named
// "<Class>::<name>" (the Python method without "test_"). Suggested order, as the Python file
// suggests it: validate_arguments (TestValidateArguments*), parse_tool_calls (TestParseToolCalls*),
// calculator_evaluate (TestCalculator*, TestMakeCalculator), run_text_loop (TestRunWithTools*,
// TestIntegrationSmoke). Tests tagged [clean] pass on the scaffold. A scripted backend (canned
// completions, every prompt kept) and a scripted chat backend stand in for models: no model, no
// network.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/inference/backend.h"
#include "g2c/tools/tools.h"
#include "g2c_test.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using g2c::inference::Backend;
using g2c::inference::BackendInfo;
using g2c::inference::ChatBackend;
using g2c::inference::ChatOptions;
using g2c::inference::ChatResult;
using g2c::inference::CompletionOptions;
using g2c::inference::InferenceResult;
using g2c::tools::CalcTokenKind;
using g2c::tools::CalcTokens;
using g2c::tools::calculator_evaluate;
using g2c::tools::DEFAULT_SYSTEM;
using g2c::tools::dispatch_tool_call;
using g2c::tools::format_tool_results;
using g2c::tools::make_calculator;
using g2c::tools::make_read_file;
using g2c::tools::make_run_python;
using g2c::tools::make_web_search;
using g2c::tools::Number;
using g2c::tools::parse_tool_calls;
using g2c::tools::ReadFileOptions;
using g2c::tools::render_tools_for_ollama;
using g2c::tools::render_tools_for_prompt;
using g2c::tools::run_with_tools;
using g2c::tools::RunPythonOptions;
using g2c::tools::RunWithToolsOptions;
using g2c::tools::Tool;
using g2c::tools::tool_to_ollama_spec;
using g2c::tools::ToolCall;
using g2c::tools::ToolError;
using g2c::tools::ToolRegistry;
using g2c::tools::ToolResult;
using g2c::tools::ToolRunResult;
using g2c::tools::ToolStep;
using g2c::tools::UnknownToolError;
using g2c::tools::validate_arguments;
using g2c::tools::ZeroDivisionError;
using Json = nlohmann::json;

namespace {

/// One complete() call as the scripted backend saw it.
struct RecordedCall {
  std::string prompt;
  CompletionOptions options;
};

/// A backend that answers with canned completions in order and keeps every prompt; asked once too
/// often, it fails the test loudly.
class FakeBackend : public Backend {
 public:
  explicit FakeBackend(std::vector<std::string> completions,
                       BackendInfo info = BackendInfo("fake", "fake-model"))
      : completions_(std::move(completions)), info_(std::move(info)) {}

  const BackendInfo& info() const override { return info_; }

  InferenceResult complete(const std::string& prompt, const CompletionOptions& options) override {
    if (next_ >= completions_.size()) {
      throw std::logic_error("FakeBackend exhausted: prompt was " + prompt);
    }
    const std::string completion = completions_[next_++];
    calls.push_back({prompt, options});
    return InferenceResult(prompt, completion, words(prompt), words(completion), 1.0, info_);
  }

  std::vector<RecordedCall> calls;

 private:
  static std::int64_t words(const std::string& text) {
    std::int64_t count = 0;
    bool in_word = false;
    for (const char c : text) {
      const bool space = c == ' ' || c == '\n' || c == '\t';
      if (!space && !in_word) ++count;
      in_word = !space;
    }
    return count;
  }

  std::vector<std::string> completions_;
  std::size_t next_ = 0;
  BackendInfo info_;
};

/// One chat_with_tools call as the scripted chat backend saw it.
struct RecordedChat {
  Json messages;
  Json tools;
  ChatOptions options;
};

/// A ChatBackend with canned replies, each (content, tool calls as {"name", "arguments"}); its
/// complete() fails, proving a test that reaches it took the wrong channel.
class FakeChatBackend : public ChatBackend {
 public:
  struct Reply {
    std::string content;
    Json tool_calls = Json::array();
  };

  explicit FakeChatBackend(std::vector<Reply> replies)
      : replies_(std::move(replies)), info_("fake-chat", "fake-chat-model") {}

  const BackendInfo& info() const override { return info_; }

  InferenceResult complete(const std::string&, const CompletionOptions&) override {
    throw std::logic_error("native path should call chat_with_tools, not complete");
  }

  ChatResult chat_with_tools(const Json& messages, const Json& tools,
                             const ChatOptions& options) override {
    if (next_ >= replies_.size()) {
      throw std::logic_error("FakeChatBackend exhausted: last messages=" + messages.dump());
    }
    const auto& reply = replies_[next_++];
    calls.push_back({messages, tools, options});
    auto parsed = Json::array();
    for (std::size_t i = 0; i < reply.tool_calls.size(); ++i) {
      const auto& raw = reply.tool_calls[i];
      parsed.push_back({{"name", raw.at("name")},
                        {"arguments", raw.value("arguments", Json::object())},
                        {"call_id", raw.value("call_id", "call_" + std::to_string(i) + "_xx")}});
    }
    return ChatResult(messages, reply.content, parsed,
                      static_cast<std::int64_t>(messages.dump().size()), 1, 1.0, info_);
  }

  std::vector<RecordedChat> calls;

 private:
  std::vector<Reply> replies_;
  std::size_t next_ = 0;
  BackendInfo info_;
};

Json echo_schema() {
  return {{"type", "object"},
          {"properties", {{"text", {{"type", "string"}, {"description", "input"}}}}},
          {"required", {"text"}}};
}

/// The Python tests' _make_tool: an "echo" tool by default.
Tool make_tool(std::string name = "echo", std::string description = "Echo the input",
               std::optional<Json> parameters = std::nullopt,
               g2c::tools::ToolFunction func = nullptr) {
  if (!func) func = [](const Json& arguments) -> Json { return arguments.at("text"); };
  return Tool(std::move(name), std::move(description), parameters.value_or(echo_schema()),
              std::move(func));
}

Tool tool_for_type(const std::string& type_tag) {
  return make_tool(
      "echo", "Echo the input",
      Json{{"type", "object"}, {"properties", {{"v", {{"type", type_tag}}}}}, {"required", {"v"}}});
}

Json one_string_schema(const std::string& key) {
  return {{"type", "object"}, {"properties", {{key, {{"type", "string"}}}}}, {"required", {key}}};
}

/// pytest's tmp_path: a fresh folder, removed with everything in it at the end of the test. Its
/// parent is a folder of its own too, so a test may write "outside" the root without touching
/// anything else.
class TmpPath {
 public:
  TmpPath() {
    std::string pattern = (fs::temp_directory_path() / "g2c-tools-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    parent_ = pattern;
    fs::create_directory(parent_ / "root");
  }
  ~TmpPath() {
    std::error_code ignored;
    fs::remove_all(parent_, ignored);
  }
  TmpPath(const TmpPath&) = delete;
  TmpPath& operator=(const TmpPath&) = delete;

  fs::path path() const { return parent_ / "root"; }
  fs::path parent() const { return parent_; }

 private:
  fs::path parent_;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string call_text(const Tool& tool, const Json& arguments) {
  return tool.func()(arguments).get<std::string>();
}

const std::string kCalc22 =
    R"(<tool_call>{"name": "calculator", "arguments": {"expression": "2 + 2"}}</tool_call>)";

std::string calculator_call(const std::string& expression) {
  return R"(<tool_call>{"name": "calculator", "arguments": {"expression": ")" + expression +
         R"("}}</tool_call>)";
}

ToolRegistry calculator_registry() {
  return ToolRegistry({make_calculator()});
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Boilerplate: Tool, ToolCall, ToolResult, ToolError, ToolStep, ToolRunResult.

TEST_CASE("TestToolBoilerplate::construction", "[clean]") {
  const Tool t = make_tool();
  CHECK(t.name() == "echo");
  CHECK(t.description() == "Echo the input");
  CHECK(static_cast<bool>(t.func()));
  CHECK(t.parameters()["type"] == "object");
}

TEST_CASE("TestToolBoilerplate::frozen", "[clean]") {
  // Getters and no setters: assigning to a tool's name is a compile error.
  STATIC_REQUIRE(std::is_const_v<std::remove_reference_t<decltype(make_tool().name())>>);
  STATIC_REQUIRE(std::is_const_v<std::remove_reference_t<decltype(make_tool().parameters())>>);
  STATIC_REQUIRE(std::is_const_v<std::remove_reference_t<decltype(make_tool().func())>>);
  CHECK(make_tool().name() == "echo");
}

TEST_CASE("TestToolBoilerplate::rejects_empty_name", "[clean]") {
  CHECK_THROWS_MATCHES(Tool("", "x", Json::object(), [](const Json&) -> Json { return {}; }),
                       g2c::ValueError, MessageContains("name"));
}

TEST_CASE("TestToolBoilerplate::rejects_empty_description", "[clean]") {
  CHECK_THROWS_MATCHES(Tool("x", "", Json::object(), [](const Json&) -> Json { return {}; }),
                       g2c::ValueError, MessageContains("description"));
}

TEST_CASE("TestToolBoilerplate::rejects_non_dict_parameters", "[clean]") {
  CHECK_THROWS_MATCHES(Tool("x", "x", "not a dict", [](const Json&) -> Json { return {}; }),
                       g2c::ValueError, MessageContains("parameters"));
}

TEST_CASE("TestToolBoilerplate::rejects_non_callable_func", "[clean]") {
  CHECK_THROWS_MATCHES(Tool("x", "x", Json::object(), nullptr), g2c::ValueError,
                       MessageContains("callable"));
}

TEST_CASE("TestToolCallBoilerplate::construction", "[clean]") {
  const ToolCall c("calc", {{"x", 1}}, "call_0_abcd1234");
  CHECK(c.name() == "calc");
  CHECK(c.arguments() == Json{{"x", 1}});
  CHECK(c.call_id() == "call_0_abcd1234");
}

TEST_CASE("TestToolCallBoilerplate::frozen", "[clean]") {
  STATIC_REQUIRE(std::is_const_v<
                 std::remove_reference_t<decltype(ToolCall("c", Json::object(), "x").name())>>);
  STATIC_REQUIRE(
      std::is_const_v<
          std::remove_reference_t<decltype(ToolCall("c", Json::object(), "x").arguments())>>);
  CHECK(ToolCall("c", Json::object(), "x").name() == "c");
}

TEST_CASE("TestToolResultBoilerplate::construction", "[clean]") {
  const ToolResult r("x", "calc", "4");
  CHECK(r.call_id() == "x");
  CHECK(r.name() == "calc");
  CHECK(r.output() == "4");
  CHECK_FALSE(r.is_error());
}

TEST_CASE("TestToolResultBoilerplate::error_flag", "[clean]") {
  CHECK(ToolResult("x", "calc", "bad input", true).is_error());
}

TEST_CASE("TestToolResultBoilerplate::frozen", "[clean]") {
  STATIC_REQUIRE(
      std::is_const_v<std::remove_reference_t<decltype(ToolResult("x", "c", "4").output())>>);
  STATIC_REQUIRE_FALSE(std::is_lvalue_reference_v<decltype(ToolResult("x", "c", "4").is_error())>);
  CHECK(ToolResult("x", "c", "4").output() == "4");
}

TEST_CASE("TestToolErrorBoilerplate::is_exception", "[clean]") {
  const ToolError e("msg");
  STATIC_REQUIRE(std::is_base_of_v<std::exception, ToolError>);
  CHECK(std::string(e.what()) == "msg");
}

TEST_CASE("TestToolStepBoilerplate::construction", "[clean]") {
  const BackendInfo info("fake", "m");
  const InferenceResult ir("p", "c", 1, 1, 1.0, info);
  const ToolStep step{"hello", {}, {}, ir};
  CHECK(step.completion == "hello");
  CHECK(step.tool_calls.empty());
  CHECK(step.tool_results.empty());
  CHECK(step.inference.prompt == "p");
  CHECK(step.inference.completion == "c");
  CHECK(step.inference.backend == info);
}

TEST_CASE("TestToolRunResultBoilerplate::construction", "[clean]") {
  const ToolRunResult r{"hi", "hello", {}, "no_more_calls"};
  CHECK(r.user_message == "hi");
  CHECK(r.final_answer == "hello");
  CHECK(r.steps.empty());
  CHECK(r.stopped_reason == "no_more_calls");
  CHECK(r.metadata == Json::object());
}

// ---------------------------------------------------------------------------------------------
// ToolRegistry.

TEST_CASE("TestToolRegistry::empty", "[clean]") {
  const ToolRegistry r;
  CHECK(r.size() == 0);
  CHECK(r.names().empty());
  CHECK(r.tools().empty());
  CHECK_FALSE(r.contains("calculator"));
}

TEST_CASE("TestToolRegistry::register_one", "[clean]") {
  ToolRegistry r;
  r.register_tool(make_tool("calc"));
  CHECK(r.size() == 1);
  CHECK(r.contains("calc"));
  CHECK(r.get("calc").name() == "calc");
  CHECK(r.get("calc").description() == "Echo the input");
}

TEST_CASE("TestToolRegistry::register_via_constructor", "[clean]") {
  const ToolRegistry r({make_tool("a"), make_tool("b")});
  CHECK(r.names() == std::vector<std::string>{"a", "b"});
  REQUIRE(r.tools().size() == 2);
  CHECK(r.tools()[0].name() == "a");
  CHECK(r.tools()[1].name() == "b");
}

TEST_CASE("TestToolRegistry::register_duplicate_raises", "[clean]") {
  ToolRegistry r;
  r.register_tool(make_tool("dup"));
  CHECK_THROWS_MATCHES(r.register_tool(make_tool("dup")), g2c::ValueError,
                       MessageContains("already registered"));
}

TEST_CASE("TestToolRegistry::register_non_tool_raises", "[clean]") {
  // Python refuses a non-Tool with a TypeError at run time; here it does not compile.
  STATIC_REQUIRE_FALSE(
      std::is_invocable_v<decltype(&ToolRegistry::register_tool), ToolRegistry&, std::string>);
  STATIC_REQUIRE_FALSE(
      std::is_invocable_v<decltype(&ToolRegistry::register_tool), ToolRegistry&, const char*>);
}

TEST_CASE("TestToolRegistry::get_unknown_raises_keyerror", "[clean]") {
  const ToolRegistry r({make_tool("a")});
  CHECK_THROWS_MATCHES(r.get("unknown"), UnknownToolError, MessageContains("no tool named"));
}

TEST_CASE("TestToolRegistry::iteration_preserves_order", "[clean]") {
  const ToolRegistry r({make_tool("a"), make_tool("b"), make_tool("c")});
  std::vector<std::string> seen;
  for (const auto& tool : r) seen.push_back(tool.name());
  CHECK(seen == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("TestToolRegistry::repr", "[clean]") {
  std::ostringstream out;
  out << ToolRegistry({make_tool("a"), make_tool("b")});
  CHECK(out.str() == "ToolRegistry(['a', 'b'])");
}

TEST_CASE("TestToolRegistry::tools_property_returns_snapshot", "[clean]") {
  const ToolRegistry r({make_tool("a")});
  auto snapshot = r.tools();
  snapshot.push_back(make_tool("b"));
  CHECK(r.names() == std::vector<std::string>{"a"});
}

// ---------------------------------------------------------------------------------------------
// validate_arguments — yours.

TEST_CASE("TestValidateArguments::accepts_valid_arguments") {
  CHECK(validate_arguments(make_tool(), {{"text", "hello"}}) == Json{{"text", "hello"}});
}

TEST_CASE("TestValidateArguments::returns_a_dict") {
  CHECK(validate_arguments(make_tool(), {{"text", "hi"}}).is_object());
}

TEST_CASE("TestValidateArguments::returns_copy_not_input") {
  const Json arguments = {{"text", "hi"}};
  Json out = validate_arguments(make_tool(), arguments);
  out["text"] = "modified";
  CHECK(arguments == Json{{"text", "hi"}});
}

TEST_CASE("TestValidateArguments::empty_required_passes_with_empty_args") {
  const Tool t = make_tool(
      "echo", "Echo the input",
      Json{{"type", "object"}, {"properties", Json::object()}, {"required", Json::array()}});
  CHECK(validate_arguments(t, Json::object()) == Json::object());
}

TEST_CASE("TestValidateArguments::missing_required_raises") {
  CHECK_THROWS_MATCHES(validate_arguments(make_tool(), Json::object()), ToolError,
                       MessageContains("missing required"));
}

// The model fixes its call from this one message: every missing name in it, in the schema's order,
// not the first one found (which costs the model a round trip per name).
TEST_CASE("TestValidateArguments::missing_required_names_every_missing_argument") {
  const Tool t =
      make_tool("pair", "Two required strings",
                Json{{"type", "object"},
                     {"properties", {{"a", {{"type", "string"}}}, {"b", {{"type", "string"}}}}},
                     {"required", {"a", "b"}}});
  INFO(
      "validate_arguments: collect every name in `required` that the arguments lack, then throw "
      "once with the whole list, python_repr'd as Python prints a list: ['a', 'b']");
  CHECK_THROWS_MATCHES(validate_arguments(t, Json::object()), ToolError,
                       MessageContains("missing required arguments: ['a', 'b']"));
}

TEST_CASE("TestValidateArguments::unknown_argument_raises") {
  INFO(
      "validate_arguments: an argument that is not one of the schema's properties is refused "
      "(ToolError naming it) before any type is checked; never look up its property");
  CHECK_THROWS_MATCHES(validate_arguments(make_tool(), {{"text", "hi"}, {"extra", "no"}}),
                       ToolError, MessageContains("unknown"));
}

TEST_CASE("TestValidateArguments::non_dict_arguments_raises") {
  CHECK_THROWS_AS(validate_arguments(make_tool(), "not a dict"), ToolError);
  CHECK_THROWS_AS(validate_arguments(make_tool(), Json::array({"text", "hi"})), ToolError);
}

TEST_CASE("TestValidateArguments::non_object_schema_raises") {
  const Tool t = make_tool("echo", "Echo the input", Json{{"type", "array"}});
  CHECK_THROWS_MATCHES(validate_arguments(t, Json::object()), ToolError, MessageContains("object"));
}

namespace {
Tool path_tool() {
  return make_tool(
      "echo", "Echo the input",
      Json{{"type", "object"},
           {"properties", {{"path", {{"type", "string"}}}, {"max_chars", {{"type", "integer"}}}}},
           {"required", {"path"}}});
}
}  // namespace

TEST_CASE("TestValidateArguments::optional_argument_omitted") {
  CHECK(validate_arguments(path_tool(), {{"path", "x"}}) == Json{{"path", "x"}});
}

TEST_CASE("TestValidateArguments::optional_argument_provided") {
  CHECK(validate_arguments(path_tool(), {{"path", "x"}, {"max_chars", 100}}) ==
        Json{{"path", "x"}, {"max_chars", 100}});
}

TEST_CASE("TestValidateArgumentsTypeChecks::string_accepts_str") {
  CHECK(validate_arguments(tool_for_type("string"), {{"v", "hello"}}) == Json{{"v", "hello"}});
}

TEST_CASE("TestValidateArgumentsTypeChecks::string_rejects_int") {
  CHECK_THROWS_MATCHES(validate_arguments(tool_for_type("string"), {{"v", 42}}), ToolError,
                       MessageContains("string"));
}

TEST_CASE("TestValidateArgumentsTypeChecks::integer_accepts_int") {
  CHECK(validate_arguments(tool_for_type("integer"), {{"v", 42}}) == Json{{"v", 42}});
}

TEST_CASE("TestValidateArgumentsTypeChecks::integer_rejects_float") {
  CHECK_THROWS_MATCHES(validate_arguments(tool_for_type("integer"), {{"v", 3.14}}), ToolError,
                       MessageContains("integer"));
  // 3.0 is a float in JSON as in Python: not an integer either.
  CHECK_THROWS_AS(validate_arguments(tool_for_type("integer"), Json::parse(R"({"v": 3.0})")),
                  ToolError);
}

TEST_CASE("TestValidateArgumentsTypeChecks::integer_rejects_str") {
  CHECK_THROWS_MATCHES(validate_arguments(tool_for_type("integer"), {{"v", "42"}}), ToolError,
                       MessageContains("integer"));
}

TEST_CASE("TestValidateArgumentsTypeChecks::integer_rejects_bool") {
  // nlohmann's get<int>() turns true into 1: a validator that asks whether the value converts
  // would accept it. The JSON type is what counts.
  CHECK_THROWS_MATCHES(validate_arguments(tool_for_type("integer"), {{"v", true}}), ToolError,
                       MessageContains("bool"));
}

TEST_CASE("TestValidateArgumentsTypeChecks::number_accepts_int") {
  CHECK(validate_arguments(tool_for_type("number"), {{"v", 42}}) == Json{{"v", 42}});
}

TEST_CASE("TestValidateArgumentsTypeChecks::number_accepts_float") {
  CHECK(validate_arguments(tool_for_type("number"), {{"v", 3.14}}) == Json{{"v", 3.14}});
}

TEST_CASE("TestValidateArgumentsTypeChecks::number_rejects_str") {
  CHECK_THROWS_AS(validate_arguments(tool_for_type("number"), {{"v", "3.14"}}), ToolError);
}

TEST_CASE("TestValidateArgumentsTypeChecks::number_rejects_bool") {
  CHECK_THROWS_MATCHES(validate_arguments(tool_for_type("number"), {{"v", true}}), ToolError,
                       MessageContains("bool"));
}

TEST_CASE("TestValidateArgumentsTypeChecks::boolean_accepts_true") {
  CHECK(validate_arguments(tool_for_type("boolean"), {{"v", true}}) == Json{{"v", true}});
}

TEST_CASE("TestValidateArgumentsTypeChecks::boolean_accepts_false") {
  CHECK(validate_arguments(tool_for_type("boolean"), {{"v", false}}) == Json{{"v", false}});
}

TEST_CASE("TestValidateArgumentsTypeChecks::boolean_rejects_int") {
  CHECK_THROWS_MATCHES(validate_arguments(tool_for_type("boolean"), {{"v", 1}}), ToolError,
                       MessageContains("boolean"));
}

TEST_CASE("TestValidateArgumentsTypeChecks::unknown_type_tag_raises") {
  CHECK_THROWS_MATCHES(validate_arguments(tool_for_type("widget"), {{"v", "x"}}), ToolError,
                       MessageContains("widget"));
}

TEST_CASE("TestValidateArgumentsErrors::error_message_names_missing_key") {
  const Tool t =
      make_tool("echo", "Echo the input",
                Json{{"type", "object"},
                     {"properties", {{"a", {{"type", "string"}}}, {"b", {{"type", "string"}}}}},
                     {"required", {"a", "b"}}});
  CHECK_THROWS_MATCHES(validate_arguments(t, {{"a", "x"}}), ToolError, MessageContains("'b'"));
}

TEST_CASE("TestValidateArgumentsErrors::error_message_names_extra_key") {
  CHECK_THROWS_MATCHES(validate_arguments(make_tool(), {{"text", "x"}, {"junk", 1}}), ToolError,
                       MessageContains("junk"));
}

TEST_CASE("TestValidateArgumentsErrors::error_message_names_bad_type") {
  CHECK_THROWS_MATCHES(validate_arguments(make_tool(), {{"text", 42}}), ToolError,
                       MessageContains("text"));
}

// ---------------------------------------------------------------------------------------------
// render_tools_for_prompt.

TEST_CASE("TestRenderToolsForPrompt::empty", "[clean]") {
  const auto out = render_tools_for_prompt({});
  CHECK_THAT(out, Contains("none"));
  CHECK_THAT(out, Contains("<tool_call>"));
}

TEST_CASE("TestRenderToolsForPrompt::single_tool_includes_name_and_description", "[clean]") {
  const auto out = render_tools_for_prompt({make_tool("calc", "A calculator")});
  CHECK_THAT(out, Contains("calc"));
  CHECK_THAT(out, Contains("A calculator"));
}

TEST_CASE("TestRenderToolsForPrompt::includes_call_format_marker", "[clean]") {
  CHECK_THAT(render_tools_for_prompt({make_tool()}), Contains("<tool_call>"));
}

TEST_CASE("TestRenderToolsForPrompt::includes_schema_as_json", "[clean]") {
  const auto out = render_tools_for_prompt({make_tool()});
  CHECK_THAT(out, Contains("\"properties\""));
  CHECK_THAT(out, Contains("\"string\""));
}

TEST_CASE("TestRenderToolsForPrompt::multiple_tools", "[clean]") {
  const auto out = render_tools_for_prompt({make_tool("a"), make_tool("b")});
  REQUIRE(out.find("- a:") != std::string::npos);
  REQUIRE(out.find("- b:") != std::string::npos);
  CHECK(out.find("- a:") < out.find("- b:"));
}

// ---------------------------------------------------------------------------------------------
// parse_tool_calls — yours.

TEST_CASE("TestParseToolCalls::empty_string_returns_empty_list") {
  CHECK(parse_tool_calls("").empty());
}

TEST_CASE("TestParseToolCalls::no_tool_call_returns_empty") {
  CHECK(parse_tool_calls("just plain text, no tools").empty());
}

TEST_CASE("TestParseToolCalls::single_call") {
  const auto calls =
      parse_tool_calls(R"(<tool_call>{"name": "calc", "arguments": {"x": 1}}</tool_call>)");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].name() == "calc");
  CHECK(calls[0].arguments() == Json{{"x", 1}});
  CHECK_FALSE(calls[0].call_id().empty());
}

TEST_CASE("TestParseToolCalls::call_id_is_unique_within_parse") {
  const auto calls = parse_tool_calls(R"(<tool_call>{"name": "a", "arguments": {}}</tool_call>)"
                                      R"(<tool_call>{"name": "b", "arguments": {}}</tool_call>)");
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].call_id() != calls[1].call_id());
}

TEST_CASE("TestParseToolCalls::multiple_calls_in_order") {
  const auto calls = parse_tool_calls(
      "<tool_call>{\"name\": \"first\", \"arguments\": {}}</tool_call>\n"
      "some text in between\n"
      "<tool_call>{\"name\": \"second\", \"arguments\": {}}</tool_call>");
  INFO(
      "parse_tool_calls: each block ends at the first </tool_call> after its <tool_call> "
      "(text.find from the body's start, not rfind), and the search for the next block starts "
      "after that closing tag");
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].name() == "first");
  CHECK(calls[1].name() == "second");
}

TEST_CASE("TestParseToolCalls::multiline_json_body") {
  const auto calls = parse_tool_calls(R"(<tool_call>
{
  "name": "calc",
  "arguments": {"expression": "1 + 1"}
}
</tool_call>)");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].name() == "calc");
  CHECK(calls[0].arguments() == Json{{"expression", "1 + 1"}});
}

TEST_CASE("TestParseToolCalls::arguments_default_to_empty_dict") {
  const auto calls = parse_tool_calls(R"(<tool_call>{"name": "ping"}</tool_call>)");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].arguments() == Json::object());
}

TEST_CASE("TestParseToolCalls::text_before_and_after_call") {
  const auto calls = parse_tool_calls(
      "Let me think.\n"
      "<tool_call>{\"name\": \"calc\", \"arguments\": {\"x\": 1}}</tool_call>\n"
      "After the call.");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].name() == "calc");
}

TEST_CASE("TestParseToolCallsEdgeCases::malformed_json_skipped") {
  CHECK(parse_tool_calls("<tool_call>not even json</tool_call>").empty());
}

TEST_CASE("TestParseToolCallsEdgeCases::missing_name_skipped") {
  CHECK(parse_tool_calls(R"(<tool_call>{"arguments": {}}</tool_call>)").empty());
}

TEST_CASE("TestParseToolCallsEdgeCases::empty_name_skipped") {
  CHECK(parse_tool_calls(R"(<tool_call>{"name": "", "arguments": {}}</tool_call>)").empty());
}

TEST_CASE("TestParseToolCallsEdgeCases::non_string_name_skipped") {
  CHECK(parse_tool_calls(R"(<tool_call>{"name": 42, "arguments": {}}</tool_call>)").empty());
}

TEST_CASE("TestParseToolCallsEdgeCases::non_dict_arguments_skipped") {
  CHECK(parse_tool_calls(R"(<tool_call>{"name": "x", "arguments": "string"}</tool_call>)").empty());
}

TEST_CASE("TestParseToolCallsEdgeCases::non_object_top_level_skipped") {
  CHECK(parse_tool_calls("<tool_call>[1, 2, 3]</tool_call>").empty());
}

TEST_CASE("TestParseToolCallsEdgeCases::mixed_good_and_bad") {
  const auto calls = parse_tool_calls(
      "<tool_call>not json</tool_call>"
      R"(<tool_call>{"name": "ok", "arguments": {}}</tool_call>)"
      R"(<tool_call>{"arguments": {}}</tool_call>)");
  INFO(
      "parse_tool_calls: a malformed block (not JSON, no name) is skipped with `continue`, not the "
      "end of the search: the next <tool_call> is looked for after the bad block's </tool_call>, "
      "so the good block between two bad ones is the one call");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].name() == "ok");
}

namespace {
template <typename Text>
constexpr bool parses = requires(Text text) {
  parse_tool_calls(text);
};
}  // namespace

TEST_CASE("TestParseToolCallsEdgeCases::non_str_input_raises", "[clean]") {
  // Python raises TypeError for None; here a null pointer (or a number) does not compile.
  STATIC_REQUIRE_FALSE(parses<std::nullptr_t>);
  STATIC_REQUIRE_FALSE(parses<int>);
  STATIC_REQUIRE(parses<std::string>);
}

TEST_CASE("TestParseToolCallsEdgeCases::whitespace_around_body_ok") {
  const auto calls =
      parse_tool_calls("<tool_call>  \n  {\"name\": \"x\", \"arguments\": {}}  \n  </tool_call>");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].name() == "x");
}

// ---------------------------------------------------------------------------------------------
// format_tool_results.

TEST_CASE("TestFormatToolResults::empty", "[clean]") {
  CHECK(format_tool_results({}).empty());
}

TEST_CASE("TestFormatToolResults::single_success", "[clean]") {
  const auto out = format_tool_results({ToolResult("cid", "calc", "4")});
  CHECK_THAT(out, Contains("<tool_result"));
  CHECK_THAT(out, Contains("calc"));
  CHECK_THAT(out, Contains("4"));
  CHECK_THAT(out, Contains("cid"));
}

TEST_CASE("TestFormatToolResults::single_error_uses_tool_error_tag", "[clean]") {
  const auto out = format_tool_results({ToolResult("cid", "calc", "bad", true)});
  CHECK_THAT(out, Contains("<tool_error"));
  CHECK_THAT(out, !Contains("<tool_result"));
}

TEST_CASE("TestFormatToolResults::multiple_results_separated", "[clean]") {
  const auto out = format_tool_results({ToolResult("a", "x", "1"), ToolResult("b", "y", "2")});
  std::size_t count = 0;
  for (auto at = out.find("<tool_result"); at != std::string::npos;
       at = out.find("<tool_result", at + 1)) {
    ++count;
  }
  CHECK(count == 2);
  CHECK(out.find("name=\"x\"") < out.find("name=\"y\""));
}

// ---------------------------------------------------------------------------------------------
// calculator_evaluate — yours.

TEST_CASE("TestCalculatorEvaluate::simple_addition") {
  CHECK(calculator_evaluate("1 + 1") == 2);
}

TEST_CASE("TestCalculatorEvaluate::subtraction") {
  CHECK(calculator_evaluate("10 - 3") == 7);
}

TEST_CASE("TestCalculatorEvaluate::multiplication") {
  CHECK(calculator_evaluate("4 * 5") == 20);
}

TEST_CASE("TestCalculatorEvaluate::division") {
  CHECK(calculator_evaluate("7 / 2") == 3.5);
}

TEST_CASE("TestCalculatorEvaluate::floor_division") {
  const Number value = calculator_evaluate("7 // 2");
  CHECK(value == 3);
  CHECK(value.is_integer());
}

TEST_CASE("TestCalculatorEvaluate::modulo") {
  CHECK(calculator_evaluate("10 % 3") == 1);
}

TEST_CASE("TestCalculatorEvaluate::power") {
  CHECK(calculator_evaluate("2 ** 10") == 1024);
}

TEST_CASE("TestCalculatorEvaluate::unary_minus") {
  CHECK(calculator_evaluate("-5") == -5);
}

TEST_CASE("TestCalculatorEvaluate::unary_plus") {
  CHECK(calculator_evaluate("+5") == 5);
}

TEST_CASE("TestCalculatorEvaluate::parentheses") {
  CHECK(calculator_evaluate("(2 + 3) * 4") == 20);
}

TEST_CASE("TestCalculatorEvaluate::nested_parentheses") {
  CHECK(calculator_evaluate("((1 + 2) * (3 + 4))") == 21);
}

TEST_CASE("TestCalculatorEvaluate::float_constant") {
  CHECK(calculator_evaluate("3.14 * 2") == 6.28);
}

TEST_CASE("TestCalculatorEvaluate::combined_unary_and_binary") {
  CHECK(calculator_evaluate("-5 + 3") == -2);
}

TEST_CASE("TestCalculatorEvaluate::division_by_zero_propagates") {
  // Not a ToolError: the expression was allowed, the arithmetic failed, and a caller can tell
  // the two apart.
  STATIC_REQUIRE_FALSE(std::is_base_of_v<ToolError, ZeroDivisionError>);
  CHECK_THROWS_AS(calculator_evaluate("1 / 0"), ZeroDivisionError);
}

TEST_CASE("TestCalculatorRejection::rejects_name") {
  CHECK_THROWS_MATCHES(calculator_evaluate("x + 1"), ToolError, MessageContains("'x'"));
}

TEST_CASE("TestCalculatorRejection::rejects_function_call") {
  CHECK_THROWS_AS(calculator_evaluate("abs(-1)"), ToolError);
}

TEST_CASE("TestCalculatorRejection::rejects_attribute_access") {
  CHECK_THROWS_AS(calculator_evaluate("(1).bit_length()"), ToolError);
}

TEST_CASE("TestCalculatorRejection::rejects_dunder_attribute") {
  CHECK_THROWS_AS(calculator_evaluate("(1).__class__"), ToolError);
}

TEST_CASE("TestCalculatorRejection::rejects_string_constant") {
  CHECK_THROWS_AS(calculator_evaluate("'hello'"), ToolError);
}

TEST_CASE("TestCalculatorRejection::rejects_boolean_constant") {
  CHECK_THROWS_AS(calculator_evaluate("True"), ToolError);
}

TEST_CASE("TestCalculatorRejection::rejects_subscript") {
  CHECK_THROWS_AS(calculator_evaluate("[1, 2, 3][0]"), ToolError);
}

TEST_CASE("TestCalculatorRejection::rejects_comparison") {
  CHECK_THROWS_AS(calculator_evaluate("1 < 2"), ToolError);
}

TEST_CASE("TestCalculatorRejection::rejects_lambda") {
  CHECK_THROWS_AS(calculator_evaluate("(lambda x: x)(1)"), ToolError);
}

TEST_CASE("TestCalculatorRejection::rejects_logical_not") {
  CHECK_THROWS_AS(calculator_evaluate("not 0"), ToolError);
}

TEST_CASE("TestCalculatorRejection::rejects_bitwise_not") {
  CHECK_THROWS_AS(calculator_evaluate("~5"), ToolError);
}

TEST_CASE("TestCalculatorRejection::rejects_matmul") {
  CHECK_THROWS_AS(calculator_evaluate("5 @ 3"), ToolError);
}

TEST_CASE("TestCalculatorRejection::rejects_syntax_error") {
  CHECK_THROWS_MATCHES(calculator_evaluate("1 +"), ToolError, MessageContains("parse"));
}

TEST_CASE("TestCalculatorRejection::rejects_walrus") {
  CHECK_THROWS_AS(calculator_evaluate("(x := 5)"), ToolError);
}

TEST_CASE("TestCalculatorRejection::rejects_dunder_import") {
  CHECK_THROWS_AS(calculator_evaluate("__import__('os')"), ToolError);
}

// This edition's additions: the grammar's precedence and associativity (no Python test checks
// 1 + 2 * 3), Python's rules for integers and floats, and the bounds that keep a model's expression
// from hanging or wrapping around.

TEST_CASE("calculator_follows_pythons_precedence_and_associativity") {
  CHECK(calculator_evaluate("1 + 2 * 3") == 7);
  CHECK(calculator_evaluate("2 * 3 + 4") == 10);
  CHECK(calculator_evaluate("10 - 3 - 2") == 5);
  CHECK(calculator_evaluate("12 / 3 / 2") == 2.0);
  CHECK(calculator_evaluate("100 // 7 % 3") == 2);
  CHECK(calculator_evaluate("2 ** 3 ** 2") == 512);
  CHECK(calculator_evaluate("-2 ** 2") == -4);
  CHECK(calculator_evaluate("(-2) ** 2") == 4);
  CHECK(calculator_evaluate("2 ** -1") == 0.5);
  CHECK(calculator_evaluate("- - 3") == 3);
  CHECK(calculator_evaluate("2 * -3") == -6);
  CHECK_THROWS_AS(calculator_evaluate("1 2"), ToolError);
  CHECK_THROWS_AS(calculator_evaluate("(1 + 2"), ToolError);
  CHECK_THROWS_AS(calculator_evaluate("1 + 2)"), ToolError);
  CHECK_THROWS_AS(calculator_evaluate(""), ToolError);
}

TEST_CASE("calculator_follows_pythons_integer_and_float_rules") {
  CHECK(calculator_evaluate("-7 // 2") == -4);  // toward minus infinity, not toward zero
  CHECK(calculator_evaluate("-7 % 3") == 2);    // the remainder takes the divisor's sign
  CHECK(calculator_evaluate("7 % -3") == -2);
  CHECK(calculator_evaluate("7.5 // 2").str() == "3.0");
  CHECK(calculator_evaluate("6 / 2").str() == "3.0");  // / always gives a float
  CHECK(calculator_evaluate("2 ** 10").str() == "1024");
  CHECK(calculator_evaluate("0.1 + 0.2").str() == "0.30000000000000004");
  CHECK(calculator_evaluate("1_000 + .5").str() == "1000.5");
  CHECK(calculator_evaluate("1e3").str() == "1000.0");
  CHECK(calculator_evaluate("2 ** 0.5") == std::sqrt(2.0));
  CHECK(calculator_evaluate("13 + 28").str() == "41");
  // Past 2**53 an int is not exact as a double: Python divides the two ints exactly and rounds
  // once (converting each first gives ...293.5).
  CHECK(calculator_evaluate("139631862 * 272715347 / 14").str() == "2719982264113294.0");
}

TEST_CASE("calculator_refuses_what_would_overflow_or_hang") {
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_MATCHES(calculator_evaluate("2 ** 1000000000"), ToolError,
                       MessageContains("64-bit"));
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  CHECK(took.count() < 0.5);  // refused, not computed
  CHECK_THROWS_AS(calculator_evaluate("9223372036854775807 + 1"), ToolError);
  CHECK_THROWS_AS(calculator_evaluate("99999999999999999999"), ToolError);
  CHECK_THROWS_AS(calculator_evaluate("(-8) ** 0.5"), ToolError);  // complex in Python
  CHECK_THROWS_AS(calculator_evaluate("0 ** -1"), ZeroDivisionError);
  CHECK_THROWS_AS(calculator_evaluate("5 % 0"), ZeroDivisionError);
  CHECK_THROWS_MATCHES(calculator_evaluate(std::string(200, '(') + "1" + std::string(200, ')')),
                       ToolError, MessageContains("deep"));
  CHECK_THROWS_MATCHES(calculator_evaluate(std::string(5000, '1')), ToolError,
                       MessageContains("characters"));
  CHECK(calculator_evaluate(std::string(100, '(') + "1" + std::string(100, ')')) == 1);
}

TEST_CASE("calculator_tool_reports_refusals_and_zero_division_to_the_model") {
  const ToolRegistry registry = calculator_registry();
  const auto divided =
      dispatch_tool_call(registry, ToolCall("calculator", {{"expression", "1 / 0"}}, "c"));
  CHECK(divided.is_error());
  CHECK(divided.output() == "ZeroDivisionError: division by zero");
  const auto named =
      dispatch_tool_call(registry, ToolCall("calculator", {{"expression", "os"}}, "c"));
  CHECK(named.is_error());
  CHECK_THAT(named.output(), Contains("'os'"));
}

// ---------------------------------------------------------------------------------------------
// make_calculator.

TEST_CASE("TestMakeCalculator::returns_a_tool", "[clean]") {
  CHECK(make_calculator().name() == "calculator");
}

TEST_CASE("TestMakeCalculator::schema_requires_expression", "[clean]") {
  const Tool t = make_calculator();
  CHECK(t.parameters()["properties"].contains("expression"));
  CHECK(t.parameters()["required"] == Json::array({"expression"}));
}

TEST_CASE("TestMakeCalculator::callable_returns_string") {
  const Json out = make_calculator().func()({{"expression", "2 + 2"}});
  REQUIRE(out.is_string());
  CHECK(out == "4");
}

// ---------------------------------------------------------------------------------------------
// make_read_file.

TEST_CASE("TestMakeReadFile::returns_a_tool", "[clean]") {
  const TmpPath tmp;
  CHECK(make_read_file({tmp.path()}).name() == "read_file");
}

TEST_CASE("TestMakeReadFile::reads_existing_file", "[clean]") {
  const TmpPath tmp;
  write_text(tmp.path() / "hello.txt", "hello world");
  CHECK(call_text(make_read_file({tmp.path()}), {{"path", "hello.txt"}}) == "hello world");
}

TEST_CASE("TestMakeReadFile::reads_nested_file", "[clean]") {
  const TmpPath tmp;
  fs::create_directory(tmp.path() / "sub");
  write_text(tmp.path() / "sub" / "nested.txt", "nested content");
  CHECK(call_text(make_read_file({tmp.path()}), {{"path", "sub/nested.txt"}}) == "nested content");
}

TEST_CASE("TestMakeReadFile::missing_file_raises_toolerror", "[clean]") {
  const TmpPath tmp;
  CHECK_THROWS_MATCHES(call_text(make_read_file({tmp.path()}), {{"path", "nope.txt"}}), ToolError,
                       MessageContains("not found"));
}

TEST_CASE("TestMakeReadFile::directory_raises_toolerror", "[clean]") {
  const TmpPath tmp;
  fs::create_directory(tmp.path() / "sub");
  CHECK_THROWS_MATCHES(call_text(make_read_file({tmp.path()}), {{"path", "sub"}}), ToolError,
                       MessageContains("not a file"));
}

TEST_CASE("TestMakeReadFile::truncates_to_max_chars", "[clean]") {
  const TmpPath tmp;
  write_text(tmp.path() / "big.txt", std::string(10000, 'x'));
  const auto out = call_text(make_read_file({tmp.path(), 100}), {{"path", "big.txt"}});
  CHECK(out.size() < 10000);
  CHECK(out == std::string(100, 'x') + "\n... (truncated)");
}

TEST_CASE("TestMakeReadFile::default_max_chars_returns_full", "[clean]") {
  const TmpPath tmp;
  write_text(tmp.path() / "small.txt", "small content");
  CHECK(call_text(make_read_file({tmp.path()}), {{"path", "small.txt"}}) == "small content");
}

TEST_CASE("TestMakeReadFile::max_chars_not_in_model_facing_schema", "[clean]") {
  const TmpPath tmp;
  const Tool t = make_read_file({tmp.path()});
  CHECK_FALSE(t.parameters()["properties"].contains("max_chars"));
  CHECK(t.parameters()["required"] == Json::array({"path"}));
}

TEST_CASE("TestMakeReadFile::nonpositive_max_chars_rejected", "[clean]") {
  const TmpPath tmp;
  CHECK_THROWS_MATCHES(make_read_file({tmp.path(), 0}), g2c::ValueError,
                       MessageContains("max_chars"));
}

TEST_CASE("TestMakeReadFileSandbox::rejects_absolute_path", "[clean]") {
  const TmpPath tmp;
  CHECK_THROWS_AS(call_text(make_read_file({tmp.path()}), {{"path", "/etc/passwd"}}), ToolError);
}

TEST_CASE("TestMakeReadFileSandbox::rejects_dotdot_traversal", "[clean]") {
  const TmpPath tmp;
  write_text(tmp.parent() / "outside.txt", "secret");
  CHECK_THROWS_MATCHES(call_text(make_read_file({tmp.path()}), {{"path", "../outside.txt"}}),
                       ToolError, MessageContains("escape"));
}

TEST_CASE("TestMakeReadFileSandbox::rejects_empty_path", "[clean]") {
  const TmpPath tmp;
  CHECK_THROWS_AS(call_text(make_read_file({tmp.path()}), {{"path", ""}}), ToolError);
}

// ---------------------------------------------------------------------------------------------
// make_web_search.

TEST_CASE("TestMakeWebSearch::returns_a_tool", "[clean]") {
  CHECK(make_web_search().name() == "web_search");
}

TEST_CASE("TestMakeWebSearch::default_stub_returns_string", "[clean]") {
  const auto out = call_text(make_web_search(), {{"query", "anything"}});
  CHECK_THAT(out, Contains("stub"));
  CHECK_THAT(out, Contains("anything"));
}

TEST_CASE("TestMakeWebSearch::injection_overrides_default", "[clean]") {
  std::vector<std::string> called;
  const Tool t = make_web_search([&](const std::string& query) {
    called.push_back(query);
    return "results for " + query;
  });
  CHECK(call_text(t, {{"query", "quantum gravity"}}) == "results for quantum gravity");
  CHECK(called == std::vector<std::string>{"quantum gravity"});
}

TEST_CASE("TestMakeWebSearch::empty_query_raises", "[clean]") {
  CHECK_THROWS_AS(call_text(make_web_search(), {{"query", ""}}), ToolError);
}

TEST_CASE("TestMakeWebSearch::whitespace_only_query_raises", "[clean]") {
  CHECK_THROWS_AS(call_text(make_web_search(), {{"query", "   "}}), ToolError);
}

// ---------------------------------------------------------------------------------------------
// make_run_python: a real Python subprocess (the project's .venv, or $G2C_PYTHON).

TEST_CASE("TestMakeRunPython::returns_a_tool", "[clean]") {
  CHECK(make_run_python().name() == "run_python");
}

TEST_CASE("TestMakeRunPython::runs_simple_print", "[clean]") {
  CHECK_THAT(call_text(make_run_python(), {{"code", "print(2 + 2)"}}), Contains("4"));
}

TEST_CASE("TestMakeRunPython::no_output_handled", "[clean]") {
  CHECK_THAT(call_text(make_run_python(), {{"code", "x = 1"}}), Contains("no output"));
}

TEST_CASE("TestMakeRunPython::runtime_error_returned", "[clean]") {
  const auto out = call_text(make_run_python(), {{"code", "raise ValueError('boom')"}});
  CHECK_THAT(out, Contains("exit"));
  CHECK_THAT(out, Contains("ValueError"));
  CHECK_THAT(out, Contains("boom"));
}

TEST_CASE("TestMakeRunPython::timeout_returns_message", "[clean]") {
  RunPythonOptions options;
  options.timeout = 0.5;
  const auto start = std::chrono::steady_clock::now();
  const auto out = call_text(make_run_python(options), {{"code", "import time; time.sleep(5)"}});
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  CHECK_THAT(out, Contains("timed out"));
  CHECK(took.count() < 4.0);  // killed at the limit, not waited for
}

TEST_CASE("TestMakeRunPython::zero_timeout_rejected", "[clean]") {
  RunPythonOptions options;
  options.timeout = 0;
  CHECK_THROWS_AS(make_run_python(options), g2c::ValueError);
}

TEST_CASE("TestMakeRunPython::negative_timeout_rejected", "[clean]") {
  RunPythonOptions options;
  options.timeout = -1;
  CHECK_THROWS_AS(make_run_python(options), g2c::ValueError);
}

TEST_CASE("TestMakeRunPython::cwd_sets_subprocess_working_directory", "[clean]") {
  const TmpPath tmp;
  write_text(tmp.path() / "hello.txt", "hi\n");
  RunPythonOptions options;
  options.cwd = tmp.path();
  CHECK_THAT(
      call_text(make_run_python(options), {{"code", "print(open('hello.txt').read().strip())"}}),
      Contains("hi"));
}

TEST_CASE("TestMakeRunPython::missing_cwd_rejected", "[clean]") {
  const TmpPath tmp;
  RunPythonOptions options;
  options.cwd = tmp.path() / "does-not-exist";
  CHECK_THROWS_AS(make_run_python(options), g2c::ValueError);
}

TEST_CASE("TestMakeRunPython::path_arg_binds_data_variable", "[clean]") {
  const TmpPath tmp;
  write_text(tmp.path() / "sales.csv", "item,units,price\npen,3,2.0\nnotebook,2,5.0\n");
  RunPythonOptions options;
  options.cwd = tmp.path();
  CHECK_THAT(
      call_text(make_run_python(options),
                {{"code", "print(open(data).read().splitlines()[0])"}, {"path", "sales.csv"}}),
      Contains("item,units,price"));
}

TEST_CASE("TestMakeRunPython::path_arg_resolves_under_cwd", "[clean]") {
  const TmpPath tmp;
  fs::create_directory(tmp.path() / "sub");
  write_text(tmp.path() / "sub" / "x.txt", "inside\n");
  RunPythonOptions options;
  options.cwd = tmp.path();
  CHECK_THAT(call_text(make_run_python(options),
                       {{"code", "print(open(data).read().strip())"}, {"path", "sub/x.txt"}}),
             Contains("inside"));
}

TEST_CASE("TestMakeRunPython::path_arg_rejects_escape_attempts", "[clean]") {
  const TmpPath tmp;
  RunPythonOptions options;
  options.cwd = tmp.path();
  CHECK_THROWS_MATCHES(
      call_text(make_run_python(options), {{"code", "print('x')"}, {"path", "../outside.txt"}}),
      ToolError, MessageContains("escapes the allowed root"));
}

TEST_CASE("TestMakeRunPython::path_arg_missing_file_raises", "[clean]") {
  const TmpPath tmp;
  RunPythonOptions options;
  options.cwd = tmp.path();
  CHECK_THROWS_MATCHES(
      call_text(make_run_python(options), {{"code", "print(data)"}, {"path", "nope.txt"}}),
      ToolError, MessageContains("file not found"));
}

TEST_CASE("TestMakeRunPython::path_arg_must_be_nonempty", "[clean]") {
  const TmpPath tmp;
  RunPythonOptions options;
  options.cwd = tmp.path();
  CHECK_THROWS_MATCHES(call_text(make_run_python(options), {{"code", "print('x')"}, {"path", ""}}),
                       ToolError, MessageContains("non-empty"));
}

TEST_CASE("TestMakeRunPython::path_arg_appears_in_schema", "[clean]") {
  const Tool t = make_run_python();
  const auto& properties = t.parameters()["properties"];
  CHECK(properties.contains("path"));
  CHECK_FALSE(properties.contains("file"));
  CHECK(t.parameters()["required"] == Json::array({"code"}));
  CHECK(properties["path"]["type"] == "string");
}

TEST_CASE("TestMakeRunPython::path_arg_with_special_chars_handled", "[clean]") {
  const TmpPath tmp;
  write_text(tmp.path() / "has'quote.txt", "ok\n");
  RunPythonOptions options;
  options.cwd = tmp.path();
  CHECK_THAT(call_text(make_run_python(options),
                       {{"code", "print(open(data).read().strip())"}, {"path", "has'quote.txt"}}),
             Contains("ok"));
}

// ---------------------------------------------------------------------------------------------
// dispatch_tool_call (provided; it needs validate_arguments).

TEST_CASE("TestDispatchToolCall::successful_call") {
  const ToolRegistry registry({make_tool()});
  const auto result = dispatch_tool_call(registry, ToolCall("echo", {{"text", "hi"}}, "cid"));
  CHECK_FALSE(result.is_error());
  CHECK(result.output() == "hi");
  CHECK(result.call_id() == "cid");
  CHECK(result.name() == "echo");
}

TEST_CASE("TestDispatchToolCall::unknown_tool_returns_error", "[clean]") {
  const ToolRegistry registry({make_tool()});
  const auto result = dispatch_tool_call(registry, ToolCall("missing", Json::object(), "cid"));
  CHECK(result.is_error());
  CHECK_THAT(result.output(), Contains("missing"));
}

TEST_CASE("TestDispatchToolCall::invalid_args_returns_error") {
  const ToolRegistry registry({make_tool()});
  CHECK(dispatch_tool_call(registry, ToolCall("echo", Json::object(), "cid")).is_error());
}

TEST_CASE("TestDispatchToolCall::tool_raise_returns_error") {
  const ToolRegistry registry(
      {make_tool("boom", "Echo the input", one_string_schema("x"),
                 [](const Json&) -> Json { throw std::runtime_error("kaboom"); })});
  const auto result = dispatch_tool_call(registry, ToolCall("boom", {{"x", "yes"}}, "cid"));
  CHECK(result.is_error());
  CHECK_THAT(result.output(), Contains("runtime_error"));  // the exception's type
  CHECK_THAT(result.output(), Contains("kaboom"));
}

TEST_CASE("TestDispatchToolCall::output_is_stringified") {
  const ToolRegistry registry({make_tool("i", "Echo the input", one_string_schema("x"),
                                         [](const Json&) -> Json { return 42; })});
  const auto result = dispatch_tool_call(registry, ToolCall("i", {{"x", "x"}}, "cid"));
  CHECK_FALSE(result.is_error());
  CHECK(result.output() == "42");
}

TEST_CASE("TestDispatchToolCall::toolerror_returns_error_result") {
  const ToolRegistry registry(
      {make_tool("t", "Echo the input", one_string_schema("x"),
                 [](const Json&) -> Json { throw ToolError("bad input"); })});
  const auto result = dispatch_tool_call(registry, ToolCall("t", {{"x", "x"}}, "cid"));
  CHECK(result.is_error());
  CHECK_THAT(result.output(), Contains("bad input"));
}

// ---------------------------------------------------------------------------------------------
// run_with_tools, text format — run_text_loop is yours.

TEST_CASE("TestRunWithTools::no_tool_calls_returns_final_answer") {
  FakeBackend backend({"the answer is 42"});
  const auto result = run_with_tools(backend, ToolRegistry(), "what is the answer?");
  CHECK(result.final_answer == "the answer is 42");
  CHECK(result.stopped_reason == "no_more_calls");
  REQUIRE(result.steps.size() == 1);
  CHECK(result.steps[0].tool_calls.empty());
}

TEST_CASE("TestRunWithTools::single_tool_call_then_answer") {
  FakeBackend backend({kCalc22, "the result is 4"});
  const auto result = run_with_tools(backend, calculator_registry(), "what is 2+2?");
  CHECK(result.final_answer == "the result is 4");
  CHECK(result.stopped_reason == "no_more_calls");
  REQUIRE(result.steps.size() == 2);
  REQUIRE(result.steps[0].tool_calls.size() == 1);
  CHECK(result.steps[0].tool_calls[0].name() == "calculator");
  CHECK(result.steps[0].tool_results[0].output() == "4");
  CHECK_FALSE(result.steps[0].tool_results[0].is_error());
}

TEST_CASE("TestRunWithTools::user_message_in_initial_prompt") {
  FakeBackend backend({"done"});
  run_with_tools(backend, ToolRegistry(), "the user message");
  CHECK_THAT(backend.calls.at(0).prompt, Contains("the user message"));
}

TEST_CASE("TestRunWithTools::system_in_initial_prompt") {
  FakeBackend backend({"done"});
  RunWithToolsOptions options;
  options.system = "CUSTOM SYSTEM";
  run_with_tools(backend, ToolRegistry(), "x", options);
  CHECK_THAT(backend.calls.at(0).prompt, Contains("CUSTOM SYSTEM"));
}

TEST_CASE("TestRunWithTools::tool_block_in_initial_prompt") {
  FakeBackend backend({"done"});
  run_with_tools(backend, calculator_registry(), "x");
  CHECK_THAT(backend.calls.at(0).prompt, Contains("calculator"));
  CHECK_THAT(backend.calls.at(0).prompt, Contains("<tool_call>"));
}

TEST_CASE("TestRunWithTools::tool_result_appears_in_subsequent_prompt") {
  FakeBackend backend({kCalc22, "the result is 4"});
  run_with_tools(backend, calculator_registry(), "what is 2+2?");
  REQUIRE(backend.calls.size() == 2);
  const auto& second = backend.calls[1].prompt;
  CHECK_THAT(second, Contains("<tool_result"));
  CHECK_THAT(second, Contains("\n4\n"));
}

// The model reads its own call before the result: a loop that appends only the results leaves the
// model a <tool_result> answering a question it cannot see it asked.
TEST_CASE("TestRunWithTools::subsequent_prompt_is_prompt_call_then_result") {
  FakeBackend backend({kCalc22, "the result is 4"});
  const auto result = run_with_tools(backend, calculator_registry(), "what is 2+2?");
  REQUIRE(backend.calls.size() == 2);
  const std::string& first = backend.calls[0].prompt;
  const std::string& second = backend.calls[1].prompt;
  INFO(
      "run_text_loop: the next prompt is the whole previous prompt, then \" \" + the model's own "
      "completion (its <tool_call> block), then \"\\n\\n\" + format_tool_results(results) + "
      "\"\\n\\nAssistant:\" (loop.h)");
  CHECK_THAT(second, Catch::Matchers::StartsWith(first));
  CHECK_THAT(second, Contains(kCalc22));
  REQUIRE(result.steps.size() == 2);
  CHECK(second == first + " " + kCalc22 + "\n\n" +
                      format_tool_results(result.steps[0].tool_results) + "\n\nAssistant:");
}

TEST_CASE("TestRunWithTools::sampling_args_forwarded") {
  FakeBackend backend({"done"});
  RunWithToolsOptions options;
  options.sampling =
      CompletionOptions().with_max_new_tokens(99).with_temperature(0.7).with_top_k(10).with_top_p(
          0.95);
  run_with_tools(backend, ToolRegistry(), "x", options);
  const auto& sent = backend.calls.at(0).options;
  CHECK(sent.max_new_tokens == 99);
  CHECK(sent.temperature == 0.7);
  CHECK(sent.top_k == 10);
  CHECK(sent.top_p == 0.95);
}

TEST_CASE("TestRunWithTools::metadata_populated") {
  FakeBackend backend({"done"});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  CHECK(result.metadata["n_steps"] == 1);
  CHECK(result.metadata["n_tool_calls"] == 0);
  CHECK(result.metadata["tools_available"] == Json::array({"calculator"}));
  CHECK(result.metadata["backend_name"] == "fake");
  CHECK(result.metadata["backend_model_id"] == "fake-model");
}

TEST_CASE("TestRunWithToolsLoop::two_tool_calls_in_one_turn") {
  FakeBackend backend({calculator_call("1 + 1") + calculator_call("2 + 2"), "got both"});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  REQUIRE(result.steps.size() == 2);
  REQUIRE(result.steps[0].tool_calls.size() == 2);
  REQUIRE(result.steps[0].tool_results.size() == 2);
  CHECK(result.steps[0].tool_results[0].output() == "2");
  CHECK(result.steps[0].tool_results[1].output() == "4");
  CHECK(result.final_answer == "got both");
}

TEST_CASE("TestRunWithToolsLoop::chained_calls_across_steps") {
  FakeBackend backend({calculator_call("3 + 4"), calculator_call("7 * 2"), "the answer is 14"});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  CHECK(result.steps.size() == 3);
  CHECK(result.final_answer == "the answer is 14");
  CHECK(result.stopped_reason == "no_more_calls");
}

TEST_CASE("TestRunWithToolsLoop::max_steps_stops_loop") {
  FakeBackend backend(std::vector<std::string>(5, calculator_call("1 + 1")));
  RunWithToolsOptions options;
  options.max_steps = 3;
  const auto result = run_with_tools(backend, calculator_registry(), "x", options);
  CHECK(result.stopped_reason == "max_steps");
  CHECK_FALSE(result.final_answer.has_value());
  CHECK(result.steps.size() == 3);
}

TEST_CASE("TestRunWithToolsLoop::max_steps_zero_rejected", "[clean]") {
  FakeBackend backend({"x"});
  RunWithToolsOptions options;
  options.max_steps = 0;
  CHECK_THROWS_AS(run_with_tools(backend, ToolRegistry(), "x", options), g2c::ValueError);
}

TEST_CASE("TestRunWithToolsLoop::empty_user_message_rejected", "[clean]") {
  FakeBackend backend({"x"});
  CHECK_THROWS_AS(run_with_tools(backend, ToolRegistry(), ""), g2c::ValueError);
}

TEST_CASE("TestRunWithToolsErrors::unknown_tool_feedback") {
  FakeBackend backend({R"(<tool_call>{"name": "nonexistent", "arguments": {}}</tool_call>)",
                       "sorry, I tried a missing tool; the answer is 42"});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  REQUIRE(result.steps.size() == 2);
  CHECK(result.steps[0].tool_results.at(0).is_error());
  CHECK_THAT(backend.calls.at(1).prompt, Contains("<tool_error"));
  CHECK(result.final_answer.value_or("").starts_with("sorry"));
}

TEST_CASE("TestRunWithToolsErrors::bad_arguments_feedback") {
  FakeBackend backend(
      {R"(<tool_call>{"name": "calculator", "arguments": {"wrong_arg": "x"}}</tool_call>)",
       "I got a validation error; trying again is left to the agent loop in module 19"});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  CHECK(result.steps.at(0).tool_results.at(0).is_error());
}

TEST_CASE("TestIntegrationSmoke::full_pipeline_with_calculator") {
  const TmpPath tmp;
  write_text(tmp.path() / "fact.txt", "The answer is six.");
  FakeBackend backend(
      {"I will compute the value first.\n" + calculator_call("3 * 2"),
       "Now let me check the doc.\n"
       R"(<tool_call>{"name": "read_file", "arguments": {"path": "fact.txt"}}</tool_call>)",
       "Both tools agree: the answer is 6."});
  const ToolRegistry registry({make_calculator(), make_read_file({tmp.path()})});
  const auto result = run_with_tools(backend, registry, "what is 3 * 2?");
  CHECK(result.stopped_reason == "no_more_calls");
  CHECK(result.final_answer.value_or("").starts_with("Both tools"));
  REQUIRE(result.steps.size() == 3);
  CHECK(result.steps[0].tool_results.at(0).output() == "6");
  CHECK_FALSE(result.steps[0].tool_results.at(0).is_error());
  CHECK(result.steps[1].tool_results.at(0).output() == "The answer is six.");
  CHECK_FALSE(result.steps[1].tool_results.at(0).is_error());
}

TEST_CASE("TestIntegrationSmoke::recovery_from_bad_call") {
  FakeBackend backend({R"(<tool_call>{"name": "calculator", "arguments": {}}</tool_call>)",
                       calculator_call("1 + 1"), "the result is 2"});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  REQUIRE(result.steps.size() == 3);
  CHECK(result.steps[0].tool_results.at(0).is_error());
  CHECK_FALSE(result.steps[1].tool_results.at(0).is_error());
  CHECK(result.steps[1].tool_results.at(0).output() == "2");
  CHECK(result.final_answer == "the result is 2");
}

// ---------------------------------------------------------------------------------------------
// Native tool calling: Ollama's function specs.

TEST_CASE("TestToolToOllamaSpec::translates_to_function_spec", "[clean]") {
  const Tool tool = make_tool("calc", "adds numbers");
  const Json spec = tool_to_ollama_spec(tool);
  CHECK(spec["type"] == "function");
  CHECK(spec["function"]["name"] == "calc");
  CHECK(spec["function"]["description"] == "adds numbers");
  CHECK(spec["function"]["parameters"] == tool.parameters());
}

TEST_CASE("TestToolToOllamaSpec::parameters_dict_is_copied_not_shared", "[clean]") {
  const Tool tool = make_tool();
  Json spec = tool_to_ollama_spec(tool);
  spec["function"]["parameters"]["properties"]["new"] = {{"type", "string"}};
  CHECK_FALSE(tool.parameters()["properties"].contains("new"));
}

TEST_CASE("TestToolToOllamaSpec::render_tools_for_ollama_returns_list", "[clean]") {
  const Json specs = render_tools_for_ollama({make_tool("a"), make_tool("b")});
  REQUIRE(specs.size() == 2);
  CHECK(specs[0]["function"]["name"] == "a");
  CHECK(specs[1]["function"]["name"] == "b");
}

TEST_CASE("TestToolToOllamaSpec::render_tools_for_ollama_empty", "[clean]") {
  CHECK(render_tools_for_ollama({}) == Json::array());
}

// ---------------------------------------------------------------------------------------------
// run_with_tools, native channel (provided; the calculator and the validator are yours).

namespace {
FakeChatBackend::Reply calls_calculator(const std::string& expression) {
  return {"", Json::array({{{"name", "calculator"}, {"arguments", {{"expression", expression}}}}})};
}
}  // namespace

TEST_CASE("TestRunWithToolsNative::auto_detects_native_capability", "[clean]") {
  FakeChatBackend backend({{"just an answer"}});
  const auto result = run_with_tools(backend, calculator_registry(), "say hi");
  CHECK(result.metadata["channel"] == "native");
  CHECK(result.final_answer == "just an answer");
}

TEST_CASE("TestRunWithToolsNative::text_path_used_when_native_explicitly_disabled") {
  FakeChatBackend backend({{"ignored"}});
  RunWithToolsOptions options;
  options.use_native_tools = false;
  // The text path calls complete(), which this fake refuses: the proof of the channel taken.
  CHECK_THROWS_WITH(run_with_tools(backend, calculator_registry(), "x", options),
                    Contains("native path"));
  CHECK(backend.calls.empty());
}

TEST_CASE("TestRunWithToolsNative::native_requested_but_backend_unsupported", "[clean]") {
  FakeBackend backend({"irrelevant"});
  RunWithToolsOptions options;
  options.use_native_tools = true;
  CHECK_THROWS_MATCHES(run_with_tools(backend, calculator_registry(), "x", options),
                       g2c::ValueError, MessageContains("chat_with_tools"));
}

TEST_CASE("TestRunWithToolsNative::text_path_for_complete_only_backend") {
  FakeBackend backend({"the answer is 42"});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  CHECK(result.metadata["channel"] == "text-format");
}

TEST_CASE("TestRunWithToolsNative::dispatches_a_tool_call") {
  FakeChatBackend backend({calls_calculator("12 * 9"), {"12 * 9 is 108."}});
  const auto result = run_with_tools(backend, calculator_registry(), "what is 12*9?");
  CHECK(result.stopped_reason == "no_more_calls");
  CHECK(result.final_answer == "12 * 9 is 108.");
  REQUIRE(result.steps.size() == 2);
  CHECK(result.steps[0].tool_calls.at(0).name() == "calculator");
  CHECK(result.steps[0].tool_results.at(0).output() == "108");
  CHECK_FALSE(result.steps[0].tool_results.at(0).is_error());
}

TEST_CASE("TestRunWithToolsNative::messages_grow_across_turns") {
  FakeChatBackend backend({calls_calculator("1 + 1"), {"done"}});
  run_with_tools(backend, calculator_registry(), "x");
  REQUIRE(backend.calls.size() == 2);
  CHECK(backend.calls[0].messages.size() == 2);
  REQUIRE(backend.calls[1].messages.size() == 4);
  std::vector<std::string> roles;
  for (const auto& message : backend.calls[1].messages) roles.push_back(message["role"]);
  CHECK(roles == std::vector<std::string>{"system", "user", "assistant", "tool"});
  CHECK(backend.calls[1].messages[3]["content"] == "2");
}

TEST_CASE("TestRunWithToolsNative::tools_passed_as_ollama_specs", "[clean]") {
  FakeChatBackend backend({{"answer"}});
  run_with_tools(backend, calculator_registry(), "x");
  const Json& specs = backend.calls.at(0).tools;
  REQUIRE(specs.is_array());
  REQUIRE(specs.size() == 1);
  CHECK(specs[0]["type"] == "function");
  CHECK(specs[0]["function"]["name"] == "calculator");
}

TEST_CASE("TestRunWithToolsNative::validation_error_surfaces_as_tool_error") {
  FakeChatBackend backend(
      {{"", Json::array({{{"name", "calculator"}, {"arguments", {{"wrong_arg", "x"}}}}})},
       {"got an error; giving up"}});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  CHECK(result.steps.at(0).tool_results.at(0).is_error());
}

TEST_CASE("TestRunWithToolsNative::max_steps_hit") {
  FakeChatBackend backend({calls_calculator("1"), calls_calculator("1"), calls_calculator("1")});
  RunWithToolsOptions options;
  options.max_steps = 2;
  const auto result = run_with_tools(backend, calculator_registry(), "x", options);
  CHECK(result.stopped_reason == "max_steps");
  CHECK_FALSE(result.final_answer.has_value());
  CHECK(result.steps.size() == 2);
}

TEST_CASE("TestRunWithToolsNative::rescues_tool_call_from_content_with_parameters_key") {
  FakeChatBackend backend(
      {{R"({"name": "calculator", "parameters": {"expression": "2 + 2"}})"}, {"the answer is 4"}});
  const auto result = run_with_tools(backend, calculator_registry(), "what is 2+2?");
  CHECK(result.stopped_reason == "no_more_calls");
  CHECK(result.final_answer == "the answer is 4");
  REQUIRE(result.steps.size() == 2);
  CHECK(result.steps[0].tool_calls.at(0).name() == "calculator");
  CHECK(result.steps[0].tool_results.at(0).output() == "4");
  CHECK(result.metadata["n_rescued_calls"] == 1);
}

TEST_CASE("TestRunWithToolsNative::rescues_tool_call_with_arguments_key") {
  FakeChatBackend backend(
      {{R"({"name": "calculator", "arguments": {"expression": "3 * 3"}})"}, {"9"}});
  const auto result = run_with_tools(backend, calculator_registry(), "what is 3*3?");
  CHECK(result.steps.at(0).tool_calls.at(0).name() == "calculator");
  CHECK(result.steps.at(0).tool_results.at(0).output() == "9");
}

TEST_CASE("TestRunWithToolsNative::rescues_tool_call_from_markdown_fenced_content") {
  FakeChatBackend backend({{"Here is the tool call:\n```json\n"
                            R"({"name": "calculator", "parameters": {"expression": "5 + 6"}})"
                            "\n```"},
                           {"11"}});
  const auto result = run_with_tools(backend, calculator_registry(), "what is 5+6?");
  CHECK(result.steps.at(0).tool_calls.at(0).name() == "calculator");
  CHECK(result.steps.at(0).tool_results.at(0).output() == "11");
}

TEST_CASE("TestRunWithToolsNative::rescues_tool_call_with_leading_prose") {
  FakeChatBackend backend(
      {{R"(I will call the calculator. {"name": "calculator", "parameters": {"expression": "7"}})"},
       {"7"}});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  CHECK(result.steps.at(0).tool_calls.at(0).name() == "calculator");
}

TEST_CASE("TestRunWithToolsNative::no_rescue_when_content_is_plain_text", "[clean]") {
  FakeChatBackend backend({{"Plain text answer with no JSON in it."}});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  CHECK(result.stopped_reason == "no_more_calls");
  CHECK(result.final_answer == "Plain text answer with no JSON in it.");
  CHECK(result.metadata["n_rescued_calls"] == 0);
}

TEST_CASE("TestRunWithToolsNative::no_rescue_when_json_lacks_name", "[clean]") {
  FakeChatBackend backend({{R"(Here is data: {"x": 1, "y": 2})"}});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  CHECK(result.stopped_reason == "no_more_calls");
  CHECK(result.metadata["n_rescued_calls"] == 0);
}

TEST_CASE("TestRunWithToolsNative::structured_tool_calls_preferred_over_rescue") {
  FakeChatBackend backend(
      {{R"({"name": "calculator", "parameters": {"expression": "999"}})",
        Json::array({{{"name", "calculator"}, {"arguments", {{"expression", "1 + 1"}}}}})},
       {"done"}});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  CHECK(result.steps.at(0).tool_calls.at(0).arguments() == Json{{"expression", "1 + 1"}});
  CHECK(result.metadata["n_rescued_calls"] == 0);
}

TEST_CASE("TestRunWithToolsNative::native_metadata_includes_rescue_count", "[clean]") {
  FakeChatBackend backend({{"answer"}});
  const auto result = run_with_tools(backend, calculator_registry(), "x");
  CHECK(result.metadata["n_rescued_calls"] == 0);
}

TEST_CASE("TestRunWithToolsNative::think_param_forwarded_to_backend", "[clean]") {
  FakeChatBackend backend({{"done"}});
  RunWithToolsOptions options;
  options.think = false;
  run_with_tools(backend, calculator_registry(), "x", options);
  CHECK(backend.calls.at(0).options.think == std::optional<bool>(false));
}

TEST_CASE("TestRunWithToolsNative::think_param_default_is_none", "[clean]") {
  FakeChatBackend backend({{"done"}});
  run_with_tools(backend, calculator_registry(), "x");
  CHECK_FALSE(backend.calls.at(0).options.think.has_value());
}

// ---------------------------------------------------------------------------------------------
// The module's names, in one include.

TEST_CASE("TestModuleExports::public_names_importable", "[clean]") {
  // g2c/tools/tools.h declares every public name of the Python package; each use below fails to
  // compile if one is missing.
  STATIC_REQUIRE(std::is_class_v<Tool>);
  STATIC_REQUIRE(std::is_class_v<ToolCall>);
  STATIC_REQUIRE(std::is_class_v<ToolError>);
  STATIC_REQUIRE(std::is_class_v<ToolRegistry>);
  STATIC_REQUIRE(std::is_class_v<ToolResult>);
  STATIC_REQUIRE(std::is_class_v<ToolRunResult>);
  STATIC_REQUIRE(std::is_class_v<ToolStep>);
  STATIC_REQUIRE(!DEFAULT_SYSTEM.empty());
  STATIC_REQUIRE(std::is_function_v<decltype(calculator_evaluate)>);
  STATIC_REQUIRE(std::is_function_v<decltype(dispatch_tool_call)>);
  STATIC_REQUIRE(std::is_function_v<decltype(format_tool_results)>);
  STATIC_REQUIRE(std::is_function_v<decltype(make_calculator)>);
  STATIC_REQUIRE(std::is_function_v<decltype(make_read_file)>);
  STATIC_REQUIRE(std::is_function_v<decltype(make_run_python)>);
  STATIC_REQUIRE(std::is_function_v<decltype(make_web_search)>);
  STATIC_REQUIRE(parses<std::string_view>);
  STATIC_REQUIRE(std::is_function_v<decltype(render_tools_for_ollama)>);
  STATIC_REQUIRE(std::is_function_v<decltype(render_tools_for_prompt)>);
  STATIC_REQUIRE(std::is_function_v<decltype(run_with_tools)>);
  STATIC_REQUIRE(std::is_function_v<decltype(tool_to_ollama_spec)>);
  STATIC_REQUIRE(std::is_function_v<decltype(validate_arguments)>);
}

TEST_CASE("TestModuleExports::default_system_is_string", "[clean]") {
  CHECK_FALSE(DEFAULT_SYSTEM.empty());
  CHECK(DEFAULT_SYSTEM.find("<tool_call>") != std::string_view::npos);
}
