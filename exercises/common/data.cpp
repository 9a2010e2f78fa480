#include "exercises/common/data.h"

#include <cstdlib>

#include <fmt/format.h>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"

namespace g2c::exercises {

std::filesystem::path project_dir() {
  return std::filesystem::path(G2C_SOURCE_DIR);
}

std::filesystem::path project_python() {
  return project_dir() / ".venv" / "bin" / "python";
}

std::filesystem::path data_file(const std::string& name) {
  const char* override_dir = std::getenv("G2C_DATA_DIR");
  const std::filesystem::path path =
      override_dir ? std::filesystem::path(override_dir) / name : project_dir() / "data" / name;
  if (!std::filesystem::exists(path)) {
    throw g2c::ValueError(fmt::format(
        "data file not found: {}. Run scripts/setup.sh, which puts the course's data there (its "
        "variables G2C_TINYSHAKESPEARE and G2C_DIGITS_CSV name local copies), or point "
        "G2C_DATA_DIR at a folder holding {}.",
        path.string(), name));
  }
  return path;
}

std::string load_tinyshakespeare() {
  std::string text = g2c::read_file(data_file("tinyshakespeare.txt"));
  if (text.size() != 1115394) {
    throw g2c::ValueError(
        fmt::format("data/tinyshakespeare.txt has {} bytes, expected 1,115,394. Delete it and run "
                    "scripts/setup.sh to fetch a verified copy.",
                    text.size()));
  }
  return text;
}

}  // namespace g2c::exercises
