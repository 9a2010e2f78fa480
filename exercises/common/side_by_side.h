// Independent training runs side by side: one thread per run, each with its share of the CPU's
// intra-op threads. Two small runs on two cores finish sooner this way than one after the other
// with two threads each, because a tiny model cannot keep two threads busy.
//
// clang-format off
//   ProgressBoard board({"causal", "non-causal"}, steps, /*enabled=*/true);
//   run_side_by_side({[&] { first = train(board.sink(0)); },
//                     [&] { second = train(board.sink(1)); }},
//                    /*concurrent=*/true, /*threads_per_job=*/1);
// clang-format on
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "exercises/common/training.h"

namespace g2c::exercises {

/// Runs `jobs`, each with `threads_per_job` intra-op threads: side by side, a thread per job, when
/// `concurrent`, else one after the other on this thread. Each job computes exactly the same
/// numbers either way (the same thread count means the same order of every floating-point sum).
/// Every job runs to its end; the first exception (in job order) is rethrown afterwards. Jobs must
/// not share mutable state, LibTorch's global generator included: build models before the call
/// and draw from generators of their own.
void run_side_by_side(const std::vector<std::function<void()>>& jobs, bool concurrent,
                      int threads_per_job);

/// An equal share of this process's intra-op threads (at::get_num_threads()) for each of `jobs`
/// runs, at least 1. Example: 2 jobs on a 2-core machine -> 1.
int threads_per_job(std::size_t jobs);

/// One progress display for runs training at the same time: a shared line
/// `causal 420/2000 loss 4.912 | non-causal 400/2000 loss 0.831  ETA 41s` on a terminal (a line
/// per run and tenth of the run otherwise), and each run's summary when it finishes. Thread-safe.
class ProgressBoard {
 public:
  ProgressBoard(std::vector<std::string> labels, std::int64_t total, bool enabled = true);

  /// Where run `slot` reports (TrainLanguageModelOptions::progress).
  ProgressSink sink(std::size_t slot);

 private:
  struct Slot {
    std::string label;
    std::int64_t done = 0;
    std::string metrics;
    bool finished = false;
    std::int64_t logged_bucket = -1;
  };
  void update(std::size_t slot, std::int64_t done, const std::string& metrics);
  void finish(std::size_t slot, const std::string& metrics);
  void draw_line();  // the shared line; holds mutex_

  std::vector<Slot> slots_;
  std::int64_t total_;
  bool enabled_;
  bool terminal_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace g2c::exercises
