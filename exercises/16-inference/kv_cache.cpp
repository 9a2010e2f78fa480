// Exercise 16 — the KV cache of a real model: its size by the formula, and what it costs a step.
// Every block keeps, for every position so far, one key and one value vector per key/value head:
//   bytes = 2 (K and V) · L blocks · G heads · d dims · S positions · 4 bytes (float32)
// SmolLM2-135M-Instruct: 2 · 30 · 3 · 64 · 4 = 46,080 bytes, 45 KiB a position; its whole
// 8192-token context 360 MiB, two-thirds of its float32 weights. With multi-head attention (G = H =
// 9) it would be three times that: grouped-query attention exists for this memory. The model reads
// TinyShakespeare into one cache, 256 positions a round; after each round the bytes the cache's
// tensors hold are set against the formula, and a decoding step is timed: attention reads the
// whole cache at every step, so a step gets slower as the context grows. (The process's resident
// memory cannot isolate the cache: its buffers are taken, mid-forward, from memory the forward's
// own temporaries have just freed.) Writes kv_cache.json and two figures.
#include <chrono>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "g2c/core/errors.h"
#include "g2c/pretrained/generation.h"

namespace exercise_16_kv_cache {

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 16: SmolLM2-135M-Instruct's KV cache, by the formula 2·L·G·d·S·4 bytes and as its\n"
      "tensors hold it, and the time of a decoding step as the context fills.\n"
      "Writes kv_cache.json and figures."};
  g2c::exercises::CommonOptions options;
  options.out = "results/16-inference";
  std::string model_name = "SmolLM2-135M-Instruct";
  std::string weights = "packed";
  std::int64_t positions = 2048, round = 256, timed_steps = 4;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", model_name, "Pretrained model (SmolLM2-135M-Instruct)");
  app.add_option("--weights", weights, "packed or float32").one_of({"packed", "float32"});
  app.add_option("--positions", positions, "Positions to fill (at most the model's context)")
      .positive();
  app.add_option("--round", round, "Positions added per round").range(16, 4096);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (!device.is_cpu()) throw g2c::ValueError("16_kv_cache measures the CPU; use --device cpu");
    torch::NoGradGuard no_grad;
    auto smol = g2c::pretrained::load_pretrained_model(
        model_name, g2c::pretrained::LoadOptions().packed(weights == "packed"));
    auto& model = *smol.model;
    const auto& o = model.options;
    if (positions > o.max_seq_len()) {
      throw g2c::ValueError(fmt::format("--positions {}: {}'s context holds {}", positions,
                                        smol.name, o.max_seq_len()));
    }
    const auto text =
        smol.tokenizer.encode(g2c::exercises::load_tinyshakespeare().substr(0, 8 * positions));
    if (static_cast<std::int64_t>(text.size()) < positions) {
      throw g2c::ValueError(fmt::format("the text holds only {} tokens", text.size()));
    }
    const auto ids = torch::tensor(text, torch::kLong).narrow(0, 0, positions).unsqueeze(0);
    const double per_position = 2.0 * o.num_layers() * o.num_kv_heads() * o.head_dim() * 4;
    const double per_position_mha = 2.0 * o.num_layers() * o.num_heads() * o.head_dim() * 4;
    fmt::print(
        "{} ({} weights): 2 · {} blocks · {} key/value heads · {} dims · 4 bytes = {:.0f} "
        "bytes a position ({:.0f} with {} heads, multi-head)\n",
        smol.name, weights, o.num_layers(), o.num_kv_heads(), o.head_dim(), per_position,
        per_position_mha, o.num_heads());

    auto cache = model.empty_kv_cache(positions);
    std::vector<double> filled, formula_mib, formula_mha_mib, tensor_mib, step_ms;
    for (std::int64_t start = 0; start < positions; start += round) {
      const auto count = std::min(round, positions - start);
      const auto bulk = std::max<std::int64_t>(count - timed_steps, 1);
      model.forward(ids.narrow(1, start, bulk), cache);
      std::vector<double> steps;
      for (std::int64_t i = bulk; i < count; ++i) {  // one position at a time: decoding
        const auto began = std::chrono::steady_clock::now();
        model.forward(ids.narrow(1, start + i, 1), cache);
        steps.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began)
                .count());
      }
      const auto s = cache.length();
      double bytes = 0;
      for (const auto& layer : cache.layers)
        bytes += static_cast<double>(layer.k.nbytes() + layer.v.nbytes());
      filled.push_back(static_cast<double>(s));
      formula_mib.push_back(per_position * static_cast<double>(s) / (1 << 20));
      formula_mha_mib.push_back(per_position_mha * static_cast<double>(s) / (1 << 20));
      tensor_mib.push_back(bytes / (1 << 20));
      step_ms.push_back(steps.empty() ? 0.0 : g2c::exercises::median(steps));
      fmt::print(
          "{:>5} positions: formula {:6.1f} MiB, cache tensors {:6.1f} MiB (multi-head: {:6.1f}); "
          "a decoding step {:5.1f} ms\n",
          s, formula_mib.back(), tensor_mib.back(), formula_mha_mib.back(), step_ms.back());
    }

    auto result = g2c::exercises::run_metadata("16_kv_cache", options, device);
    result["config"] = {{"model", smol.name},
                        {"weights", weights},
                        {"positions", positions},
                        {"round", round},
                        {"threads", torch::get_num_threads()}};
    result["bytes_per_position"] = per_position;
    result["bytes_per_position_multi_head"] = per_position_mha;
    result["full_context_mib"] = per_position * static_cast<double>(o.max_seq_len()) / (1 << 20);
    result["weights_mib"] = static_cast<double>(smol.report.weight_bytes) / (1 << 20);
    result["positions_filled"] = filled;
    result["formula_mib"] = formula_mib;
    result["formula_multi_head_mib"] = formula_mha_mib;
    result["cache_tensor_mib"] = tensor_mib;
    result["decode_step_ms"] = step_ms;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("kv_cache_memory.png",
                      fmt::format("{}'s KV cache: the formula and the cache's tensors", smol.name),
                      "positions", "MiB")
             .add(Series("2·L·G·d·S·4 (grouped-query, G = 3)", "/positions_filled", "/formula_mib"))
             .add(Series("cache tensors", "/positions_filled", "/cache_tensor_mib").marker("o"))
             .add(Series("multi-head (G = H = 9), formula", "/positions_filled",
                         "/formula_multi_head_mib")
                      .style("--")),
         Figure::line("kv_cache_step_time.png",
                      fmt::format("A decoding step as the context fills ({} weights, {} thread(s))",
                                  weights, torch::get_num_threads()),
                      "positions in the cache", "ms per token")
             .add(Series("median of a round's steps", "/positions_filled", "/decode_step_ms")
                      .marker("o"))});
    const auto path = g2c::exercises::save_result(options, "kv_cache.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_16_kv_cache
