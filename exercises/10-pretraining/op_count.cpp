// Exercise 10 (a measurement) — how many ATen operators one training step and one generated token
// dispatch. On a GPU every operator is at least one kernel launch, and a model this small is
// launch-bound: the count, not the arithmetic, sets the step time. The count is the same on every
// device, so it can be measured on a CPU.
//
// For ShakespeareLM-1M's shape (D 128, L 4, H 4, context 128, V 264) and the cpu preset's batch
// (16 x 128 tokens), it counts, with a RecordFunction observer on every operator the dispatcher
// runs (nested ones included, forward and backward):
//   train_step   lesson: the course's own code (10_pretrain)   fused: 10_pretrain --fused
//   per token    a full forward of the context (generate())   vs one forward_cached step
// scripts/bench_op_count.py puts these beside PyTorch eager's counts for the same model and loop.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include <ATen/record_function.h>
#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/transformer/fused.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_10_op_count {

namespace {

using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;

/// Counts the ATen operators dispatched on any thread while it is alive, by name.
class OperatorCounter {
 public:
  OperatorCounter() {
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback(
            [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
              const std::string name = fn.name();
              if (name.rfind("aten::", 0) == 0) {
                const std::lock_guard<std::mutex> lock(mutex());
                ++counts()[name];
              }
              return nullptr;
            })
            .scopes({at::RecordScope::FUNCTION})
            .needsInputs(false));
  }
  ~OperatorCounter() { at::removeCallback(handle_); }
  OperatorCounter(const OperatorCounter&) = delete;
  OperatorCounter& operator=(const OperatorCounter&) = delete;

  /// Forgets what was counted so far.
  static void reset() {
    const std::lock_guard<std::mutex> lock(mutex());
    counts().clear();
  }
  static std::map<std::string, std::int64_t> snapshot() {
    const std::lock_guard<std::mutex> lock(mutex());
    return counts();
  }
  static std::int64_t total() {
    std::int64_t sum = 0;
    for (const auto& [name, count] : snapshot()) sum += count;
    return sum;
  }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::map<std::string, std::int64_t>& counts() {
    static std::map<std::string, std::int64_t> c;
    return c;
  }
  at::CallbackHandle handle_;
};

struct Config {
  std::int64_t vocab = 264, embedding_dim = 128, num_layers = 4, num_heads = 4,
               context_length = 128, batch_size = 16, steps = 3, prompt = 64;
};

TransformerLM make_model(const Config& config, bool fused) {
  const auto options = TransformerLMOptions(config.vocab, config.embedding_dim, config.num_layers,
                                            config.num_heads, config.context_length);
  return fused ? g2c::transformer::fused_transformer_lm(options) : TransformerLM(options);
}

/// The largest `count` entries of a by-name tally, as JSON.
nlohmann::json top(const std::map<std::string, std::int64_t>& tally, double per,
                   std::size_t count) {
  std::vector<std::pair<std::string, std::int64_t>> rows(tally.begin(), tally.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < std::min(count, rows.size()); ++i) {
    out.push_back({{"op", rows[i].first}, {"per", static_cast<double>(rows[i].second) / per}});
  }
  return out;
}

/// Operators per Trainer::train_step (AdamW, clipping at 1.0, the Trainer's schedule), averaged
/// over config.steps steps after one unmeasured step.
nlohmann::json count_train_step(const Config& config, bool fused, const torch::Tensor& stream) {
  torch::manual_seed(0);
  auto model = make_model(config, fused);
  g2c::pretraining::Trainer trainer(
      model, g2c::pretraining::TrainerOptions(config.batch_size, config.context_length,
                                              config.steps + 1, 6e-4)
                 .warmup_steps(1)
                 .weight_decay(0.01)
                 .grad_clip(1.0)
                 .device("cpu")
                 .optimizer("adamw")
                 .fused_kernels(fused)
                 .generator(at::make_generator<at::CPUGeneratorImpl>(0)));
  trainer.train_step(stream);  // the first step allocates; it is not typical
  OperatorCounter counter;
  OperatorCounter::reset();
  for (std::int64_t i = 0; i < config.steps; ++i) trainer.train_step(stream);
  const auto tally = OperatorCounter::snapshot();
  const double per_step =
      static_cast<double>(OperatorCounter::total()) / static_cast<double>(config.steps);
  return {{"ops_per_step", per_step}, {"top", top(tally, static_cast<double>(config.steps), 12)}};
}

/// Operators per generated token with a prompt of config.prompt tokens: the full forward of the
/// context (what generate() runs each step) against one forward_cached step.
nlohmann::json count_generation(const Config& config, bool fused) {
  torch::manual_seed(0);
  auto model = make_model(config, fused);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto context = torch::randint(0, config.vocab, {1, config.prompt}, torch::kLong);
  auto cache = model->empty_kv_cache();
  for (std::int64_t t = 0; t + 1 < config.prompt; ++t) {
    model->forward_cached(context.narrow(1, t, 1), cache);
  }
  OperatorCounter counter;
  OperatorCounter::reset();
  model->forward(context);
  const auto uncached = OperatorCounter::total();
  const auto uncached_tally = OperatorCounter::snapshot();
  OperatorCounter::reset();
  model->forward_cached(context.narrow(1, config.prompt - 1, 1), cache);
  const auto cached = OperatorCounter::total();
  return {{"uncached_ops_per_token", uncached},
          {"cached_ops_per_token", cached},
          {"uncached_top", top(uncached_tally, 1.0, 12)},
          {"cached_top", top(OperatorCounter::snapshot(), 1.0, 12)}};
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 10: ATen operators dispatched per training step and per generated token, for the\n"
      "lesson's code and the --fused fast path (ShakespeareLM-1M's shape). Writes op_count.json."};
  g2c::exercises::CommonOptions options;
  options.out = "results/10-pretraining";
  options.steps = 3;
  options.threads = 1;  // the count does not depend on it; one thread keeps the run quiet
  Config config;
  g2c::exercises::add_common_options(app, options);
  return g2c::run_cli(app, argc, argv, [&] {
    config.steps = options.steps;
    const auto device = g2c::exercises::prepare(options);
    if (!device.is_cpu()) {
      fmt::print("operators are counted on the CPU (the count does not depend on the device)\n");
    }
    const auto stream = torch::randint(0, config.vocab, {20'000}, torch::kLong);
    nlohmann::json result = g2c::exercises::run_metadata("10_op_count", options, torch::kCPU);
    result["config"] = {{"vocab_size", config.vocab},
                        {"embedding_dim", config.embedding_dim},
                        {"num_layers", config.num_layers},
                        {"num_heads", config.num_heads},
                        {"context_length", config.context_length},
                        {"batch_size", config.batch_size},
                        {"measured_steps", config.steps},
                        {"prompt_tokens", config.prompt}};
    fmt::print("{:<8} {:>16} {:>22} {:>20}\n", "path", "ops / train step", "ops / token, no cache",
               "ops / token, cached");
    for (const bool fused : {false, true}) {
      const std::string path = fused ? "fused" : "lesson";
      auto train = count_train_step(config, fused, stream);
      const auto generation = count_generation(config, fused);
      fmt::print("{:<8} {:>16.0f} {:>22} {:>20}\n", path, train["ops_per_step"].get<double>(),
                 generation["uncached_ops_per_token"].get<std::int64_t>(),
                 generation["cached_ops_per_token"].get<std::int64_t>());
      result[path] = {{"train_step", train}, {"generation", generation}};
    }
    g2c::exercises::save_result(options, "op_count.json", result);
  });
}

}  // namespace exercise_10_op_count
