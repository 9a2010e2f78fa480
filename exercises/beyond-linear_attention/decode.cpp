// Beyond linear_attention, exercise 1 — what decoding one token costs as the history grows. A
// full-attention layer (module 08's, with its KV cache) against a linear-attention layer (your
// LinearAttention::step, with its state (S, z)), D 256, H 4, one sequence: the time of one decode
// step and the memory the layer keeps for the past, by the formula (2·T·D numbers for the cache,
// H·d² + H·d for the state) and as the process's resident memory grows, for histories T from 128
// to 16,384. Then the honesty line: the two *parallel* forms (all T positions at once, as in
// training) are both quadratic in T — softmax attention's T × T weights and the linear reference's
// T × T decay mask — time and peak memory side by side. The same decode step for whole 4-layer
// models — all full, all linear, and the hybrid [L, L, L, F] — with what each keeps for the past.
// Last, the bill of a 1M-token context by the formulas at a large model's size.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "g2c/attention/layer_kv_cache.h"
#include "g2c/attention/multi_head.h"
#include "g2c/core/errors.h"
#include "g2c/core/memory.h"
#include "g2c/linear_attention/attention.h"
#include "g2c/linear_attention/hybrid.h"

namespace exercise_beyond_la_decode {

namespace {

using g2c::exercises::Figure;
using g2c::exercises::median_ms;
using g2c::exercises::Series;
using g2c::linear_attention::LinearAttention;
using g2c::linear_attention::LinearAttentionState;

double bytes_of(const torch::Tensor& tensor) {
  return static_cast<double>(tensor.numel()) * static_cast<double>(tensor.element_size());
}

constexpr double kMiB = 1024.0 * 1024.0;

/// The largest difference between the parallel form and the recurrent form run token by token.
double equivalence_error(LinearAttention& la, const torch::Tensor& x) {
  const auto parallel = la(x);
  std::optional<LinearAttentionState> state;
  double worst = 0.0;
  for (std::int64_t t = 0; t < x.size(1); ++t) {
    auto [out, next] = la->step(x.select(1, t), state);
    state = next;
    worst = std::max(worst, (out - parallel.select(1, t)).abs().max().item<double>());
  }
  return worst;
}

/// The 1M-token bill (exercise 5): bytes each layer keeps for a context of `context` tokens at
/// width `dim` with `heads` heads, in `bytes_per_number`-byte numbers.
nlohmann::json million_token_bill(std::int64_t context, std::int64_t dim, std::int64_t heads,
                                  std::int64_t kv_heads, std::int64_t window,
                                  std::int64_t bytes_per_number) {
  const std::int64_t head_dim = dim / heads;
  const double mha = 2.0 * context * dim * bytes_per_number;
  const double gqa = 2.0 * context * kv_heads * head_dim * bytes_per_number;
  const double sliding = 2.0 * std::min(context, window) * dim * bytes_per_number;
  const double linear = static_cast<double>(heads * head_dim * head_dim + heads * head_dim) *
                        static_cast<double>(bytes_per_number);
  return {{"context", context},
          {"embedding_dim", dim},
          {"heads", heads},
          {"kv_heads", kv_heads},
          {"window", window},
          {"bytes_per_number", bytes_per_number},
          {"layer_bytes",
           {{"MHA", mha}, {"GQA", gqa}, {"sliding window", sliding}, {"linear", linear}}},
          {"four_layer_bytes",
           {{"all full (MHA)", 4 * mha},
            {"[L, L, L, F]", 3 * linear + mha},
            {"all linear", 4 * linear}}}};
}

std::string human_bytes(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.1f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.1f} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.1f} kB", bytes / 1e3);
  return fmt::format("{:.0f} B", bytes);
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond linear_attention, exercise 1: one decode step of a full-attention layer with its KV\n"
      "cache against a linear-attention layer with its state, as the history T grows; the two\n"
      "parallel forms' time and peak memory; the 1M-token bill. Writes decode.json and\n"
      "decode_*.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-linear_attention";
  g2c::exercises::add_common_options(app, options);
  std::int64_t dim = 256, heads = 4;
  std::vector<std::int64_t> lengths{128, 256, 512, 1024, 2048, 4096, 8192, 16384};
  std::vector<std::int64_t> parallel_lengths{128, 256, 512, 1024, 2048, 4096};
  std::vector<std::int64_t> model_lengths{128, 512, 2048, 8192};
  std::int64_t model_layers = 4;
  int repeats = 20, parallel_repeats = 3;
  app.add_option("--embedding-dim", dim, "D of both layers").range(4, 8192);
  app.add_option("--heads", heads, "H of both layers (must divide D)").range(1, 256);
  app.add_option("--lengths", lengths, "Histories T of the decode step, increasing");
  app.add_option("--parallel-lengths", parallel_lengths,
                 "Sequence lengths of the parallel forms, increasing");
  app.add_option("--repeats", repeats, "Timed decode steps per T (the median is kept)")
      .range(1, 10000);
  app.add_option("--model-lengths", model_lengths,
                 "Histories T of the whole models' decode step (full, linear, hybrid), increasing");
  app.add_option("--model-layers", model_layers, "Layers of the three models").range(1, 64);
  app.add_option("--parallel-repeats", parallel_repeats, "Timed parallel forwards per T")
      .range(1, 1000);
  return g2c::run_cli(app, argc, argv, [&] {
    for (const auto* list : {&lengths, &parallel_lengths, &model_lengths}) {
      if (list->empty() || !std::is_sorted(list->begin(), list->end()) || list->front() < 1) {
        throw g2c::ValueError(
            "--lengths, --parallel-lengths and --model-lengths must be positive and increasing");
      }
    }
    const auto device = g2c::exercises::prepare(options);
    const auto on_device = torch::TensorOptions().device(device);
    torch::manual_seed(options.seed);
    g2c::attention::MultiHeadAttention full(dim, heads, /*causal=*/true);
    LinearAttention linear(dim, heads);
    full->to(device);
    linear->to(device);
    full->eval();
    linear->eval();
    const std::int64_t head_dim = dim / heads;

    // The two forms of your layer agree (float32 here, and float64 on a copy).
    torch::NoGradGuard no_grad;
    const auto probe = torch::randn({1, 256, dim}, on_device);
    const double error32 = equivalence_error(linear, probe);
    LinearAttention linear64(dim, heads);
    linear64->to(device, torch::kDouble);
    const double error64 = equivalence_error(linear64, probe.to(torch::kDouble));
    fmt::print(
        "parallel form against step, 256 positions: largest difference {:.1e} (float32), "
        "{:.1e} (float64)\n",
        error32, error64);

    // One decode step against the history's length.
    std::vector<double> full_ms, linear_ms, full_bytes, linear_bytes, full_rss, linear_rss;
    const double state_formula =
        static_cast<double>(heads * head_dim * head_dim + heads * head_dim) * 4.0;
    fmt::print("{:>6} {:>14} {:>14} {:>16} {:>16} {:>12} {:>12}\n", "T", "full step (ms)",
               "linear (ms)", "KV cache", "linear state", "cache RSS", "state RSS");
    for (const auto length : lengths) {
      const auto token = torch::randn({1, 1, dim}, on_device);
      g2c::release_freed_memory();
      double before = g2c::resident_mib();
      g2c::attention::LayerKVCache cache;
      cache.capacity = length + repeats + 2;  // room for every timed step: no regrowth
      cache.append(torch::randn({1, heads, length, head_dim}, on_device),
                   torch::randn({1, heads, length, head_dim}, on_device));
      g2c::release_freed_memory();  // the random K and V were copied in and freed
      full_rss.push_back(g2c::resident_mib() - before);
      full_bytes.push_back(bytes_of(cache.k) + bytes_of(cache.v));
      full_ms.push_back(median_ms([&] { full->forward_cached(token, cache); }, repeats, device));
      cache.clear();

      // The state after `length` real steps (the same size after any number of them).
      g2c::release_freed_memory();
      before = g2c::resident_mib();
      std::optional<LinearAttentionState> state;
      for (std::int64_t t = 0; t < length; ++t) {
        state = linear->step(torch::randn({1, dim}, on_device), state).state;
      }
      g2c::release_freed_memory();
      linear_rss.push_back(g2c::resident_mib() - before);
      linear_bytes.push_back(bytes_of(state->S) + bytes_of(state->z));
      const auto x_t = token.squeeze(1);
      linear_ms.push_back(median_ms([&] { linear->step(x_t, state); }, repeats, device));
      fmt::print("{:>6} {:>14.3f} {:>14.3f} {:>16} {:>16} {:>9.1f} MiB {:>8.1f} MiB\n", length,
                 full_ms.back(), linear_ms.back(), human_bytes(full_bytes.back()),
                 human_bytes(linear_bytes.back()), full_rss.back(), linear_rss.back());
    }
    // The time crossover: the smallest T from which on every full step costs more than the
    // linear one (a single noisy point below it does not count).
    std::optional<std::int64_t> time_crossover;
    for (std::size_t i = lengths.size(); i-- > 0 && full_ms[i] > linear_ms[i];) {
      time_crossover = lengths[i];
    }
    // By the formulas, the cache outgrows the state at 2·T·D > H·d² + H·d.
    const double memory_crossover =
        static_cast<double>(heads * head_dim * head_dim + heads * head_dim) / (2.0 * dim);
    fmt::print(
        "the KV cache outgrows the linear state beyond T = {:.1f} (formula); a full step costs "
        "more than a linear one at every T from {} on\n",
        memory_crossover,
        time_crossover ? fmt::format("{}", *time_crossover) : std::string("(none in this range)"));

    // Whole models decoding: all full, all linear and the hybrid ([L, …, L, F]), one token after a
    // history of T. The history is written straight into the state (random keys and values in the
    // full layers' caches, a random state in the linear layers'): a step's cost and the state's
    // bytes depend on the sizes, not on the values, and 8,192 real steps per T would cost minutes.
    std::vector<std::string> hybrid_pattern(model_layers, "linear");
    hybrid_pattern.back() = "full";
    const std::vector<std::pair<std::string, std::vector<std::string>>> patterns = {
        {"full", std::vector<std::string>(model_layers, "full")},
        {"linear", std::vector<std::string>(model_layers, "linear")},
        {"hybrid", hybrid_pattern}};
    nlohmann::json model_rows = nlohmann::json::array();
    for (const auto& [name, pattern] : patterns) {
      torch::manual_seed(options.seed);
      g2c::linear_attention::HybridTransformerLM model(264, dim, pattern, heads,
                                                       model_lengths.back() + repeats + 2);
      model->to(device);
      model->eval();
      std::vector<double> step_ms, state_bytes;
      for (const auto length : model_lengths) {
        auto state = model->empty_state();
        for (std::size_t l = 0; l < pattern.size(); ++l) {
          if (pattern[l] == "full") {
            state.caches[l].capacity = length + repeats + 2;
            state.caches[l].append(torch::randn({1, heads, length, head_dim}, on_device),
                                   torch::randn({1, heads, length, head_dim}, on_device));
          } else {
            state.states[l] =
                LinearAttentionState{torch::randn({1, heads, head_dim, head_dim}, on_device),
                                     torch::rand({1, heads, head_dim}, on_device) *
                                         100.0};  // z: positive, as φ makes it
          }
        }
        state.position = length;
        state_bytes.push_back(static_cast<double>(state.bytes()));
        const auto token = torch::randint(0, 264, {1, 1}, on_device.dtype(torch::kLong));
        step_ms.push_back(median_ms([&] { model->forward_step(token, state); }, repeats, device));
      }
      std::string line = fmt::format("{:<7} ({} layers):", name, pattern.size());
      for (std::size_t i = 0; i < model_lengths.size(); ++i) {
        line += fmt::format("  T {} {:.2f} ms, {}", model_lengths[i], step_ms[i],
                            human_bytes(state_bytes[i]));
      }
      fmt::print("{}\n", line);
      model_rows.push_back({{"name", name},
                            {"pattern", pattern},
                            {"step_ms", step_ms},
                            {"state_bytes", state_bytes}});
    }

    // The parallel forms: both quadratic in T.
    std::vector<double> softmax_ms, parallel_linear_ms, softmax_peak, linear_peak;
    const bool can_reset_peak = g2c::reset_peak_resident();
    for (const auto length : parallel_lengths) {
      const auto x = torch::randn({1, length, dim}, on_device);
      const auto measure = [&](auto&& forward, std::vector<double>& times,
                               std::vector<double>& peaks) {
        g2c::release_freed_memory();
        g2c::reset_peak_resident();
        const double before = g2c::resident_mib();
        forward();
        peaks.push_back(g2c::peak_resident_mib() - before);
        times.push_back(median_ms(forward, parallel_repeats, device));
      };
      measure([&] { full(x); }, softmax_ms, softmax_peak);
      measure([&] { linear(x); }, parallel_linear_ms, linear_peak);
      fmt::print(
          "parallel, T {:>5}: softmax attention {:8.2f} ms (peak +{:6.1f} MiB), linear "
          "reference {:8.2f} ms (peak +{:6.1f} MiB)\n",
          length, softmax_ms.back(), softmax_peak.back(), parallel_linear_ms.back(),
          linear_peak.back());
    }
    if (!can_reset_peak) {
      fmt::print("(this system cannot restart the peak count: the peaks are the program's)\n");
    }

    const auto bill = million_token_bill(1'000'000, 4096, 32, 8, 4096, 2);
    fmt::print("A 1M-token context at D 4096, H 32, fp16, per layer:");
    for (const auto* name : {"MHA", "GQA", "sliding window", "linear"}) {
      fmt::print(" {} {};", name, human_bytes(bill["layer_bytes"][name].get<double>()));
    }
    fmt::print("\nfour layers:");
    for (const auto* name : {"all full (MHA)", "[L, L, L, F]", "all linear"}) {
      fmt::print(" {} {};", name, human_bytes(bill["four_layer_bytes"][name].get<double>()));
    }
    fmt::print("\n");

    auto result = g2c::exercises::run_metadata("beyond_la_decode", options, device);
    result["config"] = {{"embedding_dim", dim}, {"num_heads", heads},
                        {"lengths", lengths},   {"parallel_lengths", parallel_lengths},
                        {"repeats", repeats},   {"parallel_repeats", parallel_repeats}};
    result["equivalence"] = {{"positions", 256}, {"float32", error32}, {"float64", error64}};
    std::vector<double> state_formula_bytes(lengths.size(), state_formula), cache_formula;
    for (const auto length : lengths) cache_formula.push_back(2.0 * length * dim * 4.0);
    std::vector<double> full_rss_bytes, linear_rss_bytes;
    for (const double mib : full_rss) full_rss_bytes.push_back(mib * kMiB);
    for (const double mib : linear_rss) linear_rss_bytes.push_back(mib * kMiB);
    result["decode"] = {{"length", lengths},
                        {"full_ms", full_ms},
                        {"linear_ms", linear_ms},
                        {"full_bytes", full_bytes},
                        {"linear_bytes", linear_bytes},
                        {"full_formula_bytes", cache_formula},
                        {"linear_formula_bytes", state_formula_bytes},
                        {"full_resident_bytes", full_rss_bytes},
                        {"linear_resident_bytes", linear_rss_bytes},
                        {"time_crossover", time_crossover ? nlohmann::json(*time_crossover)
                                                          : nlohmann::json(nullptr)},
                        {"memory_crossover", memory_crossover}};
    result["parallel"] = {{"length", parallel_lengths},      {"softmax_ms", softmax_ms},
                          {"linear_ms", parallel_linear_ms}, {"softmax_peak_mib", softmax_peak},
                          {"linear_peak_mib", linear_peak},  {"peak_resets", can_reset_peak}};
    result["models"] = {{"length", model_lengths}, {"layers", model_layers}, {"runs", model_rows}};
    result["million_token_bill"] = bill;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("decode_time.png",
                      fmt::format("One decode step against the history (D {}, H {})", dim, heads),
                      "tokens in the history T", "ms (median)")
             .logx()
             .add(Series("full attention + KV cache", "/decode/length", "/decode/full_ms")
                      .marker("o"))
             .add(Series("linear attention + (S, z)", "/decode/length", "/decode/linear_ms")
                      .marker("s")),
         Figure::line("decode_memory.png", "What the layer keeps for the past", "T", "bytes")
             .logx()
             .logy()
             .add(Series("KV cache, 2·T·D floats", "/decode/length", "/decode/full_formula_bytes")
                      .marker("o"))
             .add(Series("KV cache, resident memory grown", "/decode/length",
                         "/decode/full_resident_bytes")
                      .style("--")
                      .marker("x"))
             .add(Series("state, H·d² + H·d floats", "/decode/length",
                         "/decode/linear_formula_bytes")
                      .marker("s")),
         [&] {
           auto figure =
               Figure::line("decode_models.png",
                            fmt::format("One decode step of a {}-layer model (D {}, H {})",
                                        model_layers, dim, heads),
                            "tokens in the history T", "ms (median)")
                   .logx();
           for (std::size_t r = 0; r < model_rows.size(); ++r) {
             figure.add(Series(model_rows[r]["name"].get<std::string>(), "/models/length",
                               fmt::format("/models/runs/{}/step_ms", r))
                            .marker("o"));
           }
           return figure;
         }(),
         Figure::line("decode_parallel.png",
                      "The parallel forms: all T positions at once (both build T × T)", "T",
                      "ms (median)")
             .logx()
             .logy()
             .add(Series("softmax attention", "/parallel/length", "/parallel/softmax_ms")
                      .marker("o"))
             .add(Series("linear reference", "/parallel/length", "/parallel/linear_ms")
                      .marker("s"))});
    const auto path = g2c::exercises::save_result(options, "decode.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_la_decode
