// Finding the course's data files from any working directory.
#pragma once

#include <filesystem>
#include <string>

namespace g2c::exercises {

/// The project's source folder (compiled in), where data/, scripts/ and artifacts/ live.
std::filesystem::path project_dir();

/// The interpreter of the project's Python environment, <project>/.venv/bin/python, made by
/// scripts/setup.sh; it draws the figures. The path is returned whether or not it exists.
std::filesystem::path project_python();

/// Path of data/<name>: $G2C_DATA_DIR/<name> if that variable is set, else <project>/data/<name>.
/// ValueError with the setup hint when the file is missing.
std::filesystem::path data_file(const std::string& name);

/// The whole TinyShakespeare text (1,115,394 bytes); ValueError with the fix when it is missing.
std::string load_tinyshakespeare();

}  // namespace g2c::exercises
