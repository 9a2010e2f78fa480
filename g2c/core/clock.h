// The wall-clock time as the course's result files and artifacts record it.
#pragma once

#include <chrono>
#include <string>

namespace g2c {

/// The current time in UTC, ISO 8601 to the second. Example: "2026-11-25T02:16:45Z".
std::string utc_timestamp();
/// `when` in UTC, ISO 8601 to the second, or to the nanosecond (the form Ollama's answers carry).
/// Example: (now, true) -> "2026-11-25T02:16:45.123456789Z".
std::string utc_timestamp(std::chrono::system_clock::time_point when, bool nanoseconds = false);

}  // namespace g2c
