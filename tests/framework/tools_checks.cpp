// Framework checks of module 18 (g2c/tools) that no course test makes: the read_file sandbox
// against symbolic links and ".." spelled every way, and against a folder swapped for a link while
// it reads; run_process's limits (a child that outlives its time limit with children of its own,
// one that exits leaving children running, one that prints without end, one that reads stdin), and
// the rescue of calls written as text with braces inside strings. The calculator's arithmetic is
// held to Python's own by scripts/check_calculator.py.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "g2c/core/errors.h"
#include "g2c/tools/process.h"
#include "g2c/tools/tools.h"
#include "g2c_test.h"

namespace fs = std::filesystem;
using g2c::tools::ToolError;
using Json = nlohmann::json;

namespace {

class Scratch {
 public:
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "g2c-tools-check-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string read_with(const g2c::tools::Tool& tool, const std::string& path) {
  return tool.func()(Json{{"path", path}}).get<std::string>();
}

/// Whether process `pid` has ended: there is no such process, or only its zombie is left (it runs
/// nothing, and an init that does not reap — as in some containers — may keep it for ever).
bool has_ended(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat_file, line)) return true;  // reaped between the two looks
  const auto name_end = line.rfind(')');            // "pid (name) state ...": names hold spaces
  return name_end != std::string::npos && line.size() > name_end + 2 && line[name_end + 2] == 'Z';
}

/// Whether `pid` ends within `seconds` (it is killed here if not, so no check leaves it running).
bool ends_within(pid_t pid, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!has_ended(pid)) {
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

pid_t read_pid(const fs::path& path) {
  std::ifstream file(path);
  pid_t pid = 0;
  file >> pid;
  return pid;
}

}  // namespace

TEST_CASE("read_file_sandbox_follows_links_and_refuses_every_way_out", "[tools]") {
  const Scratch scratch;
  const fs::path root = scratch.path() / "root";
  fs::create_directories(root / "sub");
  write_text(scratch.path() / "secret.txt", "secret");
  write_text(root / "sub" / "inside.txt", "inside");
  fs::create_symlink(scratch.path() / "secret.txt", root / "link_out.txt");
  fs::create_symlink(scratch.path(), root / "dir_out");
  fs::create_symlink(root / "sub" / "inside.txt", root / "link_in.txt");
  const auto tool = g2c::tools::make_read_file({root});

  // Links that stay inside are followed; links that leave are refused, file or folder.
  CHECK(read_with(tool, "link_in.txt") == "inside");
  CHECK(read_with(tool, "sub/../sub/./inside.txt") == "inside");
  CHECK_THROWS_MATCHES(read_with(tool, "link_out.txt"), ToolError, MessageContains("escapes"));
  CHECK_THROWS_MATCHES(read_with(tool, "dir_out/secret.txt"), ToolError,
                       MessageContains("escapes"));
  for (const std::string path : {"../secret.txt", "sub/../../secret.txt", "./../secret.txt",
                                 "sub/../../root/../secret.txt"}) {
    CAPTURE(path);
    CHECK_THROWS_MATCHES(read_with(tool, path), ToolError, MessageContains("escapes"));
  }
  // A sibling folder whose name starts with the root's is outside it.
  fs::create_directories(scratch.path() / "root2");
  write_text(scratch.path() / "root2" / "x.txt", "x");
  CHECK_THROWS_MATCHES(read_with(tool, "../root2/x.txt"), ToolError, MessageContains("escapes"));
  CHECK_THROWS_AS(read_with(tool, (root / "sub" / "inside.txt").string()), ToolError);
}

TEST_CASE("read_file_walks_links_inside_root_as_the_file_system_does", "[tools]") {
  const Scratch scratch;
  const fs::path root = scratch.path() / "root";
  fs::create_directories(root / "sub" / "deeper");
  write_text(root / "sub" / "inside.txt", "inside");
  write_text(root / "sub" / "deeper" / "deep.txt", "deep");
  fs::create_symlink("b", root / "a");
  fs::create_symlink("sub/inside.txt", root / "b");
  fs::create_directory_symlink("sub/deeper", root / "to_deeper");
  fs::create_symlink(root / "sub" / "deeper" / "deep.txt", root / "sub" / "absolute");
  fs::create_symlink("loop_b", root / "loop_a");
  fs::create_symlink("loop_a", root / "loop_b");
  ::mkfifo((root / "fifo").c_str(), 0600);
  const auto tool = g2c::tools::make_read_file({root});

  CHECK(read_with(tool, "a") == "inside");  // a chain of relative links
  CHECK(read_with(tool, "to_deeper/deep.txt") == "deep");
  CHECK(read_with(tool, "sub/absolute") == "deep");  // an absolute link back into root
  // ".." after a link to a folder is that folder's parent, as the kernel walks it.
  CHECK(read_with(tool, "to_deeper/../inside.txt") == "inside");
  CHECK_THROWS_MATCHES(read_with(tool, "to_deeper/../../../x"), ToolError,
                       MessageContains("escapes"));
  CHECK_THROWS_MATCHES(read_with(tool, "nope/../../x"), ToolError, MessageContains("escapes"));
  CHECK_THROWS_MATCHES(read_with(tool, "sub/inside.txt/x"), ToolError,
                       MessageContains("not found"));
  CHECK_THROWS_AS(read_with(tool, "loop_a"), ToolError);
  CHECK_THROWS_MATCHES(read_with(tool, "fifo"), ToolError, MessageContains("not a file"));
  CHECK(g2c::tools::resolve_in_sandbox(fs::canonical(root), "a") ==
        fs::canonical(root) / "sub" / "inside.txt");
}

TEST_CASE("read_file_reads_the_file_it_checked_while_a_folder_is_swapped_for_a_link", "[tools]") {
  const Scratch scratch;
  const fs::path root = scratch.path() / "root";
  const fs::path outside = scratch.path() / "outside";
  fs::create_directories(root / "d");
  fs::create_directories(outside);
  write_text(root / "d" / "secret.txt", "inside");
  write_text(outside / "secret.txt", "secret");
  const auto tool = g2c::tools::make_read_file({root});

  // d, a folder replaced by a link out before the call: refused.
  fs::rename(root / "d", root / "d.away");
  fs::create_directory_symlink(outside, root / "d");
  CHECK_THROWS_MATCHES(read_with(tool, "d/secret.txt"), ToolError, MessageContains("escapes"));
  fs::remove(root / "d");
  fs::rename(root / "d.away", root / "d");

  // The same swap, over and over, while the tool reads d/secret.txt. A sandbox that checks the
  // path and then opens it again by name can pass the check on the folder and open through the
  // link; reading what the walk opened returns "inside" or refuses, never the secret.
  std::atomic<bool> stop = false;
  std::thread swapper([&] {
    std::error_code ignored;
    while (!stop) {
      fs::rename(root / "d", root / "d.away", ignored);
      fs::create_directory_symlink(outside, root / "d", ignored);
      fs::remove(root / "d", ignored);
      fs::rename(root / "d.away", root / "d", ignored);
    }
  });
  int inside = 0;
  int refused = 0;
  int leaked = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  while (std::chrono::steady_clock::now() < until && leaked == 0) {
    try {
      if (read_with(tool, "d/secret.txt") == "inside") {
        ++inside;
      } else {
        ++leaked;
      }
    } catch (const ToolError&) {
      ++refused;
    }
  }
  stop = true;
  swapper.join();
  CAPTURE(inside, refused);
  CHECK(leaked == 0);
  CHECK(inside > 0);  // the folder and the link were both met: the race was run, not missed
  CHECK(refused > 0);
}

TEST_CASE("read_file_reads_a_bounded_prefix_and_refuses_bytes_that_are_not_utf8", "[tools]") {
  const Scratch scratch;
  // 3 MB of two-byte characters: 20 characters come back, whatever the file's size.
  std::string big;
  for (int i = 0; i < 1'500'000; ++i) big += "\xC3\xA9";
  write_text(scratch.path() / "big.txt", big);
  write_text(scratch.path() / "binary.bin", std::string("ab\xFF\xFE", 4));
  const auto tool = g2c::tools::make_read_file({scratch.path(), 20});
  std::string expected;
  for (int i = 0; i < 20; ++i) expected += "\xC3\xA9";
  CHECK(read_with(tool, "big.txt") == expected + "\n... (truncated)");
  CHECK_THROWS_MATCHES(read_with(tool, "binary.bin"), ToolError, MessageContains("UTF-8"));
}

TEST_CASE("run_process_kills_the_whole_group_at_the_time_limit", "[tools]") {
  const Scratch scratch;
  const fs::path marker = scratch.path() / "grandchild.pid";
  // The child starts a grandchild that would outlive it, records its pid, and hangs.
  const std::string script = "sleep 30 & echo $! > '" + marker.string() + "'; wait";
  g2c::tools::ProcessOptions options;
  options.timeout_seconds = 0.5;
  const auto start = std::chrono::steady_clock::now();
  const auto result = g2c::tools::run_process({"/bin/sh", "-c", script}, options);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  CHECK(result.timed_out);
  CHECK(result.exit_code == -SIGKILL);
  CHECK(took.count() < 3.0);
  const pid_t grandchild = read_pid(marker);
  REQUIRE(grandchild > 0);
  CHECK(ends_within(grandchild, 2.0));
}

TEST_CASE("run_process_kills_what_the_child_leaves_running_when_it_exits", "[tools]") {
  const Scratch scratch;
  const fs::path marker = scratch.path() / "grandchild.pid";
  const std::string record = "echo $! > '" + marker.string() + "'";
  // The child starts a grandchild in the background, records its pid and exits at once. The first
  // grandchild holds the child's stdout and stderr open (reading them must not wait for it), the
  // second lets go of them and is orphaned at once (nothing on the pipes says it is there).
  for (const std::string& script : {"sleep 30 & " + record + "; echo hi",
                                    "(sleep 30 >/dev/null 2>&1 & " + record + "); echo hi"}) {
    CAPTURE(script);
    fs::remove(marker);
    g2c::tools::ProcessOptions options;
    options.timeout_seconds = 10;
    const auto start = std::chrono::steady_clock::now();
    const auto result = g2c::tools::run_process({"/bin/sh", "-c", script}, options);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    CHECK_FALSE(result.timed_out);
    CHECK(result.exit_code == 0);
    CHECK(result.out == "hi\n");
    CHECK(took.count() < 5.0);
    const pid_t grandchild = read_pid(marker);
    REQUIRE(grandchild > 0);
    CHECK(ends_within(grandchild, 2.0));
  }
}

TEST_CASE("run_process_bounds_output_and_closes_stdin", "[tools]") {
  g2c::tools::ProcessOptions options;
  options.timeout_seconds = 20;
  options.max_stdout_bytes = 1000;
  options.max_stderr_bytes = 100;
  // 50 MB of output is read and dropped, not kept and not left to block the child.
  const auto loud = g2c::tools::run_process(
      {"/bin/sh", "-c", "head -c 50000000 /dev/zero | tr '\\0' x; echo tail >&2; exit 3"}, options);
  CHECK_FALSE(loud.timed_out);
  CHECK(loud.exit_code == 3);
  CHECK(loud.out.size() == 1000);
  CHECK(loud.out_truncated);
  CHECK(loud.err == "tail\n");
  // stdin is /dev/null: a child that reads it gets end of file at once instead of waiting.
  const auto reader = g2c::tools::run_process({"/bin/sh", "-c", "cat; echo done"}, options);
  CHECK(reader.out == "done\n");
  CHECK_THROWS_AS(g2c::tools::run_process({"/no/such/program"}, options), g2c::ValueError);
  CHECK_THROWS_AS(g2c::tools::run_process({}, options), g2c::ValueError);
}

TEST_CASE("run_python_reports_a_crash_and_keeps_the_end_of_a_long_traceback", "[tools]") {
  g2c::tools::RunPythonOptions options;
  options.max_output_chars = 200;
  const auto tool = g2c::tools::make_run_python(options);
  const auto out =
      tool.func()(Json{{"code",
                        "import sys\nfor i in range(1000): print('noise', i, file=sys.stderr)\n"
                        "raise KeyError('the end')"}})
          .get<std::string>();
  CHECK(out.starts_with("[run_python: exit 1]"));
  CHECK(out.find("KeyError: 'the end'") != std::string::npos);
  const auto killed =
      tool.func()(Json{{"code", "import os, signal; os.kill(os.getpid(), 9)"}}).get<std::string>();
  CHECK(killed.starts_with("[run_python: exit -9]"));
}

TEST_CASE("rescue_finds_the_call_past_braces_in_prose_and_strings", "[tools]") {
  const auto call = g2c::tools::rescue_tool_call(
      R"(Sets look like {1, 2}. {"note": "a } inside", "x": {"y": 1}} and then )"
      R"({"name": "calculator", "arguments": {"expression": "{not json}"}})");
  REQUIRE(call.has_value());
  CHECK(call->name() == "calculator");
  CHECK(call->arguments() == Json{{"expression", "{not json}"}});
  CHECK_FALSE(g2c::tools::rescue_tool_call(R"({"name": "x", "arguments": {"a": 1})").has_value());
  CHECK_FALSE(g2c::tools::rescue_tool_call(R"({"name": "", "arguments": {}})").has_value());
  CHECK_FALSE(g2c::tools::rescue_tool_call(R"({"name": "x", "arguments": [1]})").has_value());
}
