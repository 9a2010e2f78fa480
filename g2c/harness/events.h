// Beyond module harness — the event log, the harness's one source of truth, and its small types.
//
// A long agent run is an append-only log of events, one JSON line each; the prompt, the state a
// resumed run starts from and the audit trail are all views of it. The log is the only state:
// nothing the harness needs lives in memory alone, so a process killed at any moment can be
// replaced by a fresh one that reads the file.
//
//   Permission   what the harness lets a tool do without asking: allow, ask, deny
//   Event        one record: its step (its place in the log), a type, a JSON payload, a call id
//   EventLog     the file: append one event, replay them all; repair() after a torn write
//   Budgets      the stopping rules: steps, retries, repeats, context tokens
//   estimate_tokens  characters / 4 + 1, the budget arithmetic's unit
//
// Event types by convention (free-form strings; these are the ones the harness writes):
//   task {content}   model_turn {completion}   tool_call {tool, arguments}   approval {approved}
//   tool_result {output, is_error, status}     final_answer {content}        stopped {reason}
//
// Scope, as the lesson says: one writer, an ordinary process crash (SIGKILL included), an intact
// file system. A line is written with one write(2), so a killed process leaves whole lines, or a
// last line cut short if it died inside the write; replay() refuses that torn line by name and
// repair() drops it. Power loss and concurrent writers are out of scope (no fsync, no lock).
// Plain C++, no LibTorch. Everything here is provided.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace g2c::harness {

using Json = nlohmann::json;

enum class Permission { Allow, Ask, Deny };

/// "allow", "ask", "deny".
std::string to_string(Permission permission);
/// The inverse; ValueError naming the three accepted words.
Permission permission_from_string(std::string_view text);

/// One immutable record of the trajectory.
struct Event {
  std::int64_t step = 0;  // its place in the log: the number of events before it
  std::string type;       // "task", "tool_call", ... (see the top of this file)
  Json payload = Json::object();
  std::optional<std::string> call_id = std::nullopt;  // ties a tool_call to its tool_result

  /// One line of JSON, keys sorted: {"call_id": ..., "payload": ..., "step": ..., "type": ...}.
  /// Invalid UTF-8 in a payload (a tool's raw bytes) is written as U+FFFD, never an exception.
  std::string to_json() const;
  /// The inverse. ValueError saying what is wrong: not JSON, nested deeper than 64 levels, not an
  /// object, a missing or mistyped field (step a non-negative integer, type a non-empty string,
  /// payload an object, call_id a string or null).
  static Event from_json(std::string_view line);

  bool operator==(const Event& other) const = default;
};

/// The append-only JSON-lines file.
class EventLog {
 public:
  /// Creates the parent folders (not the file: a log with no events is a missing file).
  explicit EventLog(std::filesystem::path path);

  const std::filesystem::path& path() const { return path_; }

  /// Appends one event numbered with the count of events already in the file and returns it.
  /// The count comes from replay(), as in the Python edition: every append re-reads the file
  /// (quadratic in the log's length; the harness exercise measures what that costs). ValueError
  /// when the file is torn or damaged (nothing is appended to it); RuntimeError naming the path
  /// when the line cannot be written.
  Event append(std::string type, Json payload, std::optional<std::string> call_id = std::nullopt);

  /// Every event in the file, in order, read from the file each time (a second EventLog on the
  /// same path sees the same history); empty for a missing file. Blank lines are skipped.
  /// ValueError "<path>:<line>: ..." for a line that does not parse, an event whose step is not its
  /// place in the file (an edited log, two logs joined), or a last line without its newline — a
  /// write cut short by a crash, which repair() drops.
  std::vector<Event> replay() const;

  /// Drops a torn last line (the bytes after the file's last newline) and returns them; nullopt
  /// when the file ends with a whole line or does not exist. Nothing else is touched: a damaged
  /// line in the middle is not a crash's doing, and replay() still refuses it.
  std::optional<std::string> repair() const;

 private:
  std::filesystem::path path_;
};

/// The stopping rules: safety equipment, not tuning knobs.
struct Budgets {
  std::int64_t max_steps = 12;               // backend calls over the whole logical run
  std::int64_t max_retries = 2;              // retries of one transient tool failure
  std::int64_t max_repeats = 2;              // the same action again, this many times: stop
  std::int64_t context_tokens = 2000;        // the trajectory's share of the prompt, at most
  std::int64_t model_context_tokens = 4096;  // the model's whole window: prompt + reply
};

/// A cheap token estimate: floor(characters / 4) + 1, characters counted as code points (Python's
/// len). Good enough for budget arithmetic; a tokenizer round trip is not needed to say "roughly
/// how big".
std::int64_t estimate_tokens(std::string_view text);

}  // namespace g2c::harness
