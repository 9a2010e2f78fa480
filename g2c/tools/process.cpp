// Running a program with a time and an output limit (process.h).
#include "g2c/tools/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::tools {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void system_failure(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

/// A pipe whose ends close themselves; both ends close on exec so only the dup2'd copies reach
/// the child.
struct Pipe {
  int read_end = -1;
  int write_end = -1;
  Pipe() {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) system_failure("pipe2");
    read_end = ends[0];
    write_end = ends[1];
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_read() {
    if (read_end >= 0) ::close(read_end);
    read_end = -1;
  }
  void close_write() {
    if (write_end >= 0) ::close(write_end);
    write_end = -1;
  }
};

/// Appends what one read() returns to `kept`, keeping the first (or last) `limit` bytes; false at
/// end of file.
bool drain(int fd, std::string& kept, std::size_t limit, bool keep_last, bool& truncated) {
  char buffer[65536];
  const ssize_t count = ::read(fd, buffer, sizeof buffer);
  if (count < 0) return errno == EINTR || errno == EAGAIN;
  if (count == 0) return false;
  kept.append(buffer, static_cast<std::size_t>(count));
  if (kept.size() > limit) {
    truncated = true;
    if (keep_last) {
      kept.erase(0, kept.size() - limit);
    } else {
      kept.resize(limit);
    }
  }
  return true;
}

/// Whether the child has exited, without reaping it: a zombie keeps its pid, and so its process
/// group's id, from being given to another process while the group is killed.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return -1;
}

}  // namespace

std::optional<fs::path> find_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  const auto executable = [](const fs::path& path) {
    return ::access(path.c_str(), X_OK) == 0 && fs::is_regular_file(path);
  };
  if (name.find('/') != std::string::npos) {
    if (executable(name)) return fs::path(name);
    return std::nullopt;
  }
  const char* path_variable = std::getenv("PATH");
  std::string_view rest = path_variable != nullptr ? path_variable : "/usr/bin:/bin";
  while (true) {
    const auto colon = rest.find(':');
    const fs::path folder(std::string(rest.substr(0, colon)));
    if (!folder.empty() && executable(folder / name)) return folder / name;
    if (colon == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(colon + 1);
  }
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) throw ValueError("run_process: argv must name a program");
  if (!(options.timeout_seconds > 0)) {
    throw ValueError(
        fmt::format("run_process: timeout must be > 0 seconds, got {}", options.timeout_seconds));
  }
  const auto program = find_program(argv[0]);
  if (!program) {
    throw ValueError(
        fmt::format("run_process: no program {} (not a path to an executable, nor "
                    "on the PATH)",
                    argv[0]));
  }
  // Everything the child needs is made before fork(): after it only async-signal-safe calls.
  const std::string program_path = program->string();
  const std::string cwd = options.cwd ? options.cwd->string() : std::string();
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  Pipe out;
  Pipe err;
  const pid_t pid = ::fork();
  if (pid < 0) system_failure("fork");
  if (pid == 0) {
    ::setpgid(0, 0);  // a group of its own, so a timeout can kill its children too
    const int null_input = ::open("/dev/null", O_RDONLY);
    if (null_input >= 0) ::dup2(null_input, STDIN_FILENO);
    ::dup2(out.write_end, STDOUT_FILENO);
    ::dup2(err.write_end, STDERR_FILENO);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
      constexpr char kMessage[] = "run_process: cannot enter the working folder\n";
      [[maybe_unused]] const auto ignored = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
      ::_exit(127);
    }
    ::execv(program_path.c_str(), args.data());
    constexpr char kMessage[] = "run_process: exec failed\n";
    [[maybe_unused]] const auto ignored = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from here, so the group exists whichever runs first
  out.close_write();
  err.close_write();

  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options.timeout_seconds));
  ProcessResult result;
  bool err_truncated = false;
  bool out_open = true;
  bool err_open = true;
  bool exited = false;
  bool group_killed = false;
  while (true) {
    if (!exited) exited = has_exited(pid);
    if (exited && !group_killed) {
      // The child is done: what it left running goes now, and with it every other holder of the
      // pipes, so the reads below reach end of file instead of waiting on a grandchild.
      ::kill(-pid, SIGKILL);
      group_killed = true;
    }
    if (exited && !out_open && !err_open) break;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    if (out_open || err_open) {
      // Woken now and then even when nothing is written, to notice an exit while a grandchild
      // still holds the pipes open.
      pollfd fds[2] = {{out_open ? out.read_end : -1, POLLIN, 0},
                       {err_open ? err.read_end : -1, POLLIN, 0}};
      const int ready = ::poll(fds, 2, static_cast<int>(std::min<long>(left.count(), 20)));
      if (ready < 0 && errno != EINTR) system_failure("poll");
      if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
        out_open =
            drain(out.read_end, result.out, options.max_stdout_bytes, false, result.out_truncated);
      }
      if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
        err_open = drain(err.read_end, result.err, options.max_stderr_bytes, true, err_truncated);
      }
    } else {
      // Both pipes closed: wait for the exit itself, still bounded by the deadline (a child can
      // close its output and go on running).
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  // However the call ends, the group is killed before the child is reaped: until then its pid
  // still names the group, so the signal cannot reach a stranger that was given the pid since.
  if (!exited && !has_exited(pid)) result.timed_out = true;  // else it exited as time ran out
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = exit_code_of(status);
  return result;
}

}  // namespace g2c::tools
