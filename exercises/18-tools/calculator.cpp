// Exercise 18 — the model that cannot add, with a calculator. Arithmetic questions drawn with a
// seed (sums of two and three numbers, differences, products of two-digit numbers), answered by
// SmolLM2-135M-Instruct four ways:
//   alone        the question, the model's reply
//   text         the text-format tool loop (run_with_tools over complete(): the tools described in
//                the prompt, calls as <tool_call> blocks)
//   native       the native channel (chat_with_tools): the tools as specs in the system turn; a
//                call the model writes as JSON in its text is rescued
//   constrained  the native channel with the call decoded under module 18's JSON grammar
// A reply is right when its last number is the answer (module 15's numeric_match on that number:
// replies restate the operands first, "13 + 28 = 41"). For the tool conditions: how often the
// first step made a valid call (one that parsed, named the calculator and passed its schema), and
// how often the calculator's result was the answer. Tokens and latency per question, all steps
// summed. Greedy decoding: every number reruns exactly. Writes calculator.json and a figure.
#include <chrono>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/numbers.h"
#include "exercises/common/proportion.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/tools/tools.h"

namespace exercise_18_calculator {

namespace {

using g2c::exercises::Proportion;
using g2c::inference::PretrainedBackend;
using g2c::inference::ToolChoice;

/// What one condition measured over the questions.
struct Tally {
  Proportion correct, valid_call, tool_result_right;
  double tokens = 0, seconds = 0, steps = 0, rescued = 0;
  nlohmann::json replies = nlohmann::json::array();
};

nlohmann::json summary(const Tally& tally, bool tools, std::int64_t count) {
  nlohmann::json out = {{"correct", tally.correct.to_json()},
                        {"tokens_per_question", tally.tokens / static_cast<double>(count)},
                        {"seconds_per_question", tally.seconds / static_cast<double>(count)},
                        {"replies", tally.replies}};
  if (tools) {
    out["valid_first_call"] = tally.valid_call.to_json();
    out["calculator_result_right"] = tally.tool_result_right.to_json();
    out["steps_per_question"] = tally.steps / static_cast<double>(count);
    out["rescued_calls"] = tally.rescued;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 18: arithmetic questions answered by SmolLM2-135M-Instruct alone and through the\n"
      "calculator tool (text format, native channel, constrained calls): accuracy with 95%\n"
      "intervals, valid tool calls, tokens and latency. Writes calculator.json and a figure."};
  g2c::exercises::CommonOptions options;
  options.out = "results/18-tools";
  std::string model_name = "SmolLM2-135M-Instruct";
  std::optional<std::string> adapter;
  std::int64_t count = 60, max_steps = 3, max_tokens = 64;
  std::vector<std::string> conditions = {"alone", "text", "native", "constrained"};
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", model_name, "The pretrained model that answers");
  app.add_option("--adapter", adapter,
                 "A LoRA adapter file merged into the model (exercise 18b_tool_tuning's)");
  app.add_option("--questions", count, "How many questions (the four kinds in turn)").positive();
  app.add_option("--max-steps", max_steps, "Backend calls per question in the tool loop")
      .positive();
  app.add_option("--max-tokens", max_tokens, "Reply length limit per step, in tokens").positive();
  app.add_option("--conditions", conditions, "Which conditions to run")
      .one_of({"alone", "text", "native", "constrained"});
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (!device.is_cpu()) {
      throw g2c::ValueError("18_calculator runs SmolLM2 on the CPU; use --device cpu");
    }
    const auto questions = g2c::exercises::draw_arithmetic(count, options.seed);
    auto model =
        std::make_shared<g2c::pretrained::PretrainedModel>(g2c::pretrained::load_pretrained_model(
            model_name, g2c::pretrained::LoadOptions().packed(true),
            adapter ? std::optional<std::filesystem::path>(*adapter) : std::nullopt));
    if (adapter)
      fmt::print("model: {} ({} with the adapter {})\n", model->name, model_name, *adapter);
    PretrainedBackend free_backend(model);
    PretrainedBackend constrained_backend(
        model, g2c::inference::PretrainedBackendOptions().with_tool_choice(ToolChoice::Required));
    const g2c::tools::ToolRegistry registry({g2c::tools::make_calculator()});
    const auto sampling =
        g2c::inference::CompletionOptions().with_max_new_tokens(max_tokens).with_temperature(0);

    nlohmann::json results = nlohmann::json::object();
    nlohmann::json table = {{"condition", nlohmann::json::array()},
                            {"accuracy", nlohmann::json::array()},
                            {"valid_call", nlohmann::json::array()}};
    for (const auto& condition : conditions) {
      Tally tally;
      g2c::Progress progress(condition, static_cast<std::int64_t>(questions.size()),
                             !options.quiet);
      for (const auto& question : questions) {
        const auto start = std::chrono::steady_clock::now();
        std::string reply;
        nlohmann::json record = {{"question", question.text}, {"answer", question.answer}};
        if (condition == "alone") {
          const auto result = free_backend.complete(question.text, sampling);
          reply = result.completion;
          tally.tokens += static_cast<double>(result.completion_tokens.value_or(0));
        } else {
          g2c::tools::RunWithToolsOptions loop;
          loop.max_steps = max_steps;
          loop.sampling = sampling;
          loop.use_native_tools = condition != "text";
          auto& backend = condition == "constrained" ? constrained_backend : free_backend;
          const auto run = g2c::tools::run_with_tools(backend, registry, question.text, loop);
          reply = run.final_answer.value_or("");
          tally.steps += static_cast<double>(run.steps.size());
          tally.rescued += run.metadata.value("n_rescued_calls", 0.0);
          for (const auto& step : run.steps) {
            tally.tokens += static_cast<double>(step.inference.completion_tokens.value_or(0));
          }
          const auto& first = run.steps.front();
          const bool valid = !first.tool_results.empty() && !first.tool_results[0].is_error();
          tally.valid_call.hits += valid;
          ++tally.valid_call.total;
          const bool tool_right =
              valid && first.tool_results[0].output() == std::to_string(question.answer);
          tally.tool_result_right.hits += tool_right;
          ++tally.tool_result_right.total;
          auto steps = nlohmann::json::array();
          for (const auto& step : run.steps) {
            auto calls = nlohmann::json::array();
            for (std::size_t i = 0; i < step.tool_calls.size(); ++i) {
              calls.push_back({{"name", step.tool_calls[i].name()},
                               {"arguments", step.tool_calls[i].arguments()},
                               {"result", step.tool_results[i].output()},
                               {"error", step.tool_results[i].is_error()}});
            }
            steps.push_back({{"completion", step.completion}, {"calls", calls}});
          }
          record["steps"] = steps;
          record["stopped"] = run.stopped_reason;
        }
        tally.seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const bool ok = g2c::exercises::last_number_is(reply, question.answer);
        tally.correct.hits += ok;
        ++tally.correct.total;
        record["reply"] = reply;
        record["correct"] = ok;
        tally.replies.push_back(record);
        progress.update(tally.correct.total);
      }
      progress.finish();
      const bool tools = condition != "alone";
      fmt::print(
          "{:<12} right {}  valid first call {}  calculator right {}  {:.1f} tokens, "
          "{:.2f} s per question\n",
          condition, tally.correct.to_string(),
          tools ? tally.valid_call.to_string() : std::string("    -"),
          tools ? tally.tool_result_right.to_string() : std::string("    -"),
          tally.tokens / static_cast<double>(questions.size()),
          tally.seconds / static_cast<double>(questions.size()));
      results[condition] = summary(tally, tools, count);
      table["condition"].push_back(condition);
      table["accuracy"].push_back(tally.correct.value());
      table["valid_call"].push_back(tools ? tally.valid_call.value() : 0.0);
    }

    auto out = g2c::exercises::run_metadata("18_calculator", options, device);
    out["config"] = {{"model", model->name},
                     {"adapter", adapter ? nlohmann::json(*adapter) : nlohmann::json()},
                     {"questions", count},
                     {"max_steps", max_steps},
                     {"max_tokens", max_tokens},
                     {"temperature", 0},
                     {"seed", options.seed}};
    out["conditions"] = results;
    out["accuracy_table"] = table;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    out["figures"] = g2c::exercises::figures(
        {Figure::bar("calculator_accuracy.png",
                     fmt::format("{} on {} arithmetic questions", model->name, count), "",
                     "answers whose last number is right")
             .add(Series("", "/accuracy_table/condition", "/accuracy_table/accuracy"))});
    const auto path = g2c::exercises::save_result(options, "calculator.json", out);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_18_calculator
