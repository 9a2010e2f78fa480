// Beyond module harness — the event log (events.h). Provided.
#include "g2c/harness/events.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::harness {

namespace {

constexpr int kMaxDepth = 64;  // a log line nested deeper than this is not one the harness wrote

std::string read_all(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ValueError(fmt::format("cannot read the event log {}", path.string()));
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

std::string to_string(Permission permission) {
  switch (permission) {
    case Permission::Allow:
      return "allow";
    case Permission::Ask:
      return "ask";
    case Permission::Deny:
      return "deny";
  }
  return "allow";
}

Permission permission_from_string(std::string_view text) {
  if (text == "allow") return Permission::Allow;
  if (text == "ask") return Permission::Ask;
  if (text == "deny") return Permission::Deny;
  throw ValueError(fmt::format("unknown permission '{}': expected allow, ask or deny", text));
}

std::string Event::to_json() const {
  const Json line = {{"step", step},
                     {"type", type},
                     {"payload", payload},
                     {"call_id", call_id ? Json(*call_id) : Json(nullptr)}};
  // nlohmann's objects keep their keys sorted, so dump() is Python's sort_keys=True.
  return line.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Event Event::from_json(std::string_view line) {
  Json raw;
  try {
    raw = Json::parse(line, [](int depth, Json::parse_event_t, Json&) {
      if (depth > kMaxDepth) {
        throw ValueError(fmt::format("nested deeper than {} levels", kMaxDepth));
      }
      return true;
    });
  } catch (const Json::parse_error& error) {
    throw ValueError(fmt::format("not a JSON event: {}", error.what()));
  }
  if (!raw.is_object()) throw ValueError("an event must be a JSON object");
  const auto field = [&](const char* key) -> const Json& {
    if (!raw.contains(key)) throw ValueError(fmt::format("the event has no \"{}\"", key));
    return raw.at(key);
  };
  const auto& step = field("step");
  if (!step.is_number_integer() || step.get<std::int64_t>() < 0) {
    throw ValueError(fmt::format("\"step\" must be a non-negative integer, got {}", step.dump()));
  }
  const auto& type = field("type");
  if (!type.is_string() || type.get<std::string>().empty()) {
    throw ValueError(fmt::format("\"type\" must be a non-empty string, got {}", type.dump()));
  }
  const auto& payload = field("payload");
  if (!payload.is_object()) {
    throw ValueError(fmt::format("\"payload\" must be an object, got {}", payload.dump()));
  }
  Event event{step.get<std::int64_t>(), type.get<std::string>(), payload, std::nullopt};
  if (raw.contains("call_id") && !raw.at("call_id").is_null()) {
    if (!raw.at("call_id").is_string()) {
      throw ValueError(
          fmt::format("\"call_id\" must be a string or null, got {}", raw.at("call_id").dump()));
    }
    event.call_id = raw.at("call_id").get<std::string>();
  }
  return event;
}

EventLog::EventLog(std::filesystem::path path) : path_(std::move(path)) {
  if (path_.empty()) throw ValueError("EventLog needs a file path, got an empty one");
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path());
}

Event EventLog::append(std::string type, Json payload, std::optional<std::string> call_id) {
  const auto events = replay();  // also refuses to write after a torn or damaged line
  Event event{static_cast<std::int64_t>(events.size()), std::move(type), std::move(payload),
              std::move(call_id)};
  if (event.type.empty()) throw ValueError("an event's type must be a non-empty string");
  if (!event.payload.is_object()) {
    throw ValueError(
        fmt::format("an event's payload must be a JSON object, got {}",
                    event.payload.dump(-1, ' ', false, Json::error_handler_t::replace)));
  }
  const std::string line = event.to_json() + "\n";
  // One write(2) of the whole line: a process killed now leaves the line whole or not begun, and
  // only a kill inside the call can leave it short (replay() refuses that, repair() drops it).
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw RuntimeError(
        fmt::format("cannot open the event log {}: {}", path_.string(), std::strerror(errno)));
  }
  std::size_t written = 0;
  while (written < line.size()) {
    const auto n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string reason = std::strerror(errno);
      ::close(fd);
      throw RuntimeError(
          fmt::format("cannot append to the event log {}: {} (its last line may be "
                      "torn: EventLog::repair() drops it)",
                      path_.string(), reason));
    }
    written += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return event;
}

std::vector<Event> EventLog::replay() const {
  std::vector<Event> events;
  if (!std::filesystem::exists(path_)) return events;
  const std::string text = read_all(path_);
  std::size_t start = 0;
  std::int64_t line_number = 0;
  while (start < text.size()) {
    ++line_number;
    const auto end = text.find('\n', start);
    if (end == std::string::npos) {
      throw ValueError(fmt::format(
          "{}:{}: the last line has no newline: a write cut short (a crash while the line was "
          "being written). EventLog::repair() drops it; the run then resumes from the whole "
          "lines before it",
          path_.string(), line_number));
    }
    const std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    Event event;
    try {
      event = Event::from_json(line);
    } catch (const ValueError& error) {
      throw ValueError(fmt::format("{}:{}: {}", path_.string(), line_number, error.what()));
    }
    if (event.step != static_cast<std::int64_t>(events.size())) {
      throw ValueError(fmt::format(
          "{}:{}: event numbered {} stands at place {}: the log was edited, or two logs were "
          "joined; an event log is only ever appended to",
          path_.string(), line_number, event.step, events.size()));
    }
    events.push_back(std::move(event));
  }
  return events;
}

std::optional<std::string> EventLog::repair() const {
  if (!std::filesystem::exists(path_)) return std::nullopt;
  const std::string text = read_all(path_);
  if (text.empty() || text.back() == '\n') return std::nullopt;
  const auto last_newline = text.rfind('\n');
  const std::size_t keep = last_newline == std::string::npos ? 0 : last_newline + 1;
  std::filesystem::resize_file(path_, keep);
  return text.substr(keep);
}

std::int64_t estimate_tokens(std::string_view text) {
  return static_cast<std::int64_t>(g2c::tokenizer::utf8_length(text) / 4 + 1);
}

}  // namespace g2c::harness
