// The C++ half of scripts/check_pretrained_model.py: runs the course's Llama model (g2c/pretrained/
// llama.h) on token ids and reports its logits and its greedy continuation, for a comparison with
// an independent implementation reading the same GGUF file.
//
//   llama_parity FILE.gguf [--packed] < requests.jsonl > answers
// --packed keeps the weights in the file's blocks (the fast path, g2c/pretrained/packed_weight.h).
// Each request is one JSON line {"ids": [...], "new_tokens": N}. Each answer is one JSON line
// {"positions": T, "vocab": V, "greedy": [N ids], "load_seconds": s} followed by the prompt's
// logits, T·V float32 values (row-major, native byte order). The logits come from the prompt fed
// at once into an empty KV cache; the greedy ids from one cached step per token after it.
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/core/torch.h"
#include "g2c/pretrained/llama.h"

int main(int argc, char** argv) {
  const bool packed = argc == 3 && std::string(argv[2]) == "--packed";
  if (argc != 2 && !packed) {
    std::cerr << "usage: llama_parity FILE.gguf [--packed] < requests.jsonl > answers\n";
    return 2;
  }
  try {
    torch::NoGradGuard no_grad;
    g2c::pretrained::LoadReport report;
    auto model = g2c::pretrained::load_llama(std::filesystem::path(argv[1]), &report,
                                             g2c::pretrained::LoadOptions().packed(packed));
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line.empty()) continue;
      const auto request = nlohmann::json::parse(line);
      const auto ids_list = request.at("ids").get<std::vector<std::int64_t>>();
      const auto new_tokens = request.at("new_tokens").get<std::int64_t>();
      const auto ids = torch::tensor(ids_list, torch::kLong).unsqueeze(0);  // (1, T)
      auto cache = model->empty_kv_cache(static_cast<std::int64_t>(ids_list.size()) + new_tokens);
      const auto logits = model->forward(ids, cache).squeeze(0).contiguous();  // (T, V)
      std::vector<std::int64_t> greedy;
      auto next = logits[-1].argmax().item<std::int64_t>();
      for (std::int64_t step = 0; step < new_tokens; ++step) {
        greedy.push_back(next);
        if (step + 1 == new_tokens) break;
        const auto step_logits = model->forward(torch::tensor({{next}}, torch::kLong), cache);
        next = step_logits[0][-1].argmax().item<std::int64_t>();
      }
      const nlohmann::json header = {{"positions", logits.size(0)},
                                     {"vocab", logits.size(1)},
                                     {"greedy", greedy},
                                     {"load_seconds", report.seconds}};
      const auto text = header.dump() + "\n";
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fwrite(logits.data_ptr<float>(), sizeof(float), logits.numel(), stdout);
      std::fflush(stdout);
    }
  } catch (const std::exception& error) {
    std::cerr << "llama_parity: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
