// Running a program with a time limit and an output limit, for run_python (builtins.h).
//
// The child runs in a process group of its own, with stdin from /dev/null and stdout and stderr
// captured through pipes. When the call ends — the child exited, or the time is up — the whole
// group is killed (SIGKILL), so what the child started in the background does not outlive the call
// (a program that leaves the group on purpose, with setsid, is beyond its reach). The call never
// waits longer than the limit plus the moment it takes to reap, even when something outside the
// group still holds the pipes. Output beyond the limits is read and dropped, so a child that prints
// forever cannot fill memory or block on a full pipe. POSIX only.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace g2c::tools {

struct ProcessOptions {
  double timeout_seconds = 10.0;
  std::optional<std::filesystem::path> cwd;
  std::size_t max_stdout_bytes = 1 << 20;  // the first bytes are kept
  std::size_t max_stderr_bytes = 1 << 20;  // the last bytes are kept (a traceback ends there)
};

struct ProcessResult {
  int exit_code = 0;       // the exit status; -N when killed by signal N, as Python reports it
  bool timed_out = false;  // killed at the time limit (exit_code is then -9)
  std::string out;         // stdout, at most max_stdout_bytes
  std::string err;         // stderr, at most max_stderr_bytes
  bool out_truncated = false;
};

/// Runs argv[0] (a path, or a name looked up on the PATH) with the arguments argv[1..].
/// ValueError for an empty argv, a program that cannot be found, or a timeout <= 0;
/// std::system_error when the system refuses a pipe or a process.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options);

/// The program's path: `name` itself when it holds a '/', else the first executable of that name
/// on the PATH; nullopt when there is none.
std::optional<std::filesystem::path> find_program(const std::string& name);

}  // namespace g2c::tools
