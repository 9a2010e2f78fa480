// A progress line for long loops: steps done, rate, ETA and the latest metrics; and a waiting line
// for a wait with nothing to count (a model reading its prompt).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

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

/// Shows that a wait with nothing to count is alive: after a second of silence, "(label 3s)" on one
/// terminal line of stderr, redrawn every second until stop() erases it. Drawn from a thread of
/// its own, so the owner must stop() it before writing to the terminal itself (the line and the
/// owner's text never interleave). Nothing at all when stderr is not a terminal or when not
/// enabled: a log gains no lines from it.
///   WaitingLine waiting("thinking");   // ... a model call with no output yet ...
///   waiting.stop();                    // then print the answer
class WaitingLine {
 public:
  explicit WaitingLine(std::string label, bool enabled = true);
  ~WaitingLine();
  WaitingLine(const WaitingLine&) = delete;
  WaitingLine& operator=(const WaitingLine&) = delete;

  /// Ends the wait and erases the line if it was drawn. Safe to call twice.
  void stop();

 private:
  void run();

  std::string label_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool drawn_ = false;
  std::thread thread_;
};

/// "1m05s", "12.3s", "850ms".
std::string format_duration(double seconds);

}  // namespace g2c
