// The C++ half of scripts/check_gguf.py: reads a GGUF file with g2c/pretrained/gguf.h, prints what
// it read of the metadata as one JSON line on stderr, and writes every tensor dequantized to
// float32 to stdout, in file order.
//   gguf_dump FILE > values.f32
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/pretrained/gguf.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gguf_dump FILE.gguf > values.f32\n";
    return 2;
  }
  try {
    const auto file = g2c::pretrained::GGUFFile::open(argv[1]);
    const auto tokens = file.strings("tokenizer.ggml.tokens");
    const auto merges = file.strings("tokenizer.ggml.merges");
    const nlohmann::json summary = {
        {"architecture", file.string("general.architecture")},
        {"block_count", file.integer("llama.block_count")},
        {"embedding_length", file.integer("llama.embedding_length")},
        {"head_count", file.integer("llama.attention.head_count")},
        {"head_count_kv", file.integer("llama.attention.head_count_kv")},
        {"feed_forward_length", file.integer("llama.feed_forward_length")},
        {"context_length", file.integer("llama.context_length")},
        {"tokens", tokens.size()},
        {"merges", merges.size()},
        {"token_1000", tokens.at(1000)},
        {"last_merge", merges.back()}};
    for (const auto& tensor : file.tensors()) {
      const auto values = g2c::pretrained::dequantize(file, tensor);
      std::fwrite(values.data(), sizeof(float), values.size(), stdout);
    }
    std::fflush(stdout);
    std::cerr << summary.dump() << "\n";
  } catch (const g2c::ValueError& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 2;
  }
  return 0;
}
