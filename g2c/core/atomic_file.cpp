#include "g2c/core/atomic_file.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c {
namespace fs = std::filesystem;

namespace {

// JSON cannot carry NaN or infinity; nlohmann would silently write `null`.
bool has_non_finite(const nlohmann::json& value, std::string& where, const std::string& at) {
  if (value.is_number_float()) {
    if (!std::isfinite(value.get<double>())) {
      where = at.empty() ? "(root)" : at;
      return true;
    }
    return false;
  }
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      if (has_non_finite(item, where, at + "/" + key)) return true;
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (has_non_finite(value[i], where, at + "/" + std::to_string(i))) return true;
    }
  }
  return false;
}

}  // namespace

void write_file_atomic(const fs::path& path, std::string_view contents) {
  const fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) {
    throw ValueError(fmt::format("cannot create folder {}: {}", parent.string(), ec.message()));
  }
  std::random_device entropy;
  const fs::path temporary =
      parent / fmt::format(".{}.tmp-{:08x}", path.filename().string(), entropy());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out)
      throw ValueError(
          fmt::format("cannot write {} (is the folder writable?)", temporary.string()));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(temporary, ec);
      throw ValueError(fmt::format("writing {} failed (disk full?)", path.string()));
    }
  }
  fs::rename(temporary, path, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw ValueError(fmt::format("cannot move the finished file into place at {}", path.string()));
  }
}

void write_json_atomic(const fs::path& path, const nlohmann::json& value, int indent) {
  std::string where;
  if (has_non_finite(value, where, "")) {
    throw ValueError(fmt::format(
        "refusing to write {}: the value at {} is NaN or infinite (did training diverge? try a "
        "smaller learning rate)",
        path.string(), where));
  }
  // Invalid UTF-8 (a model's reply cut mid-character) is written as U+FFFD, never thrown.
  write_file_atomic(
      path, value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ValueError(fmt::format("cannot open {} for reading (does it exist?)", path.string()));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace g2c
