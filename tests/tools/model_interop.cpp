// The C++ half of scripts/check_model_interop.py, which runs it with the project's Python and
// compares what it writes with plain PyTorch:
//   model_interop save <dir> <logits.pt>
//       a TransformerLM (V 37, D 24, L 2, 3 heads, context 16, feed-forward width 40) with every
//       parameter drawn at random (LayerNorm scales and biases too, so that a parameter in the
//       wrong place shows), saved with save_model_artifact into <dir>; its logits for fixed ids
//       (B 2, T 11) go to <logits.pt> as {"ids": (B, T) int64, "logits": (B, T, V) float32}
//   model_interop logits <dir> <ids.pt> <logits.pt>
//       loads the artifact at <dir> (written by Python), reads {"ids"} from <ids.pt> and writes
//       {"ids", "logits"} for them
// Exit status 2 with the error on stderr when something is refused.
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/archive.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/transformer/transformer_lm.h"

namespace {

namespace fs = std::filesystem;
using g2c::archive_dict;
using g2c::transformer::TransformerLM;

void write_logits(const fs::path& path, TransformerLM& model, const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  model->eval();
  auto out = archive_dict();
  out.insert("ids", ids);
  out.insert("logits", model->forward(ids));  // (B, T, V)
  g2c::write_archive(path, out);
}

int save(const fs::path& dir, const fs::path& logits) {
  torch::manual_seed(0);
  TransformerLM model(g2c::transformer::TransformerLMOptions(
                          /*vocab_size=*/37, /*embedding_dim=*/24, /*num_layers=*/2,
                          /*num_heads=*/3, /*max_seq_len=*/16)
                          .hidden_dim(40));
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.normal_(/*mean=*/0.0, /*std=*/0.3);
  }
  g2c::pretraining::ModelArtifactInfo info;
  info.name = "InteropLM";
  info.source = "random weights";
  info.notes = "written by tests/tools/model_interop.cpp for scripts/check_model_interop.py";
  g2c::pretraining::save_model_artifact(info, model, dir);
  write_logits(logits, model, torch::randint(0, 37, {2, 11}, torch::kLong));
  return 0;
}

int logits(const fs::path& dir, const fs::path& ids_file, const fs::path& logits_file) {
  auto artifact = g2c::pretraining::load_model_artifact(dir.string());
  const auto ids = g2c::read_archive(ids_file, g2c::ArchiveKind::plain("ids file")).tensor("ids");
  write_logits(logits_file, artifact.model, ids);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 3 && args[0] == "save") return save(args[1], args[2]);
    if (args.size() == 4 && args[0] == "logits") return logits(args[1], args[2], args[3]);
  } catch (const std::exception& error) {
    std::cerr << "model_interop: " << error.what() << "\n";
    return 2;
  }
  std::cerr << "usage: model_interop save <dir> <logits.pt>\n"
               "       model_interop logits <dir> <ids.pt> <logits.pt>\n";
  return 2;
}
