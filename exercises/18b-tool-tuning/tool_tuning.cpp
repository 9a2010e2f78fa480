// Exercise 18b — SmolLM2 learns to call its calculator. Module 18 measured that the model never
// calls a tool it is offered; this exercise teaches it to, with Part II's own pieces:
//   data     tool-call conversations made by the course (16B's way: drawn, gated, deduplicated,
//            counted in a funnel) — an arithmetic question in many phrasings, the call as the
//            native channel shows it, the calculator's own result (checked against the sum
//            computed here), the answer; plus questions that need no tool, answered with the base
//            model's own replies (it must learn when not to call as well); both rendered exactly
//            as PretrainedBackend::chat_with_tools renders a conversation (render_tool_chat), under
//            module 18's and module 19's system prompts
//   train    LoRA on every projection of the float32 model (g2c/pretrained/lora.h), module 13's
//            SFTTrainer with its loss mask on the assistant turns only
//   save     the adapter file with its lineage (base, data, seed, steps, losses)
//   measure  held-out questions (none trained on, none of 18_calculator's or 20_capstone's) run
//            through module 18's native tool loop on the packed base and on the packed base plus
//            the adapter file, as the tools load it: right answers, valid first calls,
//            calls repeated after a result, tool calls on questions that need none
// 18_calculator and 20_capstone take --adapter for the before/after on their own questions.
// Writes tool_tuning.json, the adapter, and two figures.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/numbers.h"
#include "exercises/common/proportion.h"
#include "exercises/common/run_log.h"
#include "g2c/agent/native.h"
#include "g2c/assistant/assistant.h"
#include "g2c/assistant/conversation.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/core/memory.h"
#include "g2c/core/progress.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/pretrained/generation.h"
#include "g2c/pretrained/lora.h"
#include "g2c/pretraining/build_info.h"
#include "g2c/sft/trainer.h"
#include "g2c/synth/filter.h"
#include "g2c/tools/tools.h"

namespace exercise_18b_tool_tuning {

namespace {

using Clock = std::chrono::steady_clock;
using g2c::exercises::ArithmeticQuestion;
using g2c::exercises::Proportion;
using json = nlohmann::json;

/// The default --steps: about ten minutes on the course's 2-core machine.
constexpr std::int64_t kCpuSteps = 100;

void count(Proportion& proportion, bool hit) {
  proportion.hits += hit;
  ++proportion.total;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Ways to ask for each kind of sum, {0} {1} {2} the operands. The first is 18_calculator's.
const std::map<std::string, std::vector<std::string>> kPhrasings = {
    {"sum2",
     {"What is {0} + {1}?", "What is {0} plus {1}?", "Add {0} and {1}.", "Compute {0} + {1}.",
      "How much is {0} + {1}?", "What do you get when you add {0} to {1}?", "Calculate {0} + {1}.",
      "What's the sum of {0} and {1}?"}},
    {"difference",
     {"What is {0} - {1}?", "What is {0} minus {1}?", "Subtract {1} from {0}.",
      "Compute {0} - {1}.", "How much is {0} - {1}?", "Calculate {0} - {1}.",
      "What is the difference between {0} and {1}?"}},
    {"product",
     {"What is {0} * {1}?", "What is {0} times {1}?", "Multiply {0} by {1}.", "Compute {0} * {1}.",
      "How much is {0} * {1}?", "What is the product of {0} and {1}?", "Calculate {0} x {1}."}},
    {"sum3",
     {"What is {0} + {1} + {2}?", "Add {0}, {1} and {2}.", "Compute {0} + {1} + {2}.",
      "What is the sum of {0}, {1} and {2}?", "How much is {0} + {1} + {2}?"}}};

/// The final answers after the calculator's result; the last number is the result in each.
const std::vector<std::string> kAnswers = {"{expression} = {result}.", "The answer is {result}.",
                                           "{expression} is {result}."};

/// The system prompts the model will be asked under: module 18's native channel (18_calculator)
/// and module 19's native agent (g2c-assistant, 20_capstone).
std::vector<std::string> system_prompts() {
  return {std::string(g2c::tools::DEFAULT_NATIVE_SYSTEM),
          std::string(g2c::agent::NATIVE_DEFAULT_AGENT_SYSTEM)};
}

/// The operands of an expression "a + b" or "a + b + c".
std::vector<std::string> operands(const std::string& expression) {
  std::vector<std::string> out;
  std::string current;
  for (const char c : expression + " ") {
    if (c >= '0' && c <= '9') {
      current += c;
    } else if (!current.empty()) {
      out.push_back(current);
      current.clear();
    }
  }
  return out;
}

/// `pattern` with every occurrence of each key replaced by its value.
std::string fill(const std::string& pattern,
                 const std::vector<std::pair<std::string, std::string>>& values) {
  std::string text = pattern;
  for (const auto& [key, value] : values) {
    for (auto at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size())) {
      text.replace(at, key.size(), value);
    }
  }
  return text;
}

/// A phrasing with its operands in place of {0}, {1}, {2}.
std::string phrase(const std::string& pattern, const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, std::string>> values;
  for (std::size_t i = 0; i < args.size(); ++i)
    values.emplace_back("{" + std::to_string(i) + "}", args[i]);
  return fill(pattern, values);
}

/// `message` as g2c-assistant sends it on a later turn: the earlier exchange (module 20's history
/// block) above it. A model trained only on first turns carries the last answer's numbers into
/// the next one ("13 + 28 is 41.64").
std::string after_exchange(const std::string& message, const std::string& earlier_question,
                           const std::string& earlier_answer) {
  const g2c::assistant::Conversation earlier(
      {g2c::assistant::Message("user", earlier_question),
       g2c::assistant::Message("assistant", earlier_answer)});
  return g2c::assistant::Assistant::build_contextualized_message(message,
                                                                 earlier.format_for_prompt(), "");
}

/// One question the calculator answers: its text, the expression to send, the true result.
struct ToolQuestion {
  std::string kind, text, expression;
  std::int64_t answer = 0;

  /// How an earlier exchange answered it: "95 * 92 = 8740."
  std::string worked() const { return expression + " = " + std::to_string(answer) + "."; }
};

/// `count` questions of the four kinds in turn, numbers from draw_arithmetic's ranges with `seed`,
/// phrasings drawn with it; an expression in `excluded` (held out) or already drawn is skipped
/// and counted.
std::vector<ToolQuestion> draw_tool_questions(std::int64_t count, std::uint64_t seed,
                                              const std::set<std::string>& excluded, json& funnel) {
  std::mt19937_64 rng(seed);
  std::vector<ToolQuestion> out;
  std::set<std::string> seen;
  std::int64_t held_out = 0, duplicate = 0, drawn = 0;
  for (std::uint64_t round = 0; static_cast<std::int64_t>(out.size()) < count; ++round) {
    for (const auto& q : g2c::exercises::draw_arithmetic(4 * count, seed * 1000 + round)) {
      if (static_cast<std::int64_t>(out.size()) == count) break;
      ++drawn;
      if (excluded.contains(q.expression)) {
        ++held_out;
        continue;
      }
      if (!seen.insert(q.expression).second) {
        ++duplicate;
        continue;
      }
      const auto& patterns = kPhrasings.at(q.kind);
      const auto& pattern = patterns[rng() % patterns.size()];
      out.push_back({q.kind, phrase(pattern, operands(q.expression)), q.expression, q.answer});
    }
    if (round > 100) throw g2c::ValueError("draw_tool_questions: cannot draw enough questions");
  }
  funnel["drawn"] = funnel.value("drawn", 0) + drawn;
  funnel["held_out_expression"] = funnel.value("held_out_expression", 0) + held_out;
  funnel["duplicate_expression"] = funnel.value("duplicate_expression", 0) + duplicate;
  return out;
}

/// The conversation of one question answered through the calculator, or nullopt (counted) when
/// the calculator's own result is not the true one.
std::optional<json> tool_conversation(const ToolQuestion& question, const std::string& message,
                                      const std::string& system,
                                      const g2c::tools::ToolRegistry& registry,
                                      const std::string& answer_pattern, json& funnel) {
  const json arguments = {{"expression", question.expression}};
  const auto result = g2c::tools::dispatch_tool_call(
      registry, g2c::tools::ToolCall("calculator", arguments, "call-0"));
  if (result.is_error() || result.output() != std::to_string(question.answer)) {
    funnel["calculator_disagreed"] = funnel.value("calculator_disagreed", 0) + 1;
    return std::nullopt;
  }
  const auto answer =
      fill(answer_pattern, {{"{expression}", question.expression}, {"{result}", result.output()}});
  return json::array(
      {{{"role", "system"}, {"content", system}},
       {{"role", "user"}, {"content", message}},
       {{"role", "assistant"},
        {"content", ""},
        {"tool_calls",
         json::array({{{"function", {{"name", "calculator"}, {"arguments", arguments}}}}})}},
       {{"role", "tool"}, {"tool_name", "calculator"}, {"content", result.output()}},
       {{"role", "assistant"}, {"content", answer}}});
}

/// What one model did on the held-out questions.
struct Tally {
  Proportion right, valid_first_call, repeated_call, called_a_tool;
  double tokens = 0, seconds = 0;
  json samples = json::array();
};

json tally_json(const Tally& tally, std::int64_t count) {
  return {{"right", tally.right.to_json()},
          {"valid_first_call", tally.valid_first_call.to_json()},
          {"repeated_call_after_result", tally.repeated_call.to_json()},
          {"called_a_tool", tally.called_a_tool.to_json()},
          {"tokens_per_question", tally.tokens / static_cast<double>(count)},
          {"seconds_per_question", tally.seconds / static_cast<double>(count)},
          {"samples", tally.samples}};
}

/// Runs each question through module 18's native loop on `backend` (greedy, at most 3 steps, as
/// 18_calculator asks), scoring with `answer` (nullopt: a question that needs no tool, scored by
/// whether a tool was called).
Tally run_questions(
    g2c::inference::PretrainedBackend& backend, const g2c::tools::ToolRegistry& registry,
    const std::vector<std::pair<std::string, std::optional<std::int64_t>>>& questions,
    std::int64_t max_tokens, const std::string& label, bool show_progress) {
  Tally tally;
  g2c::Progress progress(label, static_cast<std::int64_t>(questions.size()), show_progress);
  for (const auto& [text, answer] : questions) {
    const auto start = Clock::now();
    g2c::tools::RunWithToolsOptions loop;
    loop.max_steps = 3;
    loop.use_native_tools = true;
    loop.sampling =
        g2c::inference::CompletionOptions().with_max_new_tokens(max_tokens).with_temperature(0);
    const auto run = g2c::tools::run_with_tools(backend, registry, text, loop);
    tally.seconds += seconds_since(start);
    const auto reply = run.final_answer.value_or("");
    std::int64_t calls = 0;
    bool repeated = false;
    std::set<std::string> made;
    for (const auto& step : run.steps) {
      tally.tokens += static_cast<double>(step.inference.completion_tokens.value_or(0));
      for (const auto& call : step.tool_calls) {
        ++calls;
        repeated = !made.insert(call.arguments().dump()).second || repeated;
      }
    }
    count(tally.called_a_tool, calls > 0);
    if (answer) {
      const auto& first = run.steps.front();
      count(tally.valid_first_call,
            !first.tool_results.empty() && !first.tool_results[0].is_error());
      count(tally.repeated_call, repeated);
      count(tally.right, g2c::exercises::last_number_is(reply, *answer));
    }
    if (tally.samples.size() < 12 || !answer) {
      tally.samples.push_back({{"question", text},
                               {"reply", reply},
                               {"tool_calls", calls},
                               {"stopped", run.stopped_reason}});
    }
    progress.update(tally.called_a_tool.total);
  }
  progress.finish();
  return tally;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Exercise 18b: SmolLM2-135M-Instruct fine-tuned with LoRA (module 13's SFTTrainer, loss on\n"
      "the assistant turns) on tool-call conversations the course makes and the calculator\n"
      "checks, plus questions that need no tool; the adapter saved with its lineage, then the\n"
      "base and the adapted model compared on held-out questions through module 18's tool loop."};
  g2c::exercises::CommonOptions options;
  options.out = "results/18b-tool-tuning";
  options.steps = kCpuSteps;
  std::string model_name = "SmolLM2-135M-Instruct";
  std::string adapter_name = "SmolLM2-135M-Instruct-calculator";
  std::optional<std::string> adapter_path;
  std::string preset = "cpu";
  std::int64_t rank = 8, batch_size = 2, tool_examples = 480, eval_questions = 40,
               eval_no_tool = 20, no_tool_questions = 0, max_tokens = 64;
  double lr = 1e-3, no_tool_share = 0.3, later_share = 0.25;
  std::vector<std::string> targets = {"q", "k", "v", "o", "gate", "up", "down"};
  g2c::exercises::add_common_options(app, options);
  app.add_option("--preset", preset,
                 "cpu: about ten minutes of training on 2 cores; gpu: four times the steps and "
                 "the data (set --steps yourself to override)")
      .one_of({"cpu", "gpu"});
  app.add_option("--model", model_name, "The pretrained base model");
  app.add_option("--name", adapter_name, "The adapted model's name (what g2c-serve serves)");
  app.add_option("--adapter-out", adapter_path,
                 "Where the adapter is saved (default: <out>/adapter.pt)");
  app.add_option("--rank", rank, "LoRA rank").positive();
  app.add_option("--targets", targets, "Projections adapted in every block")
      .one_of({"q", "k", "v", "o", "gate", "up", "down"});
  app.add_option("--batch-size", batch_size, "Conversations per step").positive();
  app.add_option("--lr", lr, "Peak learning rate (cosine, 10 warm-up steps)").positive();
  app.add_option("--tool-examples", tool_examples, "Tool-call conversations made for training")
      .positive();
  app.add_option("--no-tool-share", no_tool_share,
                 "Share of training draws that are questions needing no tool")
      .range(0.0, 0.9);
  app.add_option("--no-tool-questions", no_tool_questions,
                 "How many of the listed no-tool questions to train on (0: all not held out)")
      .non_negative();
  app.add_option("--later-share", later_share,
                 "Share of training conversations set on a later turn, after an earlier exchange")
      .range(0.0, 1.0);
  app.add_option("--eval-questions", eval_questions, "Held-out arithmetic questions").positive();
  app.add_option("--eval-no-tool", eval_no_tool,
                 "Held-out questions that need no tool (from the course's list)")
      .positive();
  app.add_option("--max-tokens", max_tokens, "Reply length limit per step").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (preset == "gpu") {
      if (options.steps == kCpuSteps) options.steps *= 4;  // unless --steps said otherwise
      tool_examples *= 4;
    }
    const auto run_start = Clock::now();
    const auto tools = std::vector<g2c::tools::Tool>{g2c::tools::make_calculator()};
    const g2c::tools::ToolRegistry registry(tools);
    const auto tool_specs = g2c::tools::render_tools_for_ollama(tools);
    const auto systems = system_prompts();

    // The models: float32 to train, the packed base to answer (teacher and "before").
    auto dense = g2c::pretrained::load_pretrained_model(model_name);
    auto base =
        std::make_shared<g2c::pretrained::PretrainedModel>(g2c::pretrained::load_pretrained_model(
            model_name, g2c::pretrained::LoadOptions().packed(true)));
    g2c::inference::PretrainedBackend base_backend(base);
    const auto& tokenizer = dense.tokenizer;

    // ---- Held out: 18_calculator's and 20_capstone's questions, and this exercise's own.
    std::set<std::string> excluded;
    for (const auto count : {60, 10}) {
      for (const auto& q : g2c::exercises::draw_arithmetic(count, options.seed)) {
        excluded.insert(q.expression);
      }
    }
    json funnel = json::object();
    json eval_funnel = json::object();
    const auto held_out =
        draw_tool_questions(eval_questions, options.seed + 101, excluded, eval_funnel);
    for (const auto& q : held_out) excluded.insert(q.expression);

    std::mt19937_64 rng(options.seed + 7);
    const auto coin = [&](double p) {
      return std::uniform_real_distribution<double>(0, 1)(rng) < p;
    };
    const auto questions = draw_tool_questions(tool_examples, options.seed + 202, excluded, funnel);
    // An earlier exchange about a sum: the i-th training question (answered with worked()).
    const auto earlier_sum = [&](std::size_t i) -> const ToolQuestion& {
      return questions[i % questions.size()];
    };

    // ---- Questions that need no tool: the base model's own replies, 16B's shape gate.
    const auto listed =
        json::parse(g2c::read_file(std::filesystem::path(g2c::pretraining::source_dir()) /
                                   "exercises/18b-tool-tuning/data/no_tool_questions.json"))
            .at("questions")
            .get<std::vector<std::string>>();
    std::vector<std::string> no_tool_train, no_tool_eval;
    for (std::size_t i = 0; i < listed.size(); ++i) {
      // Every fifth question is held out (up to --eval-no-tool of them).
      (i % 5 == 4 && static_cast<std::int64_t>(no_tool_eval.size()) < eval_no_tool ? no_tool_eval
                                                                                   : no_tool_train)
          .push_back(listed[i]);
    }
    if (no_tool_questions > 0 &&
        static_cast<std::size_t>(no_tool_questions) < no_tool_train.size()) {
      no_tool_train.resize(static_cast<std::size_t>(no_tool_questions));
    }
    json no_tool_funnel = {{"questions", no_tool_train.size()},
                           {"called_a_tool", 0},
                           {"not_finished", 0},
                           {"bad_pair", 0},
                           {"accepted", 0}};
    struct Reply {
      std::string question, reply, system;
    };
    std::vector<Reply> no_tool_replies;
    {
      g2c::Progress progress("base replies", static_cast<std::int64_t>(no_tool_train.size()),
                             !options.quiet);
      for (std::size_t i = 0; i < no_tool_train.size(); ++i) {
        const auto& system = systems[i % systems.size()];
        const json messages = json::array({{{"role", "system"}, {"content", system}},
                                           {{"role", "user"}, {"content", no_tool_train[i]}}});
        const auto reply = base_backend.chat_with_tools(
            messages, tool_specs,
            g2c::inference::ChatOptions().with_temperature(0).with_max_new_tokens(max_tokens));
        progress.update(static_cast<std::int64_t>(i + 1));
        if (!reply.tool_calls.empty()) {
          no_tool_funnel["called_a_tool"] = no_tool_funnel["called_a_tool"].get<int>() + 1;
          continue;
        }
        if (!reply.metadata.value("stopped", false)) {
          no_tool_funnel["not_finished"] = no_tool_funnel["not_finished"].get<int>() + 1;
          continue;
        }
        if (!g2c::synth::validate_pair(g2c::synth::InstructionPair{no_tool_train[i], reply.content})
                 .empty()) {
          no_tool_funnel["bad_pair"] = no_tool_funnel["bad_pair"].get<int>() + 1;
          continue;
        }
        no_tool_replies.push_back({no_tool_train[i], reply.content, system});
      }
    }
    no_tool_funnel["accepted"] = no_tool_replies.size();
    if (no_tool_replies.empty()) {
      throw g2c::ValueError("18b_tool_tuning: no reply to a no-tool question passed the gates");
    }
    // Each as a conversation under the system prompt it was answered under; a share of them on a
    // later turn, after a sum and its answer.
    std::vector<g2c::sft::SFTExample> train_no_tool;
    for (std::size_t i = 0; i < no_tool_replies.size(); ++i) {
      const auto& [question, reply, system] = no_tool_replies[i];
      auto message = question;
      if (coin(later_share)) {
        const auto& earlier = earlier_sum(i);
        message = after_exchange(message, earlier.text, earlier.worked());
      }
      const json conversation = json::array({{{"role", "system"}, {"content", system}},
                                             {{"role", "user"}, {"content", message}},
                                             {{"role", "assistant"}, {"content", reply}}});
      train_no_tool.push_back(g2c::pretrained::chat_sft_example(
          tokenizer, g2c::inference::render_tool_chat(conversation, tool_specs)));
    }

    // ---- Tool-call conversations, checked by the calculator; a share of them on a later turn,
    // after an earlier exchange (a no-tool question and its reply, or another sum and its answer).
    std::vector<g2c::sft::SFTExample> train_tool;
    std::int64_t later_turns = 0;
    for (std::size_t i = 0; i < questions.size(); ++i) {
      const auto& question = questions[i];
      const auto& system = systems[rng() % systems.size()];
      const auto& answer = kAnswers[rng() % kAnswers.size()];
      auto message = question.text;
      if (coin(later_share)) {
        ++later_turns;
        if (coin(0.5)) {
          const auto& earlier = no_tool_replies[rng() % no_tool_replies.size()];
          message = after_exchange(message, earlier.question, earlier.reply);
        } else {
          const auto& earlier = earlier_sum(i + 1);
          message = after_exchange(message, earlier.text, earlier.worked());
        }
      }
      const auto messages = tool_conversation(question, message, system, registry, answer, funnel);
      if (!messages) continue;
      train_tool.push_back(g2c::pretrained::chat_sft_example(
          tokenizer, g2c::inference::render_tool_chat(*messages, tool_specs)));
    }
    funnel["accepted"] = train_tool.size();
    funnel["on_a_later_turn"] = later_turns;

    // The training draws: every tool conversation once, the no-tool ones repeated to their share.
    std::vector<g2c::sft::SFTExample> examples = train_tool;
    const auto no_tool_draws = static_cast<std::size_t>(no_tool_share / (1.0 - no_tool_share) *
                                                        static_cast<double>(train_tool.size()));
    for (std::size_t i = 0; i < no_tool_draws; ++i) {
      examples.push_back(train_no_tool[i % train_no_tool.size()]);
    }
    const auto mean_length = [](const std::vector<g2c::sft::SFTExample>& set) {
      double total = 0;
      for (const auto& example : set) total += static_cast<double>(example.ids.size());
      return total / static_cast<double>(set.size());
    };
    std::int64_t max_len = 0, reply_tokens = 0, all_tokens = 0;
    for (const auto& example : examples) {
      max_len = std::max<std::int64_t>(max_len, static_cast<std::int64_t>(example.ids.size()));
      all_tokens += static_cast<std::int64_t>(example.ids.size());
      for (const auto m : example.mask) reply_tokens += m;
    }
    // A held-out loss set: this exercise's held-out questions as conversations.
    std::vector<g2c::sft::SFTExample> eval_examples;
    for (std::size_t i = 0; i < held_out.size(); ++i) {
      json ignored;
      if (const auto messages =
              tool_conversation(held_out[i], held_out[i].text, systems[i % systems.size()],
                                registry, kAnswers[0], ignored)) {
        eval_examples.push_back(g2c::pretrained::chat_sft_example(
            tokenizer, g2c::inference::render_tool_chat(*messages, tool_specs)));
      }
    }
    fmt::print(
        "data: {} tool conversations ({:.0f} tokens on average), {} no-tool replies ({:.0f}; {} "
        "draws), held out {} + {}; longest {} tokens, {:.0f}% of tokens trained on\n",
        train_tool.size(), mean_length(train_tool), train_no_tool.size(),
        mean_length(train_no_tool), no_tool_draws, held_out.size(), no_tool_eval.size(), max_len,
        100.0 * static_cast<double>(reply_tokens) / static_cast<double>(all_tokens));

    // ---- Train: LoRA on the float32 model, module 13's SFTTrainer.
    // On an accelerator the float32 model trains there; the packed models answer on the CPU.
    torch::manual_seed(static_cast<std::int64_t>(options.seed));
    dense.model->to(device);
    g2c::pretrained::LlamaLoRA lora(dense.model,
                                    g2c::pretrained::LlamaLoRAOptions(rank).targets(targets));
    auto sft_options =
        g2c::sft::SFTTrainerOptions(max_len, tokenizer.eos_id(), batch_size, options.steps, lr);
    sft_options.trainer().grad_clip(1.0).warmup_steps(std::min<std::int64_t>(10, options.steps));
    sft_options.trainer().device(device.str()).log_every(1);
    sft_options.trainer().eval_iters(
        std::max<std::int64_t>(1, static_cast<std::int64_t>(eval_examples.size()) / batch_size));
    g2c::sft::SFTTrainer sft(lora, examples, sft_options);
    const double eval_before = sft.evaluate(eval_examples);
    g2c::reset_peak_resident();
    const auto train_start = Clock::now();
    g2c::exercises::RunLog log({.label = "training",
                                .steps = options.steps,
                                .show = !options.quiet,
                                .advice = "Try a lower --lr."});
    const auto history = sft.train({}, g2c::pretraining::RunOptions().on_log(log.callback()));
    log.finish();
    const auto& losses = history.train_loss;  // every step's (log_every 1)
    const double train_seconds = seconds_since(train_start);
    const double peak_mib = g2c::peak_resident_mib();
    const double eval_after = sft.evaluate(eval_examples);
    fmt::print("held-out loss {:.3f} -> {:.3f}; {:.2f} s a step; peak {:.0f} MiB\n", eval_before,
               eval_after, train_seconds / static_cast<double>(options.steps), peak_mib);

    // ---- Save the adapter with where it came from.
    const std::filesystem::path saved =
        adapter_path ? std::filesystem::path(*adapter_path) : options.out / "adapter.pt";
    const json lineage = {
        {"program", "18b_tool_tuning"},
        {"data",
         {{"tool_conversations", train_tool.size()},
          {"no_tool_replies", train_no_tool.size()},
          {"no_tool_share", no_tool_share},
          {"no_tool_questions", "exercises/18b-tool-tuning/data/no_tool_questions.json"},
          {"held_out", "18_calculator's and 20_capstone's questions (seed " +
                           std::to_string(options.seed) + ") and " +
                           std::to_string(held_out.size()) + " of this exercise's"}}},
        {"seed", options.seed},
        {"steps", options.steps},
        {"batch_size", batch_size},
        {"lr", lr},
        {"held_out_loss", {{"before", eval_before}, {"after", eval_after}}}};
    g2c::pretrained::save_llama_adapter(
        saved, g2c::pretrained::adapter_of(*lora, adapter_name, dense.name, lineage));
    fmt::print("adapter: {} ({} of {} parameters trainable, {:.2f}%)\n", saved.string(),
               lora->adapter_parameters(), lora->base_parameters(),
               100.0 * static_cast<double>(lora->adapter_parameters()) /
                   static_cast<double>(lora->base_parameters()));

    // ---- Measure: the packed base against the packed base plus the adapter file.
    auto adapted =
        std::make_shared<g2c::pretrained::PretrainedModel>(g2c::pretrained::load_pretrained_model(
            model_name, g2c::pretrained::LoadOptions().packed(true), saved));
    g2c::inference::PretrainedBackend adapted_backend(adapted);
    std::vector<std::pair<std::string, std::optional<std::int64_t>>> arithmetic, later, no_tool;
    for (const auto& q : held_out) arithmetic.emplace_back(q.text, q.answer);
    // Every other held-out sum again on a later turn, after the next one and its answer.
    for (std::size_t i = 0; i + 1 < held_out.size(); i += 2) {
      const auto& earlier = held_out[i + 1];
      later.emplace_back(after_exchange(held_out[i].text, earlier.text, earlier.worked()),
                         held_out[i].answer);
    }
    for (const auto& q : no_tool_eval) no_tool.emplace_back(q, std::nullopt);
    json evaluation = json::object();
    for (const auto& [label, backend] :
         std::vector<std::pair<std::string, g2c::inference::PretrainedBackend*>>{
             {"base", &base_backend}, {"adapted", &adapted_backend}}) {
      const auto sums = run_questions(*backend, registry, arithmetic, max_tokens, label + " sums",
                                      !options.quiet);
      const auto later_sums = run_questions(*backend, registry, later, max_tokens,
                                            label + " later sums", !options.quiet);
      const auto plain = run_questions(*backend, registry, no_tool, max_tokens, label + " no-tool",
                                       !options.quiet);
      fmt::print(
          "{:<8} sums right {}  valid first call {}  repeated a call {}  | on a later turn {}  | "
          "no-tool questions calling a tool {}\n",
          label, sums.right.to_string(), sums.valid_first_call.to_string(),
          sums.repeated_call.to_string(), later_sums.right.to_string(),
          plain.called_a_tool.to_string());
      evaluation[label] = {
          {"arithmetic", tally_json(sums, static_cast<std::int64_t>(arithmetic.size()))},
          {"arithmetic_later_turn",
           tally_json(later_sums,
                      static_cast<std::int64_t>(std::max<std::size_t>(1, later.size())))},
          {"no_tool", tally_json(plain, static_cast<std::int64_t>(no_tool.size()))}};
    }

    auto out = g2c::exercises::run_metadata("18b_tool_tuning", options, device);
    out["config"] = {
        {"model", model_name},    {"adapter", adapter_name},  {"rank", rank},
        {"targets", targets},     {"batch_size", batch_size}, {"lr", lr},
        {"steps", options.steps}, {"preset", preset},         {"max_tokens", max_tokens}};
    out["data"] = {{"tool_funnel", funnel},
                   {"no_tool_funnel", no_tool_funnel},
                   {"held_out_funnel", eval_funnel},
                   {"draws", examples.size()},
                   {"longest_tokens", max_len},
                   {"mean_tokens",
                    {{"tool", mean_length(train_tool)}, {"no_tool", mean_length(train_no_tool)}}},
                   {"trained_token_share",
                    static_cast<double>(reply_tokens) / static_cast<double>(all_tokens)}};
    out["training"] = {{"steps", history.step},
                       {"loss", losses},
                       {"held_out_loss_before", eval_before},
                       {"held_out_loss_after", eval_after},
                       {"seconds", train_seconds},
                       {"seconds_per_step", train_seconds / static_cast<double>(options.steps)},
                       {"peak_resident_mib", peak_mib},
                       {"trainable_parameters", lora->adapter_parameters()},
                       {"base_parameters", lora->base_parameters()}};
    out["adapter_file"] = saved.string();
    out["evaluation"] = evaluation;
    out["comparison"] = {{"model", {"base", "adapted"}},
                         {"arithmetic_right",
                          {evaluation["base"]["arithmetic"]["right"]["value"],
                           evaluation["adapted"]["arithmetic"]["right"]["value"]}},
                         {"later_turn_right",
                          {evaluation["base"]["arithmetic_later_turn"]["right"]["value"],
                           evaluation["adapted"]["arithmetic_later_turn"]["right"]["value"]}},
                         {"no_tool_calling_a_tool",
                          {evaluation["base"]["no_tool"]["called_a_tool"]["value"],
                           evaluation["adapted"]["no_tool"]["called_a_tool"]["value"]}}};
    out["seconds"] = seconds_since(run_start);
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    out["figures"] = g2c::exercises::figures(
        {Figure::line("tool_tuning_loss.png",
                      fmt::format("{} + rank-{} LoRA on tool-call conversations", model_name, rank),
                      "step", "masked cross-entropy (assistant turns)")
             .add(Series("train batch", "/training/steps", "/training/loss")),
         Figure::bar("tool_tuning_before_after.png",
                     fmt::format("{} held-out sums ({} on a later turn), {} questions needing no "
                                 "tool",
                                 arithmetic.size(), later.size(), no_tool.size()),
                     "", "share")
             .add(Series("sums right", "/comparison/model", "/comparison/arithmetic_right"))
             .add(Series("sums right on a later turn", "/comparison/model",
                         "/comparison/later_turn_right"))
             .add(Series("no-tool questions calling a tool", "/comparison/model",
                         "/comparison/no_tool_calling_a_tool"))});
    const auto path = g2c::exercises::save_result(options, "tool_tuning.json", out);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_18b_tool_tuning
