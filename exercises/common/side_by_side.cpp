#include "exercises/common/side_by_side.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <thread>

#include <fmt/format.h>
#include <torch/torch.h>

#include "g2c/core/progress.h"

namespace g2c::exercises {

int threads_per_job(std::size_t jobs) {
  return std::max(1, at::get_num_threads() / static_cast<int>(std::max<std::size_t>(jobs, 1)));
}

void run_side_by_side(const std::vector<std::function<void()>>& jobs, bool concurrent,
                      int threads_per_job) {
  const int threads = at::get_num_threads();
  std::vector<std::exception_ptr> errors(jobs.size());
  auto run_job = [&](std::size_t i) {
    try {
      at::set_num_threads(threads_per_job);  // the calling thread's intra-op threads
      at::globalContext().setFlushDenormal(true);
      jobs[i]();
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  if (concurrent && jobs.size() > 1) {
    std::vector<std::thread> workers;
    for (std::size_t i = 0; i < jobs.size(); ++i) workers.emplace_back(run_job, i);
    for (auto& worker : workers) worker.join();
  } else {
    for (std::size_t i = 0; i < jobs.size(); ++i) run_job(i);
  }
  at::set_num_threads(threads);
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

ProgressBoard::ProgressBoard(std::vector<std::string> labels, std::int64_t total, bool enabled)
    : total_(std::max<std::int64_t>(total, 1)),
      enabled_(enabled),
      terminal_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_ - std::chrono::seconds(1)) {
  for (auto& label : labels) {
    Slot slot;
    slot.label = std::move(label);
    slots_.push_back(std::move(slot));
  }
}

ProgressSink ProgressBoard::sink(std::size_t slot) {
  return {
      [this, slot](std::int64_t done, const std::string& metrics) { update(slot, done, metrics); },
      [this, slot](const std::string& metrics) { finish(slot, metrics); }};
}

void ProgressBoard::draw_line() {
  std::string line;
  std::int64_t slowest = total_;
  for (const auto& slot : slots_) {
    if (slot.finished) continue;
    line += fmt::format("{}{} {}/{} {}", line.empty() ? "" : " | ", slot.label, slot.done, total_,
                        slot.metrics);
    slowest = std::min(slowest, slot.done);
  }
  if (line.empty()) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(slowest) / elapsed : 0.0;
  const std::string eta =
      rate > 0 ? "  ETA " + format_duration(static_cast<double>(total_ - slowest) / rate) : "";
  std::fprintf(stderr, "\r\033[K%s%s", line.c_str(), eta.c_str());
  std::fflush(stderr);
}

void ProgressBoard::update(std::size_t slot, std::int64_t done, const std::string& metrics) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  auto& s = slots_.at(slot);
  s.done = std::clamp<std::int64_t>(done, 0, total_);
  s.metrics = metrics;
  if (terminal_) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    draw_line();
    return;
  }
  const std::int64_t bucket = s.done * 10 / total_;
  if (bucket == s.logged_bucket) return;
  s.logged_bucket = bucket;
  std::fprintf(stderr, "%s  %lld/%lld  %s\n", s.label.c_str(), static_cast<long long>(s.done),
               static_cast<long long>(total_), metrics.c_str());
}

void ProgressBoard::finish(std::size_t slot, const std::string& metrics) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  auto& s = slots_.at(slot);
  s.done = total_;
  s.finished = true;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "%s%s  %lld/%lld  took %s  %s\n", terminal_ ? "\r\033[K" : "",
               s.label.c_str(), static_cast<long long>(total_), static_cast<long long>(total_),
               format_duration(elapsed).c_str(), metrics.c_str());
  if (terminal_) draw_line();
}

}  // namespace g2c::exercises
