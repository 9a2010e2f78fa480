#include "g2c/inference/stop_strings.h"

#include <algorithm>
#include <utility>

namespace g2c::inference {

StopStrings::StopStrings(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& stop) { return stop.empty(); });
}

std::string StopStrings::push(const std::string& piece) {
  if (stopped_) return "";
  pending_ += piece;
  std::size_t earliest = std::string::npos;
  for (const auto& stop : stops_) earliest = std::min(earliest, pending_.find(stop));
  if (earliest != std::string::npos) {
    stopped_ = true;
    auto shown = pending_.substr(0, earliest);
    pending_.clear();
    return shown;
  }
  // Hold back the longest tail that could be the start of a stop string.
  std::size_t held = 0;
  for (const auto& stop : stops_) {
    for (std::size_t n = std::min(stop.size() - 1, pending_.size()); n > held; --n) {
      if (pending_.compare(pending_.size() - n, n, stop, 0, n) == 0) {
        held = n;
        break;
      }
    }
  }
  auto shown = pending_.substr(0, pending_.size() - held);
  pending_.erase(0, pending_.size() - held);
  return shown;
}

std::string StopStrings::finish() {
  if (stopped_) return "";
  return std::exchange(pending_, std::string());
}

}  // namespace g2c::inference
