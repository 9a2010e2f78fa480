// A progress line for long loops: steps done, rate, ETA and the latest metrics.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace g2c {

/// Draws `label  [####....]  120/500  24.1 it/s  ETA 15s  loss 2.31` on one terminal line,
/// redrawn at most ten times a second. When stderr is not a terminal (a log file, CI) it prints
/// a plain line every tenth of the run instead, so logs stay short.
class Progress {
 public:
  Progress(std::string label, std::int64_t total, bool enabled = true);
  ~Progress();

  /// Marks `done` steps complete; `metrics` (e.g. "loss 2.31") is shown after the ETA.
  void update(std::int64_t done, const std::string& metrics = "");
  /// Draws the final state and ends the line. Called by the destructor if not before.
  void finish(const std::string& metrics = "");

  double elapsed_seconds() const;

 private:
  void draw(std::int64_t done, const std::string& metrics, bool final);

  std::string label_;
  std::int64_t total_;
  bool enabled_;
  bool terminal_;
  bool finished_ = false;
  std::int64_t last_logged_bucket_ = -1;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

/// "1m05s", "12.3s", "850ms".
std::string format_duration(double seconds);

}  // namespace g2c
