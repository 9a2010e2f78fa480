#include "g2c/pretrained/generation.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::pretrained {

PretrainedModel load_pretrained_model(const std::string& name, const LoadOptions& options) {
  const auto path = pretrained_model_file(name);
  const auto file = GGUFFile::open(path);
  PretrainedModel pretrained{
      pretrained_model_name(name), nullptr, PretrainedTokenizer::from_gguf(file), {}};
  pretrained.model = load_llama(file, &pretrained.report, options);
  return pretrained;
}

std::string PretrainedTextStream::push(std::int64_t id) {
  return bytes_.push(tokenizer_->decode({id}));
}

std::string PretrainedTextStream::finish() {
  return bytes_.finish();
}

PretrainedGeneration generate_pretrained(PretrainedModel& pretrained,
                                         const std::vector<std::int64_t>& prompt,
                                         std::int64_t max_new_tokens,
                                         const g2c::sampling::GenerateOptions& options,
                                         const std::function<void(std::int64_t)>& on_token) {
  auto& model = *pretrained.model;
  const auto context = model.options.max_seq_len();
  const auto length = static_cast<std::int64_t>(prompt.size());
  if (prompt.empty() || max_new_tokens <= 0 || length >= context) {
    throw ValueError(fmt::format(
        "generate_pretrained needs a prompt of 1 to {} tokens and max_new_tokens > 0; got {} "
        "tokens and max_new_tokens {}",
        context - 1, length, max_new_tokens));
  }
  torch::NoGradGuard no_grad;
  const auto room = std::min(max_new_tokens, context - length);
  auto cache = model.empty_kv_cache(length + room);
  auto history = torch::tensor(prompt, torch::kLong);  // (T), for the repetition penalty
  // The prompt at once; only its last position's logits are needed.
  auto logits =
      model.head(model.hidden_states(history.unsqueeze(0), &cache).select(1, -1));  // (1, V)
  PretrainedGeneration generation;
  const auto eos = pretrained.tokenizer.eos_id();
  for (std::int64_t step = 0; step < room; ++step) {
    const auto next = g2c::sampling::sample_next_token(logits, history, options);  // (1)
    const auto id = next.item<std::int64_t>();
    if (on_token) on_token(id);
    if (id == eos) {
      generation.stopped = true;
      break;
    }
    generation.ids.push_back(id);
    if (step + 1 == room) break;
    history = torch::cat({history, next});
    logits = model.forward(next.view({1, 1}), cache).select(1, -1);
  }
  return generation;
}

PretrainedChatReply chat_reply(PretrainedModel& pretrained,
                               const std::vector<ChatMessage>& messages,
                               std::int64_t max_new_tokens,
                               const g2c::sampling::GenerateOptions& options,
                               const std::function<void(const std::string&)>& on_text) {
  if (messages.empty() || messages.back().role != "user") {
    throw ValueError("chat_reply needs a conversation that ends with a user message");
  }
  const auto context = pretrained.model->options.max_seq_len();
  auto kept = messages;
  PretrainedChatReply reply;
  auto prompt = pretrained.tokenizer.encode(pretrained.tokenizer.format_chat(kept, true));
  // Oldest turns go first, a user turn with its reply; a leading system message and the last
  // user turn always stay.
  const std::size_t first = kept.front().role == "system" ? 1 : 0;
  while (static_cast<std::int64_t>(prompt.size()) + max_new_tokens > context &&
         kept.size() > first + 1) {
    const auto drop = std::min<std::size_t>(2, kept.size() - first - 1);
    kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(first),
               kept.begin() + static_cast<std::ptrdiff_t>(first + drop));
    reply.dropped_messages += static_cast<std::int64_t>(drop);
    prompt = pretrained.tokenizer.encode(pretrained.tokenizer.format_chat(kept, true));
  }
  if (static_cast<std::int64_t>(prompt.size()) >= context) {
    throw ValueError(
        fmt::format("the last message alone is {} tokens, more than {}'s context of "
                    "{}; shorten it",
                    prompt.size(), pretrained.name, context));
  }
  reply.prompt_tokens = static_cast<std::int64_t>(prompt.size());
  PretrainedTextStream stream(pretrained.tokenizer);
  const auto eos = pretrained.tokenizer.eos_id();
  const auto generation = generate_pretrained(
      pretrained, prompt, std::min(max_new_tokens, context - reply.prompt_tokens), options,
      [&](std::int64_t id) {
        if (id == eos || !on_text) return;
        if (const auto text = stream.push(id); !text.empty()) on_text(text);
      });
  if (const auto rest = stream.finish(); !rest.empty() && on_text) on_text(rest);
  reply.text = g2c::tokenizer::to_valid_utf8(pretrained.tokenizer.decode(generation.ids));
  reply.stopped = generation.stopped;
  return reply;
}

}  // namespace g2c::pretrained
