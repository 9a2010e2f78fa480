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

torch::Tensor mean_pooled_embeddings(PretrainedModel& pretrained,
                                     const std::vector<std::vector<std::int64_t>>& ids,
                                     std::int64_t batch) {
  if (batch <= 0)
    throw ValueError(fmt::format("mean_pooled_embeddings: batch must be > 0, got {}", batch));
  const auto context = pretrained.model->options.max_seq_len();
  const auto dim = pretrained.model->options.embedding_dim();
  auto out = torch::zeros({static_cast<std::int64_t>(ids.size()), dim}, torch::kFloat32);
  torch::NoGradGuard no_grad;
  for (std::size_t first = 0; first < ids.size(); first += static_cast<std::size_t>(batch)) {
    const auto last = std::min(ids.size(), first + static_cast<std::size_t>(batch));
    std::int64_t longest = 0;
    for (auto i = first; i < last; ++i) {
      longest = std::max(longest, std::min(context, static_cast<std::int64_t>(ids[i].size())));
    }
    if (longest == 0) continue;  // only empty texts: zero rows
    const auto rows = static_cast<std::int64_t>(last - first);
    // (rows, longest) ids, padded at the end with id 0, and a (rows, longest) mask of real tokens.
    auto input = torch::zeros({rows, longest}, torch::kLong);
    auto mask = torch::zeros({rows, longest}, torch::kFloat32);
    for (auto i = first; i < last; ++i) {
      const auto length = std::min(context, static_cast<std::int64_t>(ids[i].size()));
      if (length == 0) continue;
      const auto row = static_cast<std::int64_t>(i - first);
      input[row]
          .narrow(0, 0, length)
          .copy_(torch::tensor(std::vector<std::int64_t>(ids[i].begin(), ids[i].begin() + length),
                               torch::kLong));
      mask[row].narrow(0, 0, length).fill_(1.0f);
    }
    // (rows, T, D) -> (rows, D): the mean over each text's own tokens, then unit length.
    const auto states = pretrained.model->hidden_states(input);
    const auto summed = (states * mask.unsqueeze(-1)).sum(1);
    const auto pooled = summed / mask.sum(1, /*keepdim=*/true).clamp_min(1.0f);
    const auto norms = pooled.norm(2, 1, /*keepdim=*/true);
    out.narrow(0, static_cast<std::int64_t>(first), rows)
        .copy_(pooled / torch::where(norms > 0, norms, torch::ones_like(norms)));
  }
  return out;
}

}  // namespace g2c::pretrained
