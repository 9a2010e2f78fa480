#include "g2c/core/clock.h"

#include <chrono>
#include <ctime>

namespace g2c {

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm parts{};
  gmtime_r(&now, &parts);  // the thread-safe gmtime
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return stamp;
}

}  // namespace g2c
