// Stop strings (Ollama's "stop" option, OpenAI's "stop"): text that ends a generation, taken out
// of what is shown. A generation's pieces go through push() as they come; the text is held back
// only while it could still turn into a stop string. Implemented for you (module 16).
#pragma once

#include <string>
#include <vector>

namespace g2c::inference {

/// Text pieces with stop strings taken out: push() returns what is safe to show (holding back a
/// tail that could begin a stop string), and once a stop string appears, the text before it and
/// stopped() == true. Example: stops {"\n\n"}: push("a\n") -> "a", push("\nb") -> "" and stopped.
class StopStrings {
 public:
  explicit StopStrings(std::vector<std::string> stops);
  std::string push(const std::string& piece);
  /// What was held back, when no stop string came.
  std::string finish();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
};

}  // namespace g2c::inference
