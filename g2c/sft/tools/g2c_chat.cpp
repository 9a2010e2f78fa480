// g2c-chat: a conversation with a model artifact in the terminal, through module 13's chat
// template.
//
//   g2c-chat                                      ShakespeareLM-1M-SFT, interactive
//   g2c-chat --model ShakespeareLM-1M             the base model, to see what SFT changed
//   g2c-chat --once "Greet me as a courtier would."   one reply, for scripts
//   g2c-chat --temperature 0.8 --top-k 20 --seed 3
//   g2c-chat --model SmolLM2-135M-Instruct        a real pretrained model (module 16), in its own
//                                                 ChatML template; --system replaces its system
//                                                 prompt; --weights float32 for the lesson's
//                                                 dequantized weights (default: packed)
//
// Each line typed is a user turn; the conversation so far is rendered with the template and the
// reply is shown as it is generated, until the model writes <|end|> (or --max-new-tokens). The
// whole conversation is the prompt of the next reply, so older turns are left out, oldest first,
// once it no longer fits in the model's context (a note says so). Commands: /reset forgets the
// conversation, /quit (or end of input, Ctrl-D) leaves, /help lists them.
//
// Exit status: g2c::run_cli's table (g2c/core/cli.h): 0 success, 2 bad input (a missing artifact,
// a model without the course's special tokens, a bad option), 1 anything else.
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "g2c/core/cli.h"
#include "g2c/core/errors.h"
#include "g2c/nn/device.h"
#include "g2c/pretrained/generation.h"
#include "g2c/sampling/text_generation.h"
#include "g2c/sft/chat.h"

namespace {

struct Options {
  std::string model = "ShakespeareLM-1M-SFT";
  std::optional<std::string> once;
  std::optional<std::string> system;
  std::int64_t max_new_tokens = 60;
  double temperature = 0.0;
  std::optional<std::int64_t> top_k;
  std::optional<double> top_p;
  std::uint64_t seed = 1;
  std::string device = "auto";
  int threads = 0;
  std::string weights = "packed";      // a pretrained model's: packed or float32
  std::optional<std::string> adapter;  // a LoRA adapter file for a pretrained model
};

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

// How each token is drawn: greedy at temperature 0, else seeded draws.
g2c::sampling::GenerateOptions sampling_options(const Options& options) {
  auto sampling = g2c::sampling::GenerateOptions()
                      .temperature(options.temperature)
                      .top_k(options.top_k)
                      .top_p(options.top_p);
  if (options.temperature > 0) {
    sampling.generator(at::make_generator<at::CPUGeneratorImpl>(options.seed));
  }
  return sampling;
}

// The terminal conversation: --once answers one message; otherwise each line typed is a user turn
// (or a command) until /quit or the end of input.
int chat_loop(const Options& options, const std::function<void(const std::string&)>& answer,
              const std::function<void()>& reset) {
  if (options.once) {
    answer(*options.once);
    return 0;
  }
  fmt::print(stderr,
             "Type a message and press Enter. /reset forgets the conversation, /quit "
             "leaves.\n");
  std::string line;
  while (true) {
    std::cout << "you> " << std::flush;
    if (!std::getline(std::cin, line)) {
      std::cout << std::endl;
      break;
    }
    const auto text = trim(line);
    if (text.empty()) continue;
    if (text == "/quit" || text == "/exit") break;
    if (text == "/reset") {
      reset();
      fmt::print(stderr, "[conversation forgotten]\n");
      continue;
    }
    if (text == "/help") {
      fmt::print(stderr, "/reset forgets the conversation, /quit leaves (so does Ctrl-D)\n");
      continue;
    }
    if (text.front() == '/') {
      fmt::print(stderr, "[unknown command {}: /reset, /quit or /help]\n", text);
      continue;
    }
    std::cout << "model> " << std::flush;
    answer(text);
  }
  return 0;
}

// A pretrained model (module 16): its own tokenizer and chat template, its end token <|im_end|>.
int run_pretrained(const Options& options, const std::string& name) {
  if (options.threads > 0) torch::set_num_threads(options.threads);
  if (options.device != "auto" && options.device != "cpu") {
    throw g2c::ValueError(
        fmt::format("--device {}: the pretrained model runs on the CPU", options.device));
  }
  auto smol = g2c::pretrained::load_pretrained_model(
      name, g2c::pretrained::LoadOptions().packed(options.weights == "packed"),
      options.adapter ? std::optional<std::filesystem::path>(*options.adapter) : std::nullopt);
  fmt::print(stderr,
             "{} (pretrained, {} parameters, weights {}), context {} tokens; loaded in {:.1f} s\n",
             smol.name, smol.model->options.num_parameters(), options.weights,
             smol.model->options.max_seq_len(), smol.report.seconds);
  const auto sampling = sampling_options(options);
  const bool terminal = g2c::sampling::stdout_is_terminal();
  const auto show = [&](const std::string& text) {
    std::cout << (terminal ? g2c::sampling::for_terminal(text) : text) << std::flush;
  };
  std::vector<g2c::pretrained::ChatMessage> conversation;
  const auto start = [&] {
    conversation.clear();
    if (options.system) conversation.push_back({"system", *options.system});
  };
  start();
  const auto answer = [&](const std::string& line) {
    conversation.push_back({"user", line});
    const auto reply =
        g2c::pretrained::chat_reply(smol, conversation, options.max_new_tokens, sampling, show);
    std::cout << std::endl;
    if (!reply.stopped) {
      fmt::print(stderr, "[no end of turn within {} tokens: the reply was cut]\n",
                 options.max_new_tokens);
    }
    if (reply.dropped_messages > 0) {
      const auto first = conversation.begin() + (options.system ? 1 : 0);
      conversation.erase(first, first + reply.dropped_messages);
      fmt::print(stderr, "[the {} oldest message{} no longer fit in the context: left out]\n",
                 reply.dropped_messages, reply.dropped_messages == 1 ? "" : "s");
    }
    conversation.push_back({"assistant", reply.text});
  };
  return chat_loop(options, answer, start);
}

int run(const Options& options) {
  if (const auto name = g2c::pretrained::pretrained_model_name(options.model); !name.empty()) {
    return run_pretrained(options, name);
  }
  if (options.adapter) {
    throw g2c::ValueError(fmt::format(
        "--adapter: a LoRA adapter file applies to a pretrained model (SmolLM2-135M-Instruct), "
        "not to {}",
        options.model));
  }
  if (options.threads > 0) torch::set_num_threads(options.threads);
  const auto device = g2c::nn::resolve_device(options.device);
  auto text_model = g2c::sampling::load_text_model(options.model, device);
  auto& model = *text_model.artifact.model;
  const auto& tokenizer = text_model.tokenizer;
  g2c::sft::end_token_id(tokenizer);  // a model without the chat markers fails here, not mid-chat
  const auto& summary = text_model.artifact.summary;
  fmt::print(stderr, "{} ({}{}), context {} tokens; {}\n", summary.name,
             summary.module.empty() ? "?" : summary.module,
             summary.base_artifact ? ", tuned from " + *summary.base_artifact : std::string(),
             model.options.max_seq_len(), g2c::nn::device_name(device));

  const auto sampling = sampling_options(options);
  const auto reply_options =
      g2c::sft::ChatReplyOptions().max_new_tokens(options.max_new_tokens).sampling(sampling);
  const bool terminal = g2c::sampling::stdout_is_terminal();
  const auto show = [&](const std::string& text) {
    std::cout << (terminal ? g2c::sampling::for_terminal(text) : text) << std::flush;
  };

  std::vector<g2c::sft::Message> conversation;
  const auto answer = [&](const std::string& line) {
    conversation.push_back({"user", line});
    const auto reply = g2c::sft::chat_reply(model, tokenizer, conversation, reply_options, show);
    std::cout << std::endl;
    if (!reply.stopped) {
      fmt::print(stderr, "[no end marker within {} tokens: the reply was cut]\n",
                 options.max_new_tokens);
    }
    if (reply.dropped_messages > 0) {
      // Forget them here too, so the next prompt starts where this one did.
      conversation.erase(conversation.begin(), conversation.begin() + reply.dropped_messages);
      fmt::print(stderr, "[the {} oldest message{} no longer fit in the context: left out]\n",
                 reply.dropped_messages, reply.dropped_messages == 1 ? "" : "s");
    }
    if (reply.prompt_cut) {
      fmt::print(stderr, "[your message is longer than the context: only its end was read]\n");
    }
    conversation.push_back({"assistant", reply.text});
  };

  return chat_loop(options, answer, [&] { conversation.clear(); });
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Chat with a model artifact through the course's chat template (module 13)."};
  Options options;
  app.add_option(
      "--model", options.model,
      "Model artifact (name, alias or folder) or a pretrained model: SmolLM2-135M-Instruct");
  app.add_option("--once", options.once, "Reply to this one message and exit").no_default();
  app.add_option("--system", options.system,
                 "A pretrained model's system prompt, instead of its template's own")
      .no_default();
  app.add_option("--max-new-tokens", options.max_new_tokens, "At most this many tokens per reply")
      .positive();
  app.add_option("--temperature", options.temperature, "0 is greedy (the default)").non_negative();
  app.add_option("--top-k", options.top_k, "Keep the k most likely tokens").positive().no_default();
  app.add_option("--top-p", options.top_p,
                 "Keep the most likely tokens holding probability p (nucleus sampling)")
      .range(0.0, 1.0)
      .no_default();
  app.add_option("--seed", options.seed, "Seed of the sampling generator");
  app.add_option("--device", options.device, "auto, cpu, cuda or mps");
  app.add_option("--adapter", options.adapter,
                 "A LoRA adapter file for a pretrained model (exercise 18b_tool_tuning)");
  app.add_option("--weights", options.weights,
                 "A pretrained model's weights: packed (the fast path) or float32 (dequantized on "
                 "load)")
      .one_of({"packed", "float32"});
  app.add_option("--threads", options.threads, "LibTorch's CPU threads (0: its default)")
      .no_default();
  return g2c::run_cli(app, argc, argv, [&] { return run(options); });
}
