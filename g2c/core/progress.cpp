#include "g2c/core/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace g2c {

std::string format_duration(double seconds) {
  if (seconds < 1.0) return fmt::format("{:.0f}ms", seconds * 1000.0);
  if (seconds < 60.0) return fmt::format("{:.1f}s", seconds);
  const auto whole = static_cast<long>(seconds);
  if (whole < 3600) return fmt::format("{}m{:02d}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02d}m", whole / 3600, (whole % 3600) / 60);
}

namespace {

/// Items per second, or seconds per item when an item takes longer than a second (a slow step
/// would read "0.0 it/s").
std::string format_rate(double rate) {
  if (rate <= 0.0) return "- it/s";
  return rate >= 1.0 ? fmt::format("{:.1f} it/s", rate) : fmt::format("{:.1f} s/it", 1.0 / rate);
}

}  // namespace

Progress::Progress(std::string label, std::int64_t total, bool enabled)
    : label_(std::move(label)),
      total_(std::max<std::int64_t>(total, 1)),
      enabled_(enabled),
      terminal_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_ - std::chrono::seconds(1)) {}

Progress::~Progress() {
  if (!finished_) finish();
}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(std::int64_t done, const std::string& metrics) {
  draw(done, metrics, false);
}

void Progress::finish(const std::string& metrics) {
  if (finished_) return;
  draw(total_, metrics, true);
  finished_ = true;
}

void Progress::draw(std::int64_t done, const std::string& metrics, bool final) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  done = std::clamp<std::int64_t>(done, 0, total_);
  const double elapsed = elapsed_seconds();
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const double eta = rate > 0 ? static_cast<double>(total_ - done) / rate : 0.0;
  const std::string tail = metrics.empty() ? "" : "  " + metrics;

  if (terminal_) {
    if (!final && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(kWidth * done / total_);
    const std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
    const std::string timing =
        final ? "took " + format_duration(elapsed) : "ETA " + format_duration(eta);
    std::fprintf(stderr, "\r\033[K%s  [%s]  %lld/%lld  %s  %s%s%s", label_.c_str(), bar.c_str(),
                 static_cast<long long>(done), static_cast<long long>(total_),
                 format_rate(rate).c_str(), timing.c_str(), tail.c_str(), final ? "\n" : "");
    std::fflush(stderr);
    return;
  }
  // Not a terminal: one line per tenth of the run, and the final one.
  const std::int64_t bucket = done * 10 / total_;
  if (!final && bucket == last_logged_bucket_) return;
  last_logged_bucket_ = bucket;
  std::fprintf(stderr, "%s  %lld/%lld  %s  %s%s\n", label_.c_str(), static_cast<long long>(done),
               static_cast<long long>(total_), format_rate(rate).c_str(),
               final ? ("took " + format_duration(elapsed)).c_str()
                     : ("ETA " + format_duration(eta)).c_str(),
               tail.c_str());
}

WaitingLine::WaitingLine(std::string label, bool enabled)
    : label_(std::move(label)), start_(std::chrono::steady_clock::now()) {
  if (enabled && isatty(fileno(stderr)) != 0) thread_ = std::thread([this] { run(); });
}

WaitingLine::~WaitingLine() {
  stop();
}

void WaitingLine::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (drawn_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
  }
}

void WaitingLine::run() {
  std::unique_lock lock(mutex_);
  // The first draw after a second: a quick answer shows no line at all.
  for (auto next = start_ + std::chrono::seconds(1);; next += std::chrono::seconds(1)) {
    if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start_)
            .count();
    std::fprintf(stderr, "\r\033[K(%s %llds)", label_.c_str(), static_cast<long long>(seconds));
    std::fflush(stderr);
    drawn_ = true;
  }
}

}  // namespace g2c
