// Module 18 — the built-in tools: a calculator, a sandboxed file reader, a web search stub and a
// Python runner, each made by a factory so that every run gets its own (its own folder, its own
// search function, its own time limit).
//
//   make_calculator()                      calculator(expression)  calculator_evaluate, as text
//   make_read_file({.root = "notes"})      read_file(path)         a UTF-8 file under root
//   make_web_search()                      web_search(query)       an offline stub, or yours
//   make_run_python({.timeout = 5})        run_python(code, path?) a Python subprocess
//
// read_file's sandbox: the path must be relative, non-empty, and stay inside root once resolved —
// "..", an absolute path and a symbolic link that points out of root are all refused with a
// ToolError, checked on the resolved path, not on the spelling. The path is walked from root one
// name at a time, each opened beneath the folder before it without following a link (a link is
// read and its target walked the same way), and the file read is the one the walk opened, never
// reopened by name: a rename or a link swapped in while the tool runs cannot lead the read out of
// root. run_python is not a sandbox: the child can do whatever the user running it can (its
// working folder is a convenience, not a wall); it has a wall-clock limit, an output limit, and
// nothing it starts in its process group outlives the call (killed when the child exits or the
// time is up). Use it only where you would run the model's code yourself.
//
// Plain C++, no LibTorch. Provided.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "g2c/tools/tool.h"

namespace g2c::tools {

/// calculator(expression): calculator_evaluate(expression).str() — "4", "3.5". Its refusals are
/// ToolErrors and a zero divisor a ZeroDivisionError; dispatch_tool_call reports both to the
/// model.
Tool make_calculator();

struct ReadFileOptions {
  std::filesystem::path root;      // the folder every read stays inside; must exist
  std::int64_t max_chars = 10000;  // longer files are cut here, with "\n... (truncated)" after
};

/// read_file(path): the file's text. ValueError for a root that is not an existing folder or
/// max_chars <= 0. The model sees one argument, `path`; max_chars is the host's setting, not the
/// model's. ToolError for an empty or absolute path, one that escapes root ("path escapes the
/// allowed root: '../x'"), a missing file ("file not found"), a folder ("not a file"), or text
/// that is not UTF-8. At most 4 · max_chars + 4 bytes are read, however large the file.
Tool make_read_file(const ReadFileOptions& options);

/// A search backend: a query in, results as text out.
using WebSearchFunction = std::function<std::string(const std::string& query)>;

/// web_search(query): search(query), or, without one, an offline stub's fixed answer that says it
/// is a stub and repeats the query (no network is ever used by the course). ToolError for an
/// empty or all-blank query.
Tool make_web_search(WebSearchFunction search = {});

struct RunPythonOptions {
  double timeout = 10.0;                     // seconds of wall clock, > 0
  std::optional<std::filesystem::path> cwd;  // the child's working folder (default: this one)
  std::string python;                        // the interpreter; "" finds it (see below)
  std::size_t max_output_chars = 10000;      // stdout beyond this is cut
};

/// run_python(code, path?): runs `python -c code` and returns its stdout ("(no output)" when it
/// printed nothing, cut at max_output_chars with "\n... (truncated)"); on a non-zero exit
/// "[run_python: exit N]" and the end of its stderr; past the time limit "[run_python: timed out
/// after Ns]", the child's whole process group killed. `path`, optional, names a file under cwd
/// (the same sandbox as read_file) that the code reads as the variable `data` (its absolute
/// path), so the model never nests a quoted file name inside its JSON. ValueError for a timeout
/// <= 0, a cwd that is not an existing folder, or no Python found: `python`, else $G2C_PYTHON,
/// else the project's .venv/bin/python, else python3 on the PATH.
Tool make_run_python(const RunPythonOptions& options = {});

/// The file `path` names under `root`, resolved (symbolic links followed), after read_file's
/// sandbox checks: ToolError for an empty path ("path must be non-empty"), an absolute one, one
/// that resolves outside root ("path escapes the allowed root"), or no such file ("file not
/// found"). `root` must be resolved already (std::filesystem::canonical). What comes back is a
/// name, checked when this returns: whoever opens it again later (run_python's child does) is not
/// held to root by it, as read_file, which reads the file the walk opened, is.
std::filesystem::path resolve_in_sandbox(const std::filesystem::path& root,
                                         const std::string& path);

}  // namespace g2c::tools
