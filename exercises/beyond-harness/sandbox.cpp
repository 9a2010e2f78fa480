#include "exercises/beyond-harness/sandbox.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "g2c/tools/tool.h"

namespace g2c::exercises::harness {

using Json = nlohmann::json;

namespace {

const Json kTextSchema = {
    {"type", "object"},
    {"properties", {{"text", {{"type", "string"}, {"description", "the line"}}}}},
    {"required", {"text"}}};
const Json kNoArguments = {{"type", "object"}, {"properties", Json::object()}};

/// One write(2) of the whole line: the side effect lands whole or not at all.
void append_line_to(const fs::path& path, const std::string& line) {
  const std::string bytes = line + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw g2c::tools::ToolError("cannot open notes.txt");
  const auto written = ::write(fd, bytes.data(), bytes.size());
  ::close(fd);
  if (written != static_cast<ssize_t>(bytes.size())) {
    throw g2c::tools::ToolError("notes.txt: the write was cut short");
  }
}

}  // namespace

std::vector<std::string> file_lines(const fs::path& path) {
  std::vector<std::string> lines;
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  return lines;
}

g2c::tools::ToolRegistry sandbox_tools(const fs::path& dir, ToolHooks& hooks) {
  const auto notes = dir / "notes.txt";
  using g2c::tools::Tool;
  Tool append_line("append_line", "Append one line of text to notes.txt", kTextSchema,
                   [notes, &hooks](const Json& arguments) -> Json {
                     ++hooks.runs;
                     ++hooks.attempts;
                     if (hooks.attempts <= hooks.append_failures) {
                       throw g2c::tools::ToolError("connection timed out");
                     }
                     const auto text = arguments.at("text").get<std::string>();
                     append_line_to(notes, text);
                     ++hooks.appends;
                     if (hooks.after_effect) hooks.after_effect(text);
                     return fmt::format("appended '{}'", text);
                   });
  Tool read_notes("read_notes", "Read notes.txt", kNoArguments,
                  [notes, &hooks](const Json&) -> Json {
                    ++hooks.runs;
                    const auto lines = file_lines(notes);
                    if (lines.empty()) return "notes.txt is empty";
                    std::string listed;
                    for (const auto& line : lines) listed += (listed.empty() ? "" : " | ") + line;
                    return "notes.txt holds: " + listed;
                  });
  Tool delete_notes("delete_notes", "Delete everything in notes.txt", kNoArguments,
                    [notes, &hooks](const Json&) -> Json {
                      std::ofstream(notes, std::ios::trunc);
                      ++hooks.runs;
                      ++hooks.deletions;
                      return "notes.txt emptied";
                    });
  const Json area_schema = {
      {"type", "object"},
      {"properties", {{"area", {{"type", "string"}, {"description", "where to look"}}}}},
      {"required", {"area"}}};
  Tool survey("survey", "Survey one area of the workspace (a long report)", area_schema,
              [&hooks](const Json& arguments) -> Json {
                ++hooks.runs;
                std::string report = "survey of " + arguments.at("area").get<std::string>() + ": ";
                while (report.size() < 400) report += "nothing of note in this corner; ";
                return report.substr(0, 400);
              });
  return g2c::tools::ToolRegistry({append_line, read_notes, delete_notes, survey});
}

std::string action_text(const std::string& tool, const std::string& json_arguments) {
  return fmt::format("Action: {}\nAction Input: {}", tool, json_arguments);
}

std::string notes_task(std::int64_t lines) {
  return fmt::format(
      "Write the lines 'line 1' to 'line {}' to notes.txt, in order, each exactly "
      "once.",
      lines);
}

std::string expected_notes(std::int64_t lines) {
  std::string text;
  for (std::int64_t k = 1; k <= lines; ++k) text += fmt::format("line {}\n", k);
  return text;
}

NotesWriter::NotesWriter(std::int64_t lines, std::function<void(std::int64_t)> before_call)
    : lines_(lines), before_call_(std::move(before_call)), info_("scripted", "notes-writer") {}

std::string NotesWriter::next_step(const std::string& prompt) const {
  std::set<std::int64_t> done;
  bool last_unknown = false;
  std::istringstream text(prompt);
  for (std::string line; std::getline(text, line);) {
    const auto at = line.find("Observation: ");
    if (at == std::string::npos) continue;
    const auto observation = line.substr(at + 13);
    last_unknown = observation.find("unknown outcome") != std::string::npos;
    std::int64_t k = 0;
    if (std::sscanf(observation.c_str(), "appended 'line %ld'", &k) == 1) done.insert(k);
    if (observation.rfind("notes.txt holds: ", 0) == 0 || observation == "notes.txt is empty") {
      done.clear();  // the workspace, as it is now, overrides what the trajectory remembers
      std::istringstream listed(observation.substr(observation.find(':') + 1));
      for (std::string item; std::getline(listed, item, '|');) {
        if (std::sscanf(item.c_str(), " line %ld", &k) == 1) done.insert(k);
      }
    }
  }
  if (last_unknown)
    return "The last call's outcome is unknown: check the workspace.\n" +
           action_text("read_notes", "{}");
  for (std::int64_t k = 1; k <= lines_; ++k) {
    if (!done.count(k)) {
      return fmt::format("Line {} is next.\n", k) +
             action_text("append_line", fmt::format(R"({{"text": "line {}"}})", k));
    }
  }
  return fmt::format("Final Answer: notes.txt holds lines 1 to {}", lines_);
}

g2c::inference::InferenceResult NotesWriter::complete(const std::string& prompt,
                                                      const g2c::inference::CompletionOptions&) {
  if (before_call_) before_call_(calls);
  ++calls;
  return g2c::inference::InferenceResult(prompt, next_step(prompt), std::nullopt, std::nullopt, 0.0,
                                         info_);
}

ScriptedModel::ScriptedModel(std::vector<std::string> script)
    : script_(std::move(script)), info_("scripted", "scripted-model") {}

g2c::inference::InferenceResult ScriptedModel::complete(const std::string& prompt,
                                                        const g2c::inference::CompletionOptions&) {
  prompts.push_back(prompt);
  const auto index = std::min<std::size_t>(static_cast<std::size_t>(calls), script_.size() - 1);
  ++calls;
  return g2c::inference::InferenceResult(prompt, script_[index], std::nullopt, std::nullopt, 0.0,
                                         info_);
}

DriftProbe::DriftProbe(std::string task)
    : task_(std::move(task)), info_("scripted", "drift-probe") {}

g2c::inference::InferenceResult DriftProbe::complete(const std::string& prompt,
                                                     const g2c::inference::CompletionOptions&) {
  std::string step;
  static const char* const areas[] = {"north", "east", "south", "west"};
  if (calls < 4) {
    step = "Surveying before I write.\n" +
           action_text("survey", fmt::format(R"({{"area": "{}"}})", areas[calls]));
  } else if (calls == 4) {
    const bool remembers = prompt.find(task_) != std::string::npos;
    step = action_text("append_line", remembers ? R"({"text": "TARGET"})" : R"({"text": "DRIFT"})");
  } else {
    step = "Final Answer: written";
  }
  ++calls;
  return g2c::inference::InferenceResult(prompt, step, std::nullopt, std::nullopt, 0.0, info_);
}

}  // namespace g2c::exercises::harness
