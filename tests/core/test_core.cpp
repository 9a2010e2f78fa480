// Framework tests of the pieces without LibTorch: errors, atomic files, durations.
#include <filesystem>
#include <fstream>
#include <limits>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"

namespace fs = std::filesystem;

namespace {

fs::path fresh_temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("g2c_core_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("todo_message_names_function_file_module_and_switch", "[core]") {
  const g2c::NotImplementedError error = g2c::todo("Linear::forward", "g2c/nn/linear.cpp", "03");
  const std::string message = error.what();
  CHECK(message.rfind("NotImplementedError:", 0) == 0);
  CHECK(message.find("Linear::forward") != std::string::npos);
  CHECK(message.find("g2c/nn/linear.cpp") != std::string::npos);
  CHECK(message.find("module 03") != std::string::npos);
  CHECK(message.find("G2C_SOLUTIONS=03") != std::string::npos);
}

TEST_CASE("write_json_atomic_round_trips_and_leaves_no_temporary", "[core]") {
  const fs::path dir = fresh_temp_dir("json");
  const fs::path path = dir / "nested" / "result.json";
  g2c::write_json_atomic(path, {{"losses", {1.5, 0.25}}, {"name", "run"}});
  const auto loaded = nlohmann::json::parse(g2c::read_file(path));
  CHECK(loaded["losses"][1].get<double>() == 0.25);
  CHECK(loaded["name"] == "run");
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(path.parent_path())) ++entries;
  CHECK(entries == 1);
}

TEST_CASE("write_json_atomic_compact_writes_one_line", "[core]") {
  const fs::path path = fresh_temp_dir("compact") / "grid.json";
  const nlohmann::json grid = {{"grid", {{0.25, 0.5}, {0.75, 1.0}}}};
  g2c::write_json_atomic(path, grid, /*indent=*/-1);
  const std::string text = g2c::read_file(path);
  CHECK(text == "{\"grid\":[[0.25,0.5],[0.75,1.0]]}\n");
  CHECK(nlohmann::json::parse(text) == grid);
}

TEST_CASE("write_json_atomic_rejects_nan_and_keeps_the_old_file", "[core]") {
  const fs::path dir = fresh_temp_dir("nan");
  const fs::path path = dir / "result.json";
  g2c::write_json_atomic(path, {{"loss", 1.0}});
  const nlohmann::json bad = {{"loss", std::numeric_limits<double>::quiet_NaN()}};
  CHECK_THROWS_AS(g2c::write_json_atomic(path, bad), g2c::ValueError);
  CHECK(nlohmann::json::parse(g2c::read_file(path))["loss"].get<double>() == 1.0);
}

TEST_CASE("read_file_missing_path_is_a_value_error_naming_it", "[core]") {
  const fs::path path = fresh_temp_dir("missing") / "nope.txt";
  CHECK_THROWS_WITH(g2c::read_file(path), Catch::Contains("nope.txt"));
  CHECK_THROWS_AS(g2c::read_file(path), g2c::ValueError);
}

TEST_CASE("format_duration_picks_a_readable_unit", "[core]") {
  CHECK(g2c::format_duration(0.85) == "850ms");
  CHECK(g2c::format_duration(12.34) == "12.3s");
  CHECK(g2c::format_duration(65.0) == "1m05s");
}
