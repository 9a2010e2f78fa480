// Module 18 — the built-in tools (builtins.h).
#include "g2c/tools/builtins.h"

#include <cstdlib>
#include <fstream>

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

bool is_within(const fs::path& root, const fs::path& target) {
  auto root_part = root.begin();
  auto target_part = target.begin();
  for (; root_part != root.end(); ++root_part, ++target_part) {
    if (target_part == target.end() || *root_part != *target_part) return false;
  }
  return true;
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
  if (path.empty()) {
    throw ToolError("path must be non-empty: a relative path under the allowed root");
  }
  if (fs::path(path).is_absolute()) {
    throw ToolError(fmt::format("path must be a relative path under the allowed root, got {}",
                                python_repr(path)));
  }
  std::error_code error;
  // Resolved the way the file system will open it: ".." and symbolic links followed.
  const fs::path target = fs::weakly_canonical(root / path, error);
  if (error || !is_within(root, target)) {
    throw ToolError(fmt::format("path escapes the allowed root: {}", python_repr(path)));
  }
  if (!fs::exists(target, error)) {
    throw ToolError(fmt::format("file not found: {}", python_repr(path)));
  }
  return target;
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
        const fs::path target = resolve_in_sandbox(root, path);
        if (!fs::is_regular_file(target)) throw ToolError("not a file: " + python_repr(path));
        // A character is at most 4 bytes: this many bytes decide the text and its truncation.
        const std::size_t byte_budget = 4 * max_chars + 4;
        std::ifstream file(target, std::ios::binary);
        std::string bytes(byte_budget, '\0');
        file.read(bytes.data(), static_cast<std::streamsize>(byte_budget));
        bytes.resize(static_cast<std::size_t>(file.gcount()));
        const bool more_follows = file.peek() != std::char_traits<char>::eof();
        if (!file.eof() && !more_follows && file.fail()) {
          throw ToolError("could not read " + python_repr(path));
        }
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
