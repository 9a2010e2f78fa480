// Beyond rl — GRPO with verifiable rewards, on two policies. The student's group_advantages,
// completion_log_prob, grpo_loss and train_step train:
//   --policy course   ArithLM-0.3M, a character-level model of module 12's 0.3M rung's shape,
//                     first taught by imitation (a minute or two of next-token training) on
//                     generated task lines whose stated answer is right only 60 % of the time —
//                     an imperfect imitator whose samples make mixed groups, so GRPO has to beat
//                     the data it imitated
//   --policy smollm2  SmolLM2-135M-Instruct (float32) with rank-8 LoRA on Wq and Wv, prompts in
//                     its chat template, rollouts through the KV cache; the reference is the same
//                     model with the adapters off
// Runs, each from the same starting point (the imitator's weights; fresh adapters from one seed):
//   format   the JSON completion task under verify_format (the smoke run)
//   choice   addition as a two-option choice under verify_arithmetic (the main run; one-digit
//            addends by default, --digits 2 for the spec's two-digit sums, which neither policy
//            learns to pick better than a coin at this budget)
//   sloppy   the choice task trained under verify_arithmetic_sloppy (any integer counts): naming
//            both options is a ready exploit — is it found?
//   kl0      the choice run without the leash (kl_coef 0)
//   k2 k8 k16  the choice run with K completions a group at one rollout budget (steps × K fixed)
// Measured: held-out greedy pass rate before and after under the intended verifier (Wilson 95 %
// intervals; held-out prompts appear neither in the imitation data nor in the RL pool), reward,
// KL, sampled entropy and skips per step, seconds per step, trainable parameters, peak memory,
// samples. Writes rl_<policy>.json and rl_<policy>_*.png.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/proportion.h"
#include "g2c/core/errors.h"
#include "g2c/core/memory.h"
#include "g2c/core/progress.h"
#include "g2c/inference/local.h"
#include "g2c/pretrained/generation.h"
#include "g2c/pretrained/lora.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/rl/policy.h"
#include "g2c/rl/trainer.h"
#include "g2c/rl/verifiers.h"
#include "g2c/sft/data.h"
#include "g2c/sft/trainer.h"
#include "g2c/tokenizer/text_tokenizer.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_beyond_rl {

namespace {

using Clock = std::chrono::steady_clock;
using g2c::exercises::Figure;
using g2c::exercises::Proportion;
using g2c::exercises::Series;
using g2c::rl::Task;

/// One RL run: which task, which verifier trains, and the trainer's settings.
struct RunSpec {
  std::string name;
  std::string task;      // "choice" or "format"
  std::string verifier;  // the training reward: "exact", "sloppy" or "format"
  std::int64_t steps = 0;
  std::int64_t group_size = 8;
  double kl_coef = 0.1;
};

/// The settings a policy brings: its trainer's defaults and how big its pools are.
struct PolicySettings {
  std::int64_t steps, group_size, max_new_tokens, eval_tasks, train_tasks;
  double lr, kl_coef;
  int digits;  // of each addend of the choice task
};

const std::map<std::string, PolicySettings> kPolicies = {
    // Both on one-digit sums (1,296 distinct prompts): on two-digit sums neither policy picks the
    // right option better than a coin, before or after GRPO (the README has the runs).
    // course: about 0.06 s a step on 2 cores; smollm2: about 7.4 s (rollouts dominate).
    {"course", {1500, 8, 6, 300, 600, 1e-4, 0.05, 1}},
    {"smollm2", {130, 8, 12, 400, 600, 4e-4, 0.05, 1}},
};

g2c::rl::Verifier verifier_named(const std::string& name) {
  if (name == "exact") return g2c::rl::verify_arithmetic;
  if (name == "sloppy") return g2c::rl::verify_arithmetic_sloppy;
  return g2c::rl::verify_format;
}

/// The verifier that says whether a completion is what the task wanted.
std::string intended_verifier(const std::string& task) {
  return task == "format" ? "format" : "exact";
}

Task draw_task(const std::string& kind, std::mt19937_64& rng, int digits) {
  return kind == "format" ? g2c::rl::format_task(rng)
                          : g2c::rl::arithmetic_choice_task(rng, digits);
}

/// `count` tasks of `kind` with distinct prompts, none of them in `exclude` (which then holds
/// them too): held-out prompts stay out of every other pool.
std::vector<Task> draw_pool(const std::string& kind, std::int64_t count, std::uint64_t seed,
                            int digits, std::set<std::string>& exclude) {
  std::mt19937_64 rng(seed);
  std::vector<Task> pool;
  for (std::int64_t attempts = 0; static_cast<std::int64_t>(pool.size()) < count; ++attempts) {
    if (attempts > 100 * count) {
      throw g2c::ValueError(
          fmt::format("could not draw {} distinct {} tasks outside the held-out set; ask for fewer",
                      count, kind));
    }
    auto task = draw_task(kind, rng, digits);
    if (exclude.insert(task.prompt).second) pool.push_back(std::move(task));
  }
  return pool;
}

/// The share of completions that name both options of their choice task: the sloppy verifier's
/// exploit (any integer may be the answer, so list them all).
Proportion names_both_options(const std::vector<Task>& pool,
                              const std::vector<std::string>& texts) {
  Proportion share;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    if (pool[i].choices.size() != 2) continue;
    const auto numbers = g2c::rl::integers_in(texts[i]);
    auto named = [&](std::int64_t option) {
      return std::find(numbers.begin(), numbers.end(), std::optional(option)) != numbers.end();
    };
    share.total += 1;
    share.hits += named(pool[i].choices[0]) && named(pool[i].choices[1]) ? 1 : 0;
  }
  return share;
}

/// The share of completions whose answer (the last integer, as verify_arithmetic reads it) is one
/// of their choice task's options, right or wrong: has the model learnt the task's form?
Proportion picks_an_option(const std::vector<Task>& pool, const std::vector<std::string>& texts) {
  Proportion share;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    if (pool[i].choices.size() != 2) continue;
    const auto numbers = g2c::rl::integers_in(texts[i]);
    share.total += 1;
    share.hits += !numbers.empty() && numbers.back() &&
                          std::find(pool[i].choices.begin(), pool[i].choices.end(),
                                    *numbers.back()) != pool[i].choices.end()
                      ? 1
                      : 0;
  }
  return share;
}

/// Greedy completions of every task of `pool` (what the model does, not what it can luck into).
std::vector<std::string> greedy_completions(g2c::rl::Policy& policy,
                                            const g2c::inference::TextCodec& codec,
                                            const std::vector<Task>& pool,
                                            std::int64_t max_new_tokens,
                                            std::optional<std::int64_t> eos_id, bool show,
                                            const std::string& label) {
  torch::NoGradGuard no_grad;
  g2c::Progress progress(label, static_cast<std::int64_t>(pool.size()), show);
  const auto greedy = g2c::sampling::GenerateOptions().temperature(0.0).eos_id(eos_id);
  std::vector<std::string> texts;
  for (const auto& task : pool) {
    const auto prompt_ids = torch::tensor(codec.encode(task.prompt), torch::kLong);  // (P)
    const auto full = policy.generate(prompt_ids, max_new_tokens, greedy);
    const auto* first = full.data_ptr<std::int64_t>();
    texts.push_back(codec.decode({first + prompt_ids.numel(), first + full.numel()}));
    progress.update(static_cast<std::int64_t>(texts.size()));
  }
  progress.finish();
  return texts;
}

Proportion score(const std::vector<Task>& pool, const std::vector<std::string>& texts,
                 const std::string& verifier) {
  const auto verify = verifier_named(verifier);
  Proportion rate{0, static_cast<std::int64_t>(pool.size())};
  for (std::size_t i = 0; i < pool.size(); ++i) rate.hits += verify(pool[i], texts[i]) > 0.5;
  return rate;
}

/// What a held-out evaluation records: pass rates under the intended (and, for the choice task,
/// the sloppy) verifier, the exploit's share, and the first few completions.
nlohmann::json evaluation(const std::vector<Task>& pool, const std::vector<std::string>& texts,
                          const std::string& task) {
  nlohmann::json out = {{"pass_rate", score(pool, texts, intended_verifier(task)).to_json()}};
  if (task == "choice") {
    out["sloppy_pass_rate"] = score(pool, texts, "sloppy").to_json();
    out["names_both_options"] = names_both_options(pool, texts).to_json();
    out["picks_an_option"] = picks_an_option(pool, texts).to_json();
  }
  for (std::size_t i = 0; i < std::min<std::size_t>(4, pool.size()); ++i) {
    out["samples"].push_back(
        {{"prompt", pool[i].prompt}, {"answer", pool[i].answer}, {"completion", texts[i]}});
  }
  return out;
}

/// The mean of the last `window` values at each step (NaN left out; null where none is finite).
nlohmann::json moving_mean(const std::vector<double>& values, std::size_t window) {
  auto out = nlohmann::json::array();
  for (std::size_t i = 0; i < values.size(); ++i) {
    double sum = 0;
    int count = 0;
    for (std::size_t j = i + 1 > window ? i + 1 - window : 0; j <= i; ++j) {
      if (std::isfinite(values[j])) sum += values[j], ++count;
    }
    out.push_back(count ? nlohmann::json(sum / count) : nlohmann::json(nullptr));
  }
  return out;
}

// --- The course policy: ArithLM ----------------------------------------------------------------

/// One imitation example's completion: right `right_share` of the time (the answer; a JSON object
/// closed) and plausibly wrong otherwise (the other option; an object left open or closed with
/// the wrong bracket), then the line's end, which is the model's EOS.
std::string imitation_completion(const Task& task, double right_share, std::mt19937_64& rng) {
  const bool right = std::uniform_real_distribution<double>(0.0, 1.0)(rng) < right_share;
  if (task.choices.size() == 2) {
    const auto wrong = task.choices[0] == task.answer ? task.choices[1] : task.choices[0];
    return fmt::format("{}\n", right ? task.answer : wrong);
  }
  static const std::vector<std::string> kBroken = {"", "]", ","};
  const auto& end = right ? std::string("}") : kBroken[rng() % kBroken.size()];
  return fmt::format(" {}{}\n", task.answer, end);
}

struct CoursePolicy {
  g2c::transformer::TransformerLM model{nullptr};
  std::shared_ptr<const g2c::inference::TextCodec> codec;
  std::int64_t eos_id = 0;
  nlohmann::json imitation;
};

/// ArithLM-0.3M taught by imitation: module 13's SFTTrainer on examples of both tasks (none a
/// held-out prompt), prompt masked, the completion learned — each example at position 0, as a
/// rollout's prompt is.
CoursePolicy imitation_policy(std::int64_t examples_count, std::int64_t steps, double right_share,
                              std::uint64_t seed, int digits, const std::set<std::string>& held_out,
                              bool show) {
  std::mt19937_64 rng(seed + 7);
  std::vector<std::pair<std::string, std::string>> lines;
  std::string text;
  while (static_cast<std::int64_t>(lines.size()) < examples_count) {
    const auto task = draw_task(lines.size() % 2 == 0 ? "choice" : "format", rng, digits);
    if (held_out.count(task.prompt)) continue;
    lines.emplace_back(task.prompt, imitation_completion(task, right_share, rng));
    text += lines.back().first + lines.back().second;
  }
  auto tokenizer = g2c::tokenizer::TextTokenizer::from_chars(g2c::tokenizer::CharTokenizer(text));
  CoursePolicy policy;
  policy.eos_id = tokenizer.encode("\n").front();
  std::vector<g2c::sft::SFTExample> examples;
  std::int64_t longest = 0;
  for (const auto& [prompt, completion] : lines) {
    g2c::sft::SFTExample example{tokenizer.encode(prompt), {}};
    example.mask.assign(example.ids.size(), 0);
    for (const auto id : tokenizer.encode(completion)) {
      example.ids.push_back(id);
      example.mask.push_back(1);
    }
    longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(example.ids.size()));
    examples.push_back(std::move(example));
  }
  const auto vocab = tokenizer.size();
  policy.codec = std::make_shared<g2c::inference::TextTokenizerCodec>(std::move(tokenizer));
  torch::manual_seed(seed);
  // Module 12's 0.3M rung: width 80, 4 blocks, 5 heads; 96 positions hold a task line.
  policy.model = g2c::transformer::TransformerLM(vocab, 80, 4, 5, 96);
  auto options = g2c::sft::SFTTrainerOptions(longest, /*pad_id=*/policy.eos_id, /*batch_size=*/32,
                                             steps, /*max_lr=*/3e-3);
  options.trainer()
      .warmup_steps(std::min<std::int64_t>(100, steps / 10))
      .device("cpu")
      .log_every(std::max<std::int64_t>(1, steps / 50))
      .generator(at::make_generator<at::CPUGeneratorImpl>(seed));
  g2c::sft::SFTTrainer sft(policy.model, std::move(examples), options);
  g2c::Progress progress("imitation", steps, show);
  const auto history = sft.train(
      {}, g2c::pretraining::RunOptions().on_log([&](const g2c::pretraining::LogEvent& event) {
        progress.update(event.step + 1, fmt::format("loss {:.3f}", event.train_loss));
      }));
  progress.finish();
  policy.model->eval();
  policy.imitation["examples"] = examples_count;
  policy.imitation["right_share"] = right_share;
  policy.imitation["vocab_size"] = vocab;
  policy.imitation["steps"] = steps;
  policy.imitation["batch_size"] = 32;
  policy.imitation["parameters"] = g2c::transformer::parameter_count(policy.model->options);
  policy.imitation["history"] = history.to_json();
  policy.imitation["seconds"] = progress.elapsed_seconds();
  return policy;
}

/// A copy of `source` with its own parameters (a run's starting point, or its reference).
g2c::transformer::TransformerLM copy_of(const g2c::transformer::TransformerLM& source) {
  g2c::transformer::TransformerLM copy(source->options);
  torch::NoGradGuard no_grad;
  const auto from = source->named_parameters();
  for (auto& item : copy->named_parameters()) item.value().copy_(from[item.key()]);
  const auto buffers = source->named_buffers();
  for (auto& item : copy->named_buffers()) item.value().copy_(buffers[item.key()]);
  copy->eval();
  return copy;
}

// --- SmolLM2 ------------------------------------------------------------------------------------

/// SmolLM2's tokenizer as the TextCodec the trainer reads (special tokens in the text are read as
/// such: the chat template's markers are one id each).
class PretrainedCodec : public g2c::inference::TextCodec {
 public:
  explicit PretrainedCodec(const g2c::pretrained::PretrainedTokenizer& tokenizer)
      : tokenizer_(&tokenizer) {}
  std::vector<std::int64_t> encode(std::string_view text) const override {
    return tokenizer_->encode(text);
  }
  std::string decode(const std::vector<std::int64_t>& ids) const override {
    return tokenizer_->decode(ids);
  }

 private:
  const g2c::pretrained::PretrainedTokenizer* tokenizer_;
};

/// The task as SmolLM2 reads it: the prompt as the user's turn of its chat template, the
/// assistant's turn opened (and, for the JSON task, begun with the completion prefix).
Task in_chat(const g2c::pretrained::PretrainedTokenizer& tokenizer, Task task) {
  std::string ask = task.prompt;
  if (!task.completion_prefix.empty()) {
    ask = ask.substr(0, ask.size() - task.completion_prefix.size());
  }
  while (!ask.empty() && ask.back() == ' ') ask.pop_back();
  task.prompt = tokenizer.format_chat({{"user", ask}}, /*add_generation_prompt=*/true) +
                task.completion_prefix;
  return task;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond rl: GRPO with verifiable rewards. --policy course teaches ArithLM-0.3M by imitation\n"
      "on task lines right 60% of the time, then trains it with your GRPO; --policy smollm2\n"
      "trains rank-8 LoRA adapters on SmolLM2-135M-Instruct's Wq and Wv. Runs: the JSON format\n"
      "task, the two-option addition task, the same under a loose verifier, without the KL leash,\n"
      "and K 2/8/16 at one rollout budget; held-out greedy pass rates before and after. Writes\n"
      "rl_<policy>.json and rl_<policy>_*.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-rl";
  g2c::exercises::add_common_options(app, options);
  std::string policy_name = "course";
  std::vector<std::string> runs;
  std::int64_t steps = 0, group_size = 0, max_new_tokens = 0, eval_tasks = 0, train_tasks = 0;
  std::int64_t format_steps = 10, imitation_steps = 1500, imitation_examples = 20000;
  double lr = 0, kl_coef = -1, right_share = 0.6;
  std::vector<std::int64_t> sweep = {2, 8, 16};
  std::string model_name = "SmolLM2-135M-Instruct";
  std::int64_t rank = 8;
  int digits = 0;
  app.add_option("--policy", policy_name, "course (ArithLM-0.3M) or smollm2")
      .one_of({"course", "smollm2"});
  app.add_option("--runs", runs,
                 "Of format, choice, sloppy, kl0, ksweep (default: all for course, choice for "
                 "smollm2)")
      .one_of({"format", "choice", "sloppy", "kl0", "ksweep"});
  app.add_option("--rl-steps", steps,
                 "Steps of each choice run (default: 1500 course, 130 smollm2)")
      .range(1, 100000);
  app.add_option("--format-steps", format_steps, "Steps of the format run").range(1, 100000);
  app.add_option("--group-size", group_size, "K completions a group (default 8)").range(2, 256);
  app.add_option("--ks", sweep, "Group sizes of the K sweep (at the choice run's rollout budget)")
      .range(2, 256);
  app.add_option("--lr", lr, "AdamW's learning rate (default: 1e-4 course, 4e-4 smollm2)")
      .positive();
  app.add_option("--kl", kl_coef, "The leash's coefficient beta (default 0.05)").range(0.0, 100.0);
  app.add_option("--new-tokens", max_new_tokens, "Most tokens a completion (default 6 / 12)")
      .range(1, 512);
  app.add_option("--eval-tasks", eval_tasks, "Held-out tasks a kind (default 300 / 400)")
      .range(1, 100000);
  app.add_option("--train-tasks", train_tasks, "Tasks in a run's pool (default 600)")
      .range(1, 1000000);
  app.add_option("--imitation-steps", imitation_steps, "ArithLM's imitation steps")
      .range(1, 1000000);
  app.add_option("--imitation-examples", imitation_examples, "Task examples ArithLM imitates")
      .range(10, 10000000);
  app.add_option("--right-share", right_share, "How often an imitation line is right")
      .range(0.0, 1.0);
  app.add_option("--digits", digits, "Digits of each addend of the choice task (default 1)")
      .range(1, 9);
  app.add_option("--model", model_name, "The pretrained model of --policy smollm2");
  app.add_option("--rank", rank, "LoRA rank of --policy smollm2").range(1, 256);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (!device.is_cpu()) {
      throw g2c::ValueError(
          "beyond_rl trains on the CPU (its rollouts are one token at a time); "
          "use --device cpu");
    }
    const auto& defaults = kPolicies.at(policy_name);
    const bool course = policy_name == "course";
    if (steps == 0) steps = defaults.steps;
    if (group_size == 0) group_size = defaults.group_size;
    if (max_new_tokens == 0) max_new_tokens = defaults.max_new_tokens;
    if (eval_tasks == 0) eval_tasks = defaults.eval_tasks;
    if (train_tasks == 0) train_tasks = defaults.train_tasks;
    if (lr == 0) lr = defaults.lr;
    if (kl_coef < 0) kl_coef = defaults.kl_coef;
    if (digits == 0) digits = defaults.digits;
    if (runs.empty()) {
      runs = course ? std::vector<std::string>{"format", "choice", "sloppy", "kl0", "ksweep"}
                    : std::vector<std::string>{"choice"};
    }
    const auto wants = [&](const std::string& run) {
      return std::find(runs.begin(), runs.end(), run) != runs.end();
    };

    std::vector<RunSpec> specs;
    if (wants("format"))
      specs.push_back({"format", "format", "format", format_steps, group_size, kl_coef});
    if (wants("choice")) specs.push_back({"choice", "choice", "exact", steps, group_size, kl_coef});
    if (wants("sloppy"))
      specs.push_back({"sloppy", "choice", "sloppy", steps, group_size, kl_coef});
    if (wants("kl0")) specs.push_back({"kl0", "choice", "exact", steps, group_size, 0.0});
    if (wants("ksweep")) {
      const auto budget = steps * group_size;  // completions drawn by the choice run
      for (const auto k : sweep) {
        specs.push_back({fmt::format("k{}", k), "choice", "exact",
                         std::max<std::int64_t>(1, budget / k), k, kl_coef});
      }
    }

    // Held-out prompts first; they stay out of the imitation data and the RL pools.
    std::set<std::string> seen;
    std::map<std::string, std::vector<Task>> held_out, pools;
    for (const std::string kind : {"choice", "format"}) {
      held_out[kind] = draw_pool(kind, eval_tasks, options.seed + 1000, digits, seen);
    }
    const auto held_out_prompts = seen;
    for (const std::string kind : {"choice", "format"}) {
      pools[kind] = draw_pool(kind, train_tasks, options.seed + 2000, digits, seen);
    }

    nlohmann::json result = g2c::exercises::run_metadata("beyond_rl", options, device);
    result["policy"] = policy_name;
    result["settings"] = {{"lr", lr},
                          {"digits", digits},
                          {"kl_coef", kl_coef},
                          {"max_new_tokens", max_new_tokens},
                          {"eval_tasks", eval_tasks},
                          {"train_tasks", train_tasks},
                          {"temperature", 1.0}};

    // The policy's pieces: a starting point each run copies, a codec, the EOS id.
    std::shared_ptr<const g2c::inference::TextCodec> codec;
    std::optional<std::int64_t> eos_id;
    CoursePolicy imitator;
    std::optional<g2c::pretrained::PretrainedModel> smol;
    g2c::pretrained::LlamaLoRA lora{nullptr};
    std::function<std::pair<std::shared_ptr<g2c::rl::Policy>, std::shared_ptr<g2c::rl::Policy>>()>
        starting_point;
    if (course) {
      imitator = imitation_policy(imitation_examples, imitation_steps, right_share, options.seed,
                                  digits, held_out_prompts, !options.quiet);
      codec = imitator.codec;
      eos_id = imitator.eos_id;
      result["imitation"] = imitator.imitation;
      result["trainable_parameters"] = imitator.imitation["parameters"];
      result["model_parameters"] = imitator.imitation["parameters"];
      starting_point = [&] {
        return std::pair(g2c::rl::transformer_policy(copy_of(imitator.model)),
                         g2c::rl::transformer_policy(copy_of(imitator.model)));
      };
    } else {
      smol = g2c::pretrained::load_pretrained_model(model_name,
                                                    g2c::pretrained::LoadOptions().packed(false));
      smol->model->eval();
      codec = std::make_shared<PretrainedCodec>(smol->tokenizer);
      eos_id = smol->tokenizer.eos_id();
      for (auto& [kind, pool] : held_out) {
        for (auto& task : pool) task = in_chat(smol->tokenizer, task);
      }
      for (auto& [kind, pool] : pools) {
        for (auto& task : pool) task = in_chat(smol->tokenizer, task);
      }
      lora = g2c::pretrained::LlamaLoRA(smol->model, g2c::pretrained::LlamaLoRAOptions(rank));
      result["trainable_parameters"] = lora->adapter_parameters();
      result["model_parameters"] = lora->base_parameters();
      result["lora"] = {
          {"rank", rank}, {"targets", lora->options.targets()}, {"scaling", lora->scaling}};
      starting_point = [&] {
        torch::manual_seed(options.seed);  // the same fresh adapters for every run
        lora->reset_parameters();
        return std::pair(g2c::rl::llama_lora_policy(lora, true),
                         g2c::rl::llama_lora_policy(lora, false));
      };
    }

    // Before: the starting point, greedy, on each kind's held-out tasks.
    nlohmann::json before;
    std::map<std::string, std::string> before_text;
    {
      auto [policy, reference] = starting_point();
      for (const std::string kind : {"choice", "format"}) {
        const bool needed = std::any_of(specs.begin(), specs.end(),
                                        [&](const RunSpec& spec) { return spec.task == kind; });
        if (!needed) continue;
        const auto texts = greedy_completions(*policy, *codec, held_out[kind], max_new_tokens,
                                              eos_id, !options.quiet, "before: " + kind);
        before[kind] = evaluation(held_out[kind], texts, kind);
        before_text[kind] = score(held_out[kind], texts, intended_verifier(kind)).to_string();
        fmt::print("before, {}: pass rate {}\n", kind, before_text[kind]);
      }
    }
    result["before"] = before;

    g2c::release_freed_memory();
    g2c::reset_peak_resident();
    nlohmann::json run_results = nlohmann::json::array();
    for (const auto& spec : specs) {
      auto [policy, reference] = starting_point();
      g2c::rl::GRPOTrainer trainer(policy, reference, codec, pools[spec.task],
                                   verifier_named(spec.verifier),
                                   g2c::rl::GRPOOptions()
                                       .group_size(spec.group_size)
                                       .lr(lr)
                                       .kl_coef(spec.kl_coef)
                                       .max_new_tokens(max_new_tokens)
                                       .eos_id(eos_id)
                                       .seed(options.seed));
      g2c::rl::GRPOHistory history;
      g2c::Progress progress(fmt::format("{} (K {})", spec.name, spec.group_size), spec.steps,
                             !options.quiet);
      const auto start = Clock::now();
      for (std::int64_t step = 0; step < spec.steps; ++step) {
        history.append(trainer.train_step());
        const auto window = std::min<std::size_t>(20, history.size());
        double reward = 0;
        for (auto i = history.size() - window; i < history.size(); ++i) {
          reward += history.mean_reward[i];
        }
        progress.update(step + 1, fmt::format("reward(last {}) {:.2f}", window,
                                              reward / static_cast<double>(window)));
      }
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      progress.finish();
      const auto texts =
          greedy_completions(*trainer.model, *codec, held_out[spec.task], max_new_tokens, eos_id,
                             !options.quiet, "after: " + spec.name);
      const auto after = evaluation(held_out[spec.task], texts, spec.task);
      fmt::print("{}: pass rate {} -> {} in {} steps ({:.2f} s a step)\n", spec.name,
                 before_text[spec.task],
                 score(held_out[spec.task], texts, intended_verifier(spec.task)).to_string(),
                 spec.steps, seconds / static_cast<double>(spec.steps));
      nlohmann::json run = {{"name", spec.name},
                            {"task", spec.task},
                            {"train_verifier", spec.verifier},
                            {"steps", spec.steps},
                            {"group_size", spec.group_size},
                            {"kl_coef", spec.kl_coef},
                            {"completions_drawn", spec.steps * spec.group_size},
                            {"updates", trainer.step_count},
                            {"seconds", seconds},
                            {"seconds_per_step", seconds / static_cast<double>(spec.steps)},
                            {"history", history.to_json()},

                            {"before", before[spec.task]},
                            {"after", after}};
      // The pictures' curves: against completions drawn (so K 2 and K 16 share an axis), each the
      // mean over the last `window` steps, a window of min(400, a sixth of the run's) completions.
      const auto window = static_cast<std::size_t>(std::max<std::int64_t>(
          1, std::min<std::int64_t>(400, spec.steps * spec.group_size / 6) / spec.group_size));
      run["smoothing_window_steps"] = window;
      run["completions_axis"] = nlohmann::json::array();
      for (std::int64_t step = 1; step <= spec.steps; ++step) {
        run["completions_axis"].push_back(step * spec.group_size);
      }
      run["smoothed"] = {{"mean_reward", moving_mean(history.mean_reward, window)},
                         {"kl", moving_mean(history.kl, window)},
                         {"sample_entropy", moving_mean(history.sample_entropy, window)},
                         {"skipped", moving_mean(history.skipped, window)}};
      run_results.push_back(run);
    }
    result["runs"] = run_results;
    result["peak_resident_mib"] = g2c::peak_resident_mib();

    // Pictures: the reward, the leash, the entropy and the skips — each curve a moving mean (see
    // "smoothing_window_steps") against the completions drawn — and the pass rates.
    const auto prefix = "rl_" + policy_name;
    auto reward = Figure::line(prefix + "_reward.png", "Mean reward of the sampled groups",
                               "completions drawn", "reward");
    auto kl = Figure::line(prefix + "_kl.png", "KL estimate to the reference", "completions drawn",
                           "mean(exp(d) - d - 1)");
    auto entropy = Figure::line(prefix + "_entropy.png", "Sampled entropy per token",
                                "completions drawn", "mean(-logp / n)");
    auto skipped = Figure::line(prefix + "_skipped.png", "Share of skipped (degenerate) groups",
                                "completions drawn", "skipped");
    const std::vector<std::pair<Figure*, std::string>> curves = {
        {&reward, "mean_reward"}, {&kl, "kl"}, {&entropy, "sample_entropy"}, {&skipped, "skipped"}};
    for (std::size_t i = 0; i < run_results.size(); ++i) {
      const auto at = fmt::format("/runs/{}", i);
      const auto label = run_results[i]["name"].get<std::string>();
      for (const auto& [figure, name] : curves) {
        figure->add(Series(label, at + "/completions_axis", at + "/smoothed/" + name));
      }
    }
    nlohmann::json table = {{"run", nlohmann::json::array()}};
    for (const auto& run : run_results) {
      table["run"].push_back(run["name"]);
      table["before"].push_back(run["before"]["pass_rate"]["value"]);
      table["after"].push_back(run["after"]["pass_rate"]["value"]);
    }
    result["table"] = table;
    auto pass =
        Figure::bar(prefix + "_pass_rate.png",
                    "Held-out greedy pass rate under the intended verifier", "run", "pass rate");
    pass.add(Series("before", "/table/run", "/table/before"))
        .add(Series("after", "/table/run", "/table/after"));
    result["figures"] = g2c::exercises::figures({reward, kl, entropy, skipped, pass});
    const auto path = g2c::exercises::save_result(options, prefix + ".json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_rl
