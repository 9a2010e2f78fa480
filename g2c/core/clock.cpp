#include "g2c/core/clock.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace g2c {

std::string utc_timestamp() {
  return utc_timestamp(std::chrono::system_clock::now());
}

std::string utc_timestamp(std::chrono::system_clock::time_point when, bool nanoseconds) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm parts{};
  gmtime_r(&seconds, &parts);  // the thread-safe gmtime
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &parts);
  if (!nanoseconds) return std::string(stamp) + "Z";
  const auto fraction =
      std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count() %
      1'000'000'000;
  char digits[16];
  std::snprintf(digits, sizeof digits, ".%09lldZ", static_cast<long long>(fraction));
  return std::string(stamp) + digits;
}

}  // namespace g2c
