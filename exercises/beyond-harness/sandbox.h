// What the harness programs share: the sandbox (a folder whose notes.txt gets one line per
// append_line execution, so the file itself counts the side effects), its tools, and scripted
// models whose every step is a function of the prompt they are shown — so that a fresh process
// given the same log continues exactly where a dead one stopped, as a real model would be asked to.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "g2c/inference/backend.h"
#include "g2c/tools/registry.h"

namespace g2c::exercises::harness {

namespace fs = std::filesystem;

/// What the sandbox's tools do besides their work, for the drills: a hook after append_line's side
/// effect landed (a crash there is the crash window), the first calls that fail as a timeout, and
/// counts of what ran (in this process).
struct ToolHooks {
  std::function<void(const std::string& line)> after_effect = {};
  std::int64_t append_failures = 0;  // append_line's first calls fail "connection timed out"
  std::int64_t appends = 0;          // executions that wrote their line
  std::int64_t attempts = 0;         // append_line calls, failed ones included
  std::int64_t deletions = 0;        // delete_notes executions
  std::int64_t runs = 0;             // every tool's executions, failed ones included
};

/// append_line {text} (one write of "<text>\n" to <dir>/notes.txt), read_notes {} ("notes.txt
/// holds: line 1 | line 2", or "notes.txt is empty"), delete_notes {} (empties the file: the tool a
/// permission policy exists for), survey {area} (a 400-character report: bulky output for the
/// drift probe). `hooks` must outlive the registry.
g2c::tools::ToolRegistry sandbox_tools(const fs::path& dir, ToolHooks& hooks);

/// The file's lines, without their newlines ({} for a missing file).
std::vector<std::string> file_lines(const fs::path& path);

/// "Action: <tool>\nAction Input: <json>", what module 19's parser reads.
std::string action_text(const std::string& tool, const std::string& json_arguments);

/// The task every notes drill gives: write "line 1" .. "line <n>" to notes.txt, each exactly once.
std::string notes_task(std::int64_t lines);

/// The expected end state: "line 1\n" .. "line <n>\n".
std::string expected_notes(std::int64_t lines);

/// A scripted model that writes line 1 .. n, in order, each once — deciding from its prompt alone:
/// a line is done when an observation says it was appended, or the latest read_notes lists it;
/// after an observation of unknown outcome it reads the notes before anything else; when every
/// line is done it answers. `before_call(k)` runs before its k-th completion (0-based) of this
/// process — a drill's kill point.
class NotesWriter : public g2c::inference::Backend {
 public:
  explicit NotesWriter(std::int64_t lines, std::function<void(std::int64_t call)> before_call = {});
  const g2c::inference::BackendInfo& info() const override { return info_; }
  g2c::inference::InferenceResult complete(
      const std::string& prompt, const g2c::inference::CompletionOptions& options) override;
  /// The next step for `prompt`, without counting a call.
  std::string next_step(const std::string& prompt) const;
  std::int64_t calls = 0;

 private:
  std::int64_t lines_;
  std::function<void(std::int64_t)> before_call_;
  g2c::inference::BackendInfo info_;
};

/// Completions in order, then the last one forever (a model stuck on one action).
class ScriptedModel : public g2c::inference::Backend {
 public:
  explicit ScriptedModel(std::vector<std::string> script);
  const g2c::inference::BackendInfo& info() const override { return info_; }
  g2c::inference::InferenceResult complete(
      const std::string& prompt, const g2c::inference::CompletionOptions& options) override;
  std::int64_t calls = 0;
  std::vector<std::string> prompts;

 private:
  std::vector<std::string> script_;
  g2c::inference::BackendInfo info_;
};

/// The lesson's drift probe: four bulky surveys (four areas), then it appends "TARGET" if the
/// task's words are still in its prompt, "DRIFT" if the context policy dropped them; then it
/// answers.
class DriftProbe : public g2c::inference::Backend {
 public:
  explicit DriftProbe(std::string task);
  const g2c::inference::BackendInfo& info() const override { return info_; }
  g2c::inference::InferenceResult complete(
      const std::string& prompt, const g2c::inference::CompletionOptions& options) override;
  std::int64_t calls = 0;

 private:
  std::string task_;
  g2c::inference::BackendInfo info_;
};

/// The drift probe's task.
inline constexpr const char* DRIFT_TASK =
    "Write TARGET to notes.txt once you have surveyed the workspace.";

}  // namespace g2c::exercises::harness
