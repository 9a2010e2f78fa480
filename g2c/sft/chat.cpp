#include "g2c/sft/chat.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/sampling/text_generation.h"

namespace g2c::sft {

std::int64_t end_token_id(const g2c::tokenizer::TextTokenizer& tokenizer) {
  const auto ids = tokenizer.encode(ChatTemplate::END);
  if (ids.size() != 1) {
    throw ValueError(fmt::format(
        "the tokenizer ({}) has no single id for {}: chat needs the course tokenizer with its "
        "reserved special tokens (a model trained on the ShakespeareTokenizer)",
        tokenizer.description(), ChatTemplate::END));
  }
  return ids.front();
}

ChatReply chat_reply(g2c::transformer::TransformerLMImpl& model,
                     const g2c::tokenizer::TextTokenizer& tokenizer,
                     const std::vector<Message>& messages, const ChatReplyOptions& options,
                     const std::function<void(const std::string&)>& on_text) {
  const std::int64_t context = model.options.max_seq_len();
  if (options.max_new_tokens() < 1 || options.max_new_tokens() >= context) {
    throw ValueError(
        fmt::format("max_new_tokens must be in [1, {}) (the model's max_seq_len {} "
                    "must leave room for the prompt), got {}",
                    context, context, options.max_new_tokens()));
  }
  const auto end_id = end_token_id(tokenizer);
  const ChatTemplate chat;
  ChatReply reply;
  const std::int64_t room = context - options.max_new_tokens();
  // Leave out whole messages from the oldest until the prompt fits (at least the last one stays).
  auto kept = messages;
  auto prompt = tokenizer.encode(chat.generation_prompt(kept));
  while (static_cast<std::int64_t>(prompt.size()) > room && kept.size() > 1) {
    kept.erase(kept.begin());
    reply.dropped_messages += 1;
    prompt = tokenizer.encode(chat.generation_prompt(kept));
  }
  if (static_cast<std::int64_t>(prompt.size()) > room) {
    prompt.erase(prompt.begin(), prompt.end() - room);  // keep the end: the question and the cue
    reply.prompt_cut = true;
  }

  const bool was_training = model.is_training();
  model.eval();
  torch::NoGradGuard no_grad;
  g2c::sampling::TextStream stream(tokenizer);
  g2c::sampling::generate_cached(
      model, torch::tensor(prompt, torch::kLong).to(model.device()), options.max_new_tokens(),
      g2c::sampling::GenerateOptions(options.sampling()).eos_id(end_id), [&](std::int64_t id) {
        if (id == end_id) {
          reply.stopped = true;
          return;
        }
        reply.ids.push_back(id);
        if (on_text) on_text(stream.push(id));
      });
  model.train(was_training);
  if (on_text) on_text(stream.finish());
  reply.text = tokenizer.decode(reply.ids);
  return reply;
}

}  // namespace g2c::sft
