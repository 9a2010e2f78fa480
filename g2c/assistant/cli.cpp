// Module 20 — the terminal loop (cli.h).
#include "g2c/assistant/cli.h"

#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/core/strip.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::assistant {

const std::string_view CLI_HELP =
    "Commands:\n"
    "  /help              Show this help.\n"
    "  /clear, /reset     Start over: forget the conversation and its turns.\n"
    "  /history           Print the conversation so far.\n"
    "  /tools             List the registered tools.\n"
    "  /config            Show the assistant's config.\n"
    "  /save <path>       Save the transcript (messages, config, turns) as JSON to <path>.\n"
    "  /exit, /quit       Leave. (The end of the input and a blank line leave too.)\n"
    "\n"
    "Anything else is a message to the assistant.\n";

namespace {

std::string first_chars(std::string_view text, std::size_t n) {
  return std::string(g2c::tokenizer::utf8_prefix(text, n));
}

/// A turn while it runs: the model's text as it is generated, a line for each tool call once its
/// result is in, and — on a terminal — a waiting line while the model reads its prompt and nothing
/// has come yet (a long RAG prompt takes a small CPU tens of seconds). Remembers the text of the
/// last step, so that an answer already on the screen is not printed again.
class LiveTurn {
 public:
  LiveTurn(std::ostream& out, bool show_waiting) : out_(&out), show_waiting_(show_waiting) {}

  void text(std::string_view piece) {
    waiting_.reset();
    *out_ << piece << std::flush;
    step_text_ += piece;
    line_open_ = !step_text_.empty() && step_text_.back() != '\n';
  }

  void step(const agent::AgentStep& step) {
    end_line();
    if (step.action) {
      const auto& observation = step.observation;
      *out_ << fmt::format("  -> {} {} {} {}\n", step.action->tool(),
                           step.action->arguments().dump(),
                           observation && observation->is_error() ? "failed:" : "=",
                           observation ? first_chars(observation->output(), 200) : "");
    } else if (step.parse_error) {
      *out_ << fmt::format("  (a step the agent could not read: {})\n",
                           first_chars(*step.parse_error, 200));
    }
    last_step_text_ = std::exchange(step_text_, "");
    wait();  // the next model call reads the grown prompt first
  }

  /// A newline after text that stopped mid-line (the turn ended or failed while it streamed).
  void end_line() {
    waiting_.reset();
    if (line_open_) *out_ << "\n";
    line_open_ = false;
  }

  /// Whether the last step's text, already shown, ends with `answer`.
  bool showed(std::string_view answer) const {
    const auto shown = g2c::strip(last_step_text_ + step_text_);
    const auto wanted = g2c::strip(answer);
    return !wanted.empty() && shown.size() >= wanted.size() &&
           shown.compare(shown.size() - wanted.size(), wanted.size(), wanted) == 0;
  }

  void start() {
    step_text_.clear();
    last_step_text_.clear();
    line_open_ = false;
    wait();
  }

 private:
  void wait() {
    waiting_.reset();
    if (show_waiting_) waiting_.emplace("thinking");
  }

  std::ostream* out_;
  bool show_waiting_;
  std::optional<g2c::WaitingLine> waiting_;  // drawn from its own thread: reset before writing
  std::string step_text_;                    // the text of the step being generated
  std::string last_step_text_;               // the text of the step recorded last
  bool line_open_ = false;
};

/// The answer (or why there is none), unless `live` already showed it, and a footer of the turn's
/// metadata.
void print_turn(const AssistantTurn& turn, const LiveTurn& live, std::ostream& out) {
  const auto& run = turn.agent_run;
  if (turn.final_answer) {
    if (!live.showed(*turn.final_answer)) out << *turn.final_answer << "\n";
  } else if (run.stopped_reason == "error") {
    out << "(error: " << run.metadata.value("error", std::string("unknown")) << ")\n";
  } else {
    // No answer, but a tool may have computed it: show the last thing a tool returned.
    std::string last_result;
    for (auto step = run.steps.rbegin(); step != run.steps.rend(); ++step) {
      if (step->action && step->observation) {
        last_result = fmt::format("; {} returned: {}", step->action->tool(),
                                  first_chars(step->observation->output(), 200));
        break;
      }
    }
    out << "(stuck — " << run.stopped_reason << last_result << ")\n";
  }
  out << fmt::format("  [{} steps, {} tool calls, {}, {}]\n",
                     turn.metadata.value("n_agent_steps", 0),
                     turn.metadata.value("n_tool_calls", 0),
                     turn.metadata.value("rag_fired", false) ? "rag" : "no-rag",
                     turn.metadata.value("had_plan", false) ? "plan" : "no-plan");
}

/// What /save writes: the name, the config, the messages and every turn's outcome.
nlohmann::json transcript(const Assistant& assistant) {
  auto messages = nlohmann::json::array();
  for (const auto& message : assistant.conversation()) {
    messages.push_back({{"role", message.role()}, {"content", message.content()}});
  }
  auto turns = nlohmann::json::array();
  for (const auto& turn : assistant.turns()) {
    turns.push_back(
        {{"user_message", turn.user_message},
         {"final_answer", turn.final_answer ? nlohmann::json(*turn.final_answer) : nullptr},
         {"stopped_reason", turn.agent_run.stopped_reason},
         {"metadata", turn.metadata}});
  }
  return {{"name", assistant.config().name},
          {"config", assistant.config().to_json()},
          {"messages", messages},
          {"turns", turns}};
}

/// /save <path>: the path as typed (quotes around it dropped, "~/" for the home folder), its folder
/// checked first, so that a typo says so instead of creating folders nobody asked for.
void save(const Assistant& assistant, std::string_view argument, std::ostream& out) {
  std::string text = g2c::strip(argument);
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') &&
      text.back() == text.front()) {
    text = text.substr(1, text.size() - 2);
  }
  if (text.empty()) {
    out << "usage: /save <path>   (for example /save chat.json)\n";
    return;
  }
  if (text.starts_with("~/")) {
    if (const char* home = std::getenv("HOME")) text = std::string(home) + text.substr(1);
  }
  const std::filesystem::path path(text);
  const auto folder = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    out << fmt::format(
        "(error: cannot save to {}: it is a folder; name a file in it, such as {})\n",
        path.string(), (path / "chat.json").string());
    return;
  }
  if (!std::filesystem::is_directory(folder, error)) {
    out << fmt::format(
        "(error: cannot save to {}: the folder {} does not exist; create it first (mkdir -p {}) "
        "or pick another path)\n",
        path.string(), folder.string(), folder.string());
    return;
  }
  try {
    g2c::write_json_atomic(path, transcript(assistant));
  } catch (const std::exception& failure) {
    out << fmt::format("(error: could not save to {}: {})\n", path.string(), failure.what());
    return;
  }
  out << "(saved to " << path.string() << ")\n";
}

/// Runs one command line; false when the loop should end.
bool run_command(Assistant& assistant, std::string_view line, std::ostream& out) {
  const auto space = line.find_first_of(" \t");
  const auto command = line.substr(0, space);
  const auto argument = space == std::string_view::npos ? std::string_view() : line.substr(space);
  if (command == "/help") {
    out << CLI_HELP << "\n";
  } else if (command == "/clear" || command == "/reset") {
    assistant.reset();
    out << "(conversation cleared)\n";
  } else if (command == "/history") {
    if (assistant.conversation().empty()) out << "(no messages yet)\n";
    for (const auto& message : assistant.conversation()) {
      out << message.role() << ": " << message.content() << "\n";
    }
  } else if (command == "/tools") {
    if (assistant.registry().empty()) out << "(no tools registered)\n";
    for (const auto& tool : assistant.registry()) {
      out << "  - " << tool.name() << ": " << tool.description() << "\n";
    }
  } else if (command == "/config") {
    out << assistant.config().to_json().dump(2) << "\n";
  } else if (command == "/save") {
    save(assistant, argument, out);
  } else if (command == "/exit" || command == "/quit") {
    out << "(exiting)\n";
    return false;
  } else {
    out << fmt::format("(unknown command '{}'; type /help for the list)\n", command);
  }
  return true;
}

}  // namespace

void run_cli(Assistant& assistant, std::istream& in, std::ostream& out, std::string_view prompt) {
  // The waiting line goes to stderr: only when `out` is the same terminal (a test's stream or a
  // redirected stdout gets the turn alone).
  LiveTurn live(out, &out == &std::cout && ::isatty(STDOUT_FILENO) != 0);
  assistant.watch([&live](std::string_view piece) { live.text(piece); },
                  [&live](const agent::AgentStep& step) { live.step(step); });
  // The watchers write to `out`, which this loop does not own: unhook them however it ends.
  struct Unwatch {
    Assistant& assistant;
    ~Unwatch() { assistant.watch({}, {}); }
  } unwatch{assistant};
  out << "(" << assistant.config().name
      << " ready — type /help for commands, blank line to exit)\n";
  std::string raw;
  while (true) {
    out << prompt << std::flush;
    if (!std::getline(in, raw)) {  // the end of the input; a last unterminated line was read
      out << "(eof)\n";
      return;
    }
    const auto line = g2c::strip(raw);
    if (line.empty()) return;
    if (line.front() == '/') {
      if (!run_command(assistant, line, out)) return;
      continue;
    }
    try {
      live.start();
      const auto turn = assistant.chat(line);
      live.end_line();
      print_turn(turn, live, out);
      // The history cap at work: say when earlier messages leave the next turn's prompt.
      const auto cap = assistant.conversation().max_messages();
      const auto size = static_cast<std::int64_t>(assistant.conversation().size());
      if (cap && size > *cap) {
        out << fmt::format("  (the prompt now shows the last {} of {} messages)\n", *cap, size);
      }
    } catch (const NotImplementedError&) {
      throw;  // unwritten course code: end here, with the TODO's message
    } catch (const std::exception& error) {
      live.end_line();
      out << "(error: " << error.what() << ")\n";
      // chat failed before it recorded the turn (a retriever that failed): keep what was typed,
      // so that /history and /save still have it.
      assistant.conversation().add_user(line);
      assistant.conversation().add_assistant(
          Assistant::no_answer_note(Assistant::failed_run(line, error.what())));
    }
  }
}

}  // namespace g2c::assistant
