// Module 18 — the built-in tools (builtins.h).
#include "g2c/tools/builtins.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"
#include "g2c/tools/calculator.h"
#include "g2c/tools/process.h"

namespace g2c::tools {

namespace fs = std::filesystem;
using g2c::tokenizer::python_repr;

namespace {

constexpr std::string_view kTruncated = "\n... (truncated)";

/// A JSON-schema-lite object schema: (name, type, description) per property, `required` first.
nlohmann::json object_schema(
    std::initializer_list<std::tuple<const char*, const char*, const char*>> properties,
    std::initializer_list<const char*> required) {
  auto schema_properties = nlohmann::json::object();
  for (const auto& [name, type, description] : properties) {
    schema_properties[name] = {{"type", type}, {"description", description}};
  }
  return {{"type", "object"},
          {"properties", schema_properties},
          {"required", nlohmann::json::array_t(required.begin(), required.end())}};
}

/// `text` cut to its first max_chars characters, with the truncation mark, when it is longer.
std::string cut_to_characters(std::string_view text, std::size_t max_chars, bool more_follows) {
  const auto kept = g2c::tokenizer::utf8_prefix(text, max_chars);
  if (kept.size() == text.size() && !more_follows) return std::string(text);
  return std::string(kept) + std::string(kTruncated);
}

/// A file descriptor that closes itself.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

// A folder is opened only to open names beneath it: O_PATH needs no read permission on it, just
// as the kernel's own walk needs only search permission.
#ifdef O_PATH
constexpr int kFolderFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#else
constexpr int kFolderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#endif
constexpr int kMaxLinks = 40;  // as Linux's own walk: a loop of links ends

/// What the sandbox's walk reached under root.
struct SandboxEntry {
  enum class Kind { file, folder, other };
  Kind kind = Kind::other;
  FileDescriptor fd;  // the regular file itself, opened for reading (Kind::file only)
  fs::path path;      // root / the names walked, links resolved
};

/// The names of a path, "" and "." dropped: "a//./b/" → {"a", "b"}.
std::deque<std::string> names_of(std::string_view path) {
  std::deque<std::string> names;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const auto name = path.substr(0, slash);
    if (!name.empty() && name != ".") names.emplace_back(name);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return names;
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/// The status of an open file or folder.
struct stat status_of(int fd) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) {
    throw ToolError(
        fmt::format("could not read an opened file's status: {}", std::strerror(errno)));
  }
  return status;
}

/// The target of the link `name` in `folder`; nullopt when `name` is no longer a link.
std::optional<std::string> read_link(int folder, const std::string& name) {
  std::string target(256, '\0');
  while (true) {
    const ssize_t count = ::readlinkat(folder, name.c_str(), target.data(), target.size());
    if (count < 0) return std::nullopt;
    if (static_cast<std::size_t>(count) < target.size()) {
      target.resize(static_cast<std::size_t>(count));
      return target;
    }
    target.resize(2 * target.size());  // maybe cut: try again with more room
  }
}

/// Whether `rest`, spelled after a name `depth` folders below root, climbs above root. Used once
/// the walk meets a name that does not exist: what follows has nothing left to walk, so its
/// spelling decides ("nope/../../x" escapes, "nope/x" is not found).
bool climbs_above(std::size_t depth, const std::deque<std::string>& rest) {
  auto level = static_cast<std::ptrdiff_t>(depth);
  for (const auto& name : rest) {
    level += name == ".." ? -1 : 1;
    if (level < 0) return true;
  }
  return false;
}

/// The file or folder `path` names under `root`, walked one name at a time: each name is opened
/// beneath the folder before it without following a link (O_NOFOLLOW), a link is read and its
/// target walked the same way (from "/" when absolute), and ".." steps back along the folders
/// walked, never above root. The walk is inside root while its first folder is root (an absolute
/// link re-enters root when it reaches root's own folder). A regular file is opened here and read
/// through that descriptor, never reopened by name: what is checked is what is read, so a rename
/// or a link swapped in mid-walk can make the walk fail but never lead it out of root.
SandboxEntry open_in_sandbox(const fs::path& root, const std::string& path) {
  if (path.empty()) {
    throw ToolError("path must be non-empty: a relative path under the allowed root");
  }
  if (path.front() == '/') {
    throw ToolError(fmt::format("path must be a relative path under the allowed root, got {}",
                                python_repr(path)));
  }
  const auto escapes = [&] {
    return ToolError(fmt::format("path escapes the allowed root: {}", python_repr(path)));
  };
  const auto not_found = [&] {
    return ToolError(fmt::format("file not found: {}", python_repr(path)));
  };
  const auto changed = [&] {
    return ToolError(fmt::format("path changed while it was read: {}", python_repr(path)));
  };
  const auto cannot_open = [&] {  // after an open that failed, with errno
    if (errno == ELOOP || errno == ENOTDIR || errno == ENOENT) return changed();
    return ToolError(fmt::format("could not read {}: {}", python_repr(path), std::strerror(errno)));
  };

  std::vector<FileDescriptor> folders;  // the walk so far; folders[0] is root, or "/" outside it
  folders.emplace_back(::open(root.c_str(), kFolderFlags));
  if (!folders.back()) {
    throw ToolError(fmt::format("the allowed root {} cannot be opened: {}",
                                python_repr(root.string()), std::strerror(errno)));
  }
  const struct stat root_status = status_of(folders.back().get());
  std::vector<std::string> names;  // the names of folders[1..]
  bool inside = true;
  const auto resolved = [&](const std::string& last) {
    fs::path result = root;
    for (const auto& name : names) result /= name;
    return last.empty() ? result : result / last;
  };
  std::deque<std::string> pending = names_of(path);
  int links = 0;
  while (!pending.empty()) {
    const std::string name = std::move(pending.front());
    pending.pop_front();
    if (name == "..") {
      if (!names.empty()) {
        folders.pop_back();
        names.pop_back();
      } else if (inside) {
        throw escapes();
      }  // else "/.." is "/"
      continue;
    }
    struct stat status {};
    if (::fstatat(folders.back().get(), name.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) throw cannot_open();
      if (!inside || climbs_above(names.size() + 1, pending)) throw escapes();
      throw not_found();
    }
    if (S_ISLNK(status.st_mode)) {
      const auto target = read_link(folders.back().get(), name);
      if (!target) throw changed();
      if (++links > kMaxLinks) {
        throw ToolError(fmt::format("too many symbolic links in {}", python_repr(path)));
      }
      const auto target_names = names_of(*target);
      pending.insert(pending.begin(), target_names.begin(), target_names.end());
      if (target->starts_with('/')) {
        folders.clear();
        names.clear();
        folders.emplace_back(::open("/", kFolderFlags));
        if (!folders.back()) throw cannot_open();
        inside = same_file(status_of(folders.back().get()), root_status);
      }
      continue;
    }
    if (S_ISDIR(status.st_mode)) {
      FileDescriptor folder(::openat(folders.back().get(), name.c_str(), kFolderFlags));
      if (!folder) throw cannot_open();
      if (same_file(status_of(folder.get()), root_status)) {  // back in root by another way
        folders.clear();
        names.clear();
        inside = true;
      } else {
        names.push_back(name);
      }
      folders.push_back(std::move(folder));
      continue;
    }
    if (!inside) throw escapes();
    if (!pending.empty()) {  // a path through a file, "notes.txt/x"
      if (climbs_above(names.size() + 1, pending)) throw escapes();
      throw not_found();
    }
    if (!S_ISREG(status.st_mode))
      return {SandboxEntry::Kind::other, FileDescriptor(), resolved(name)};
    // O_NONBLOCK: should a FIFO be swapped in after the check above, opening it must not wait.
    FileDescriptor file(::openat(folders.back().get(), name.c_str(),
                                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!file) throw cannot_open();
    if (!S_ISREG(status_of(file.get()).st_mode)) throw changed();
    return {SandboxEntry::Kind::file, std::move(file), resolved(name)};
  }
  if (!inside) throw escapes();
  return {SandboxEntry::Kind::folder, FileDescriptor(), resolved("")};
}

/// Up to `limit` bytes read from `fd` from where it stands.
std::string read_up_to(int fd, std::size_t limit, const std::string& path) {
  std::string bytes(limit, '\0');
  std::size_t filled = 0;
  while (filled < limit) {
    const ssize_t count = ::read(fd, bytes.data() + filled, limit - filled);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) {
      throw ToolError(
          fmt::format("could not read {}: {}", python_repr(path), std::strerror(errno)));
    }
    if (count == 0) break;
    filled += static_cast<std::size_t>(count);
  }
  bytes.resize(filled);
  return bytes;
}

fs::path existing_folder(const fs::path& folder, std::string_view what) {
  std::error_code error;
  if (folder.empty() || !fs::is_directory(folder, error)) {
    throw ValueError(
        fmt::format("{} must be an existing folder, got {}", what, python_repr(folder.string())));
  }
  return fs::canonical(folder);
}

/// The interpreter run_python uses (builtins.h says in which order it looks).
std::string find_python(const std::string& requested) {
  std::vector<std::string> candidates;
  if (!requested.empty()) {
    candidates.push_back(requested);
  } else {
    if (const char* python = std::getenv("G2C_PYTHON"); python != nullptr && *python != '\0') {
      candidates.emplace_back(python);
    } else {
      candidates.push_back((fs::path(G2C_SOURCE_DIR) / ".venv" / "bin" / "python").string());
      candidates.emplace_back("python3");
    }
  }
  for (const auto& candidate : candidates) {
    if (const auto found = find_program(candidate)) return found->string();
  }
  throw ValueError(fmt::format(
      "run_python: no Python interpreter found (tried {}); run scripts/setup.sh to make the "
      "project's .venv, set G2C_PYTHON, or pass RunPythonOptions::python",
      fmt::join(candidates, ", ")));
}

}  // namespace

fs::path resolve_in_sandbox(const fs::path& root, const std::string& path) {
  return open_in_sandbox(root, path).path;
}

Tool make_calculator() {
  return Tool("calculator",
              "Evaluate an arithmetic expression: numbers, + - * / // % ** and parentheses. "
              "Returns the result as text.",
              object_schema({{"expression", "string",
                              "The arithmetic expression, e.g. '13 + 28' or '(3 ** 4) / 7'."}},
                            {"expression"}),
              [](const nlohmann::json& arguments) -> nlohmann::json {
                return calculator_evaluate(arguments.at("expression").get<std::string>()).str();
              });
}

Tool make_read_file(const ReadFileOptions& options) {
  if (options.max_chars <= 0) {
    throw ValueError(
        fmt::format("make_read_file: max_chars must be > 0, got {}", options.max_chars));
  }
  const fs::path root = existing_folder(options.root, "make_read_file: root");
  const auto max_chars = static_cast<std::size_t>(options.max_chars);
  return Tool(
      "read_file",
      "Read a UTF-8 text file and return its text. The path is relative to the folder the tool "
      "may read.",
      object_schema({{"path", "string", "The file's path, relative to the allowed folder."}},
                    {"path"}),
      [root, max_chars](const nlohmann::json& arguments) -> nlohmann::json {
        const auto path = arguments.at("path").get<std::string>();
        const SandboxEntry entry = open_in_sandbox(root, path);
        if (entry.kind != SandboxEntry::Kind::file) {
          throw ToolError("not a file: " + python_repr(path));
        }
        // A character is at most 4 bytes: this many bytes decide the text and its truncation,
        // and one more says whether more follows. All are read from the file the walk checked.
        const std::size_t byte_budget = 4 * max_chars + 4;
        std::string bytes = read_up_to(entry.fd.get(), byte_budget + 1, path);
        const bool more_follows = bytes.size() > byte_budget;
        if (more_follows) bytes.resize(byte_budget);
        const std::string_view checked =
            more_follows
                ? std::string_view(bytes).substr(0, g2c::tokenizer::complete_utf8_prefix(bytes))
                : std::string_view(bytes);
        if (!g2c::tokenizer::is_valid_utf8(checked)) {
          throw ToolError("file is not valid UTF-8 text: " + python_repr(path));
        }
        return cut_to_characters(checked, max_chars, more_follows);
      });
}

Tool make_web_search(WebSearchFunction search) {
  return Tool(
      "web_search", "Search the web for a query and return the results as text.",
      object_schema({{"query", "string", "What to search for."}}, {"query"}),
      [search = std::move(search)](const nlohmann::json& arguments) -> nlohmann::json {
        const auto query = arguments.at("query").get<std::string>();
        if (query.find_first_not_of(" \t\n\r\f\v") == std::string::npos) {
          throw ToolError("query must be a non-empty string");
        }
        if (search) return search(query);
        return fmt::format(
            "[web_search stub: no search for {}]\nThis course runs offline: the stub answers "
            "every query with this text. Pass a search function to make_web_search to connect a "
            "real one.",
            python_repr(query));
      });
}

Tool make_run_python(const RunPythonOptions& options) {
  if (!(options.timeout > 0)) {
    throw ValueError(
        fmt::format("make_run_python: timeout must be > 0 seconds, got {}", options.timeout));
  }
  const fs::path cwd =
      options.cwd ? existing_folder(*options.cwd, "make_run_python: cwd") : fs::current_path();
  const std::string python = find_python(options.python);
  const double timeout = options.timeout;
  const std::size_t max_chars = options.max_output_chars;
  return Tool(
      "run_python",
      "Run a Python program and return what it prints. Use print() for results. Optional: "
      "`path` names a file the program can open as the variable `data`. Has a time limit.",
      object_schema({{"code", "string", "The Python source to run."},
                     {"path", "string",
                      "Optional: a file under the working folder, bound to the variable `data`."}},
                    {"code"}),
      [python, cwd, timeout, max_chars](const nlohmann::json& arguments) -> nlohmann::json {
        std::string code = arguments.at("code").get<std::string>();
        if (arguments.contains("path")) {
          const fs::path file = resolve_in_sandbox(cwd, arguments.at("path").get<std::string>());
          // A JSON string literal is a valid Python string literal: quotes and backslashes in
          // the path are escaped, never closing the literal early.
          code = "data = " + nlohmann::json(file.string()).dump() + "\n" + code;
        }
        ProcessOptions process;
        process.timeout_seconds = timeout;
        process.cwd = cwd;
        process.max_stdout_bytes = 4 * max_chars + 4;
        process.max_stderr_bytes = 4 * max_chars + 4;
        const auto result = run_process({python, "-c", code}, process);
        if (result.timed_out) {
          return fmt::format("[run_python: timed out after {}s]", timeout);
        }
        if (result.exit_code != 0) {
          std::string err = g2c::tokenizer::to_valid_utf8(result.err);
          const auto last = err.find_last_not_of(" \t\n\r");
          err = last == std::string::npos ? "(no stderr)" : err.substr(0, last + 1);
          return fmt::format("[run_python: exit {}]\n{}", result.exit_code, err);
        }
        if (result.out.empty()) return "(no output)";
        const std::string out = g2c::tokenizer::to_valid_utf8(result.out);
        return cut_to_characters(out, max_chars, result.out_truncated);
      });
}

}  // namespace g2c::tools
