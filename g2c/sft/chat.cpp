#include "g2c/sft/chat.h"

#include <algorithm>
#include <map>

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

namespace {

/// A conversation's prompt fitted into the context, with room for max_new_tokens.
struct FittedPrompt {
  std::vector<std::int64_t> ids;
  std::int64_t dropped_messages = 0;
  bool prompt_cut = false;
};

/// chat_reply's argument checks.
void check_reply_options(const g2c::transformer::TransformerLMImpl& model,
                         const ChatReplyOptions& options) {
  const std::int64_t context = model.options.max_seq_len();
  if (options.max_new_tokens() < 1 || options.max_new_tokens() >= context) {
    throw ValueError(
        fmt::format("max_new_tokens must be in [1, {}) (the model's max_seq_len {} "
                    "must leave room for the prompt), got {}",
                    context, context, options.max_new_tokens()));
  }
}

/// Leaves out whole messages from the oldest until the prompt fits (at least the last one stays),
/// then cuts the start of the last one if it alone does not.
FittedPrompt fit_prompt(const g2c::transformer::TransformerLMImpl& model,
                        const g2c::tokenizer::TextTokenizer& tokenizer,
                        const std::vector<Message>& messages, const ChatReplyOptions& options) {
  const ChatTemplate chat;
  const std::int64_t room = model.options.max_seq_len() - options.max_new_tokens();
  FittedPrompt fitted;
  auto kept = messages;
  fitted.ids = tokenizer.encode(chat.generation_prompt(kept));
  while (static_cast<std::int64_t>(fitted.ids.size()) > room && kept.size() > 1) {
    kept.erase(kept.begin());
    fitted.dropped_messages += 1;
    fitted.ids = tokenizer.encode(chat.generation_prompt(kept));
  }
  if (static_cast<std::int64_t>(fitted.ids.size()) > room) {
    // Keep the end: the question and the assistant's cue.
    fitted.ids.erase(fitted.ids.begin(), fitted.ids.end() - room);
    fitted.prompt_cut = true;
  }
  return fitted;
}

}  // namespace

ChatReply chat_reply(g2c::transformer::TransformerLMImpl& model,
                     const g2c::tokenizer::TextTokenizer& tokenizer,
                     const std::vector<Message>& messages, const ChatReplyOptions& options,
                     const std::function<void(const std::string&)>& on_text) {
  check_reply_options(model, options);
  const auto end_id = end_token_id(tokenizer);
  const auto fitted = fit_prompt(model, tokenizer, messages, options);
  ChatReply reply;
  reply.dropped_messages = fitted.dropped_messages;
  reply.prompt_cut = fitted.prompt_cut;

  const bool was_training = model.is_training();
  model.eval();
  torch::NoGradGuard no_grad;
  g2c::sampling::TextStream stream(tokenizer);
  g2c::sampling::generate_cached(
      model, torch::tensor(fitted.ids, torch::kLong).to(model.device()), options.max_new_tokens(),
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

std::vector<ChatReply> chat_replies(g2c::transformer::TransformerLMImpl& model,
                                    const g2c::tokenizer::TextTokenizer& tokenizer,
                                    const std::vector<std::vector<Message>>& conversations,
                                    const ChatReplyOptions& options, std::int64_t batch_size) {
  check_reply_options(model, options);
  if (options.sampling().temperature() != 0.0) {
    throw ValueError(fmt::format(
        "chat_replies generates greedily (temperature 0), got temperature {}: a sampled reply "
        "depends on the order of the draws; call chat_reply for each conversation instead",
        options.sampling().temperature()));
  }
  if (batch_size < 1) {
    throw ValueError(fmt::format("batch_size must be at least 1, got {}", batch_size));
  }
  const auto end_id = end_token_id(tokenizer);
  std::vector<ChatReply> replies(conversations.size());
  // Prompts of the same length share a batch: one position per step for every row, no padding.
  std::map<std::size_t, std::vector<std::size_t>> by_length;
  std::vector<std::vector<std::int64_t>> prompts(conversations.size());
  for (std::size_t i = 0; i < conversations.size(); ++i) {
    if (conversations[i].empty()) {
      throw ValueError(fmt::format("conversation {} has no messages", i));
    }
    auto fitted = fit_prompt(model, tokenizer, conversations[i], options);
    replies[i].dropped_messages = fitted.dropped_messages;
    replies[i].prompt_cut = fitted.prompt_cut;
    by_length[fitted.ids.size()].push_back(i);
    prompts[i] = std::move(fitted.ids);
  }

  const bool was_training = model.is_training();
  model.eval();
  torch::NoGradGuard no_grad;
  const auto device = model.device();
  const auto greedy = g2c::sampling::GenerateOptions(options.sampling()).eos_id(end_id);
  for (const auto& [length, members] : by_length) {
    for (std::size_t first = 0; first < members.size();
         first += static_cast<std::size_t>(batch_size)) {
      const auto last = std::min(members.size(), first + static_cast<std::size_t>(batch_size));
      const std::vector<std::size_t> rows(members.begin() + static_cast<std::ptrdiff_t>(first),
                                          members.begin() + static_cast<std::ptrdiff_t>(last));
      const auto B = static_cast<std::int64_t>(rows.size());
      std::vector<std::int64_t> flat;
      for (const auto row : rows) flat.insert(flat.end(), prompts[row].begin(), prompts[row].end());
      auto history = torch::tensor(flat, torch::kLong).view({B, -1});  // (B, T), on the CPU
      const auto prompt = history.to(device);
      auto cache = model.empty_kv_cache();
      torch::Tensor logits;  // (B, 1, V)
      for (std::int64_t t = 0; t < prompt.size(1); ++t) {
        logits = model.forward_cached(prompt.narrow(/*dim=*/1, t, 1), cache);
      }
      std::vector<bool> done(rows.size(), false);
      std::int64_t still_going = B;
      for (std::int64_t step = 0; step < options.max_new_tokens() && still_going > 0; ++step) {
        const auto next = g2c::sampling::sample_next_token(
            logits.select(/*dim=*/1, 0).to(torch::kCPU), history, greedy);  // (B)
        const auto* ids = next.data_ptr<std::int64_t>();
        for (std::size_t r = 0; r < rows.size(); ++r) {
          if (done[r]) continue;
          if (ids[r] == end_id) {
            replies[rows[r]].stopped = true;
            done[r] = true;
            still_going -= 1;
          } else {
            replies[rows[r]].ids.push_back(ids[r]);
          }
        }
        history = torch::cat({history, next.view({B, 1})}, /*dim=*/1);
        if (still_going == 0 || history.size(1) >= model.options.max_seq_len()) break;
        logits = model.forward_cached(next.view({B, 1}).to(device), cache);
      }
    }
  }
  model.train(was_training);
  for (auto& reply : replies) reply.text = tokenizer.decode(reply.ids);
  return replies;
}

}  // namespace g2c::sft
