// g2c-assistant: the capstone assistant in the terminal — a model, the tools, optionally the
// course's documents, and the agent loop, over a conversation (module 20).
//
//   g2c-assistant                                   SmolLM2-135M-Instruct in this process, with
//                                                   the calculator, native tool calls
//   g2c-assistant --rag                             + retrieval over the course's documents (BM25)
//   g2c-assistant --read-files docs                 + read_file, sandboxed to that folder
//   g2c-assistant --url http://127.0.0.1:11434      a model served by g2c-serve or Ollama
//                                                   (--model names it there)
//   g2c-assistant --model ShakespeareLM-1M-SFT      one of your saved models (ReAct: it has no
//                                                   tool-calling channel)
//   g2c-assistant --react                           the ReAct text agent instead of tool calls
//   g2c-assistant --constrained                     calls decoded under the tools' schemas
//   g2c-assistant --once "What is 12 * 9?"          one turn, for scripts
//
// Each line typed is a turn: the earlier turns (the last --history messages), the retrieved
// chunks and the question go to the agent, whose answer is printed with a footer (steps, tool
// calls, whether retrieval fired). When the conversation outgrows --history, a note says how many
// earlier messages the prompt no longer shows. A backend that fails mid-turn (a server gone, a
// timeout) gives "(error: …)" and the session goes on with everything typed kept; /save writes
// the transcript atomically. /help lists the commands (/reset, /history, /tools, /config, /save,
// /quit). A turn shows itself while it runs (run_cli): the model's words as they are generated
// (in process and over HTTP; a saved course model's answer when the turn ends) and a line for each
// tool call once its result is in.
//
// Exit status: g2c::run_cli's table (g2c/core/cli.h): 0 success, 2 bad input (an unknown model, a
// bad option), 1 anything else — including a --once turn that ended without an answer.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/assistant/assistant.h"
#include "g2c/assistant/cli.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/cli.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/inference/artifact.h"
#include "g2c/inference/ollama.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/pretrained/catalog.h"
#include "g2c/pretraining/build_info.h"
#include "g2c/rag/bm25.h"
#include "g2c/rag/course_documents.h"
#include "g2c/tools/tools.h"

namespace {

namespace fs = std::filesystem;
using g2c::assistant::Assistant;

struct Options {
  std::string model = "SmolLM2-135M-Instruct";
  std::optional<std::string> url;
  std::optional<std::string> adapter;
  std::optional<std::string> once;
  bool rag = false;
  std::int64_t rag_k = 3;
  std::optional<std::string> read_files;
  bool react = false;
  bool constrained = false;
  bool plan = false;
  std::int64_t max_steps = 4;
  std::int64_t max_new_tokens = 128;
  double temperature = 0.0;
  double repeat_penalty = 1.1;  // Ollama's defaults: greedy decoding without them can repeat one
  std::int64_t repeat_last_n = 64;  // sentence until the token limit
  std::int64_t history = 20;
  double timeout = 120;
  int threads = 0;
};

/// The backend the options name: a server when --url is given, else a pretrained model in this
/// process, else one of the course's saved models.
std::unique_ptr<g2c::inference::Backend> load_backend(const Options& options) {
  if (options.url) {
    if (options.adapter) {
      throw g2c::ValueError(
          "--adapter: a server applies its own adapters (g2c-serve --adapter FILE serves the "
          "adapted model under its name: pass that name with --model)");
    }
    return std::make_unique<g2c::inference::OllamaBackend>(
        options.model,
        g2c::inference::OllamaOptions().with_base_url(*options.url).with_timeout(options.timeout));
  }
  const auto& pretrained = g2c::pretrained::pretrained_model_names();
  if (std::find(pretrained.begin(), pretrained.end(), options.model) != pretrained.end()) {
    auto backend_options = g2c::inference::PretrainedBackendOptions().with_tool_choice(
        options.constrained ? g2c::inference::ToolChoice::Required
                            : g2c::inference::ToolChoice::Auto);
    auto backend =
        std::make_unique<g2c::inference::PretrainedBackend>(g2c::inference::PretrainedBackend::load(
            options.model, g2c::pretrained::LoadOptions().packed(true), backend_options,
            options.adapter ? std::optional<fs::path>(*options.adapter) : std::nullopt));
    if (options.adapter) {
      fmt::print(stderr, "(adapter {} on {})\n", backend->info().model_id(), options.model);
    }
    return backend;
  }
  if (options.adapter) {
    throw g2c::ValueError(fmt::format(
        "--adapter: a LoRA adapter applies to a pretrained model in this process ({}), not to {}",
        fmt::join(pretrained, ", "), options.model));
  }
  return g2c::inference::load_artifact_backend(options.model);
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "The course's assistant in the terminal: a model (in this process, or served by g2c-serve\n"
      "or Ollama), the calculator and optionally read_file and retrieval over the course's\n"
      "documents, the agent of module 19, and a conversation (module 20). Type /help inside."};
  Options options;
  app.add_option("--model", options.model,
                 "A pretrained model (SmolLM2-135M-Instruct), a saved course model, or the "
                 "model's name on the --url server");
  app.add_option("--url", options.url,
                 "A server in Ollama's protocol (g2c-serve, Ollama), e.g. http://127.0.0.1:11434");
  app.add_option("--adapter", options.adapter,
                 "A LoRA adapter file for the pretrained model (exercise 18b_tool_tuning trains "
                 "one that calls the calculator)");
  app.add_option("--once", options.once, "Answer this one message and exit");
  app.add_flag("--rag", options.rag, "Retrieve chunks of the course's documents for each turn");
  app.add_option("--rag-k", options.rag_k, "Chunks retrieved per turn").positive();
  app.add_option("--read-files", options.read_files, "Offer read_file, sandboxed to this folder");
  app.add_flag("--react", options.react,
               "The ReAct text agent instead of native tool calls (any backend can drive it)");
  app.add_flag("--constrained", options.constrained,
               "In-process models: decode each call under the tools' schemas");
  app.add_flag("--plan", options.plan, "Plan before each turn (one more backend call)");
  app.add_option("--max-steps", options.max_steps, "Agent steps per turn at most").positive();
  app.add_option("--max-new-tokens", options.max_new_tokens, "Reply length limit per step")
      .positive();
  app.add_option("--temperature", options.temperature, "0: greedy").non_negative();
  app.add_option("--repeat-penalty", options.repeat_penalty,
                 "Penalty on tokens already in the last --repeat-last-n (1: none)")
      .positive();
  app.add_option("--repeat-last-n", options.repeat_last_n,
                 "Tokens the repetition penalty looks back on (-1: all)")
      .range(-1, 1 << 20);
  app.add_option("--history", options.history, "Messages of history each prompt shows").positive();
  app.add_option("--timeout", options.timeout, "Seconds a --url server may take per call")
      .positive();
  app.add_option("--threads", options.threads, "CPU threads (0: the machine's)").non_negative();
  return g2c::run_cli(app, argc, argv, [&]() -> int {
    if (options.threads > 0) torch::set_num_threads(options.threads);
    auto backend = load_backend(options);
    const bool native =
        !options.react && dynamic_cast<g2c::inference::ChatBackend*>(backend.get()) != nullptr;
    if (!options.react && !native) {
      fmt::print(stderr, "(note: {} has no tool-calling channel; using the ReAct agent)\n",
                 backend->info().model_id());
    }
    std::vector<g2c::tools::Tool> tools = {g2c::tools::make_calculator()};
    if (options.read_files) {
      tools.push_back(g2c::tools::make_read_file({fs::path(*options.read_files)}));
    }
    std::unique_ptr<g2c::rag::BM25Retriever> index;
    if (options.rag) {  // module 17's BM25 over the course's documents, 600-character chunks
      index = std::make_unique<g2c::rag::BM25Retriever>();
      index->add(g2c::rag::course_document_chunks(g2c::pretraining::source_dir()));
    }

    g2c::assistant::AssistantOptions assistant_options;
    auto& config = assistant_options.config;
    config.max_steps = options.max_steps;
    config.plan = options.plan;
    config.max_new_tokens = options.max_new_tokens;
    config.temperature = options.temperature;
    config.repeat_penalty = options.repeat_penalty;
    config.repeat_last_n = options.repeat_last_n;
    config.rag_enabled = options.rag;
    config.rag_k = options.rag_k;
    config.max_history_messages = options.history;
    config.use_native = native;
    assistant_options.retriever = index.get();
    Assistant assistant(*backend, g2c::tools::ToolRegistry(tools), assistant_options);

    if (options.once) {
      // Nothing is printed until the answer is whole: on a terminal, show that the turn is alive.
      g2c::WaitingLine waiting("thinking");
      const auto turn = assistant.chat(*options.once);
      waiting.stop();
      if (!turn.final_answer) {
        fmt::print(stderr, "(no answer: {})\n",
                   turn.agent_run.metadata.value("error", turn.agent_run.stopped_reason));
        return 1;
      }
      fmt::print("{}\n", *turn.final_answer);
      return 0;
    }
    g2c::assistant::run_cli(assistant, std::cin, std::cout);
    return 0;
  });
}
