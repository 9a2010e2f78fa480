// Writing result files so that a crash or Ctrl-C never leaves half a file behind.
#pragma once

#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

namespace g2c {

/// Writes `contents` to `path` through a temporary file in the same folder and a rename, creating
/// parent folders as needed. Readers see either the old file or the complete new one.
void write_file_atomic(const std::filesystem::path& path, std::string_view contents);

/// Writes `value` as JSON indented by `indent` spaces (-1: all on one line, for large grids) with a
/// trailing newline, atomically. Non-finite numbers are rejected (JSON has no NaN) with a
/// ValueError naming the path; invalid UTF-8 in a string is written as U+FFFD.
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& value,
                       int indent = 2);

/// Reads a whole file; ValueError naming the path when it cannot be read.
std::string read_file(const std::filesystem::path& path);

}  // namespace g2c
