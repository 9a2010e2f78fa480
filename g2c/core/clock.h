// The wall-clock time as the course's result files and artifacts record it.
#pragma once

#include <string>

namespace g2c {

/// The current time in UTC, ISO 8601 to the second. Example: "2026-11-25T02:16:45Z".
std::string utc_timestamp();

}  // namespace g2c
