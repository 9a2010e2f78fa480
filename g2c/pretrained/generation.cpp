#include "g2c/pretrained/generation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/pretrained/lora.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::pretrained {

PretrainedModel load_pretrained_model(const std::string& name, const LoadOptions& options,
                                      const std::optional<std::filesystem::path>& adapter) {
  const auto path = pretrained_model_file(name);
  const auto file = GGUFFile::open(path);
  PretrainedModel pretrained{
      pretrained_model_name(name), nullptr, PretrainedTokenizer::from_gguf(file), {}};
  pretrained.model = load_llama(file, &pretrained.report, options);
  if (adapter) apply_llama_adapter(pretrained, *adapter);
  return pretrained;
}

std::string PretrainedTextStream::push(std::int64_t id) {
  return bytes_.push(tokenizer_->decode({id}));
}

std::string PretrainedTextStream::finish() {
  return bytes_.finish();
}

namespace {

/// Logits with every token less likely than min_p times the most likely one at -inf: in
/// probabilities p_i < min_p * p_max, that is logit_i < max_logit + log(min_p). (1, V) -> (1, V).
torch::Tensor keep_min_p(const torch::Tensor& logits, double min_p) {
  if (min_p <= 0) return logits;
  const auto floor = std::get<0>(logits.max(-1, true)) + std::log(min_p);  // (1, 1)
  return logits.masked_fill(logits < floor, -std::numeric_limits<double>::infinity());
}

/// OpenAI's frequency and presence penalties on (1, V) logits from the ids in `window` (W).
torch::Tensor penalize_counts(const torch::Tensor& logits, const torch::Tensor& window,
                              double frequency, double presence) {
  if ((frequency == 0 && presence == 0) || window.numel() == 0) return logits;
  const auto counts = torch::bincount(window, {}, logits.size(-1)).to(logits.scalar_type());  // (V)
  return logits - frequency * counts - presence * (counts > 0).to(logits.scalar_type());
}

}  // namespace

PretrainedGeneration generate_pretrained(PretrainedModel& pretrained,
                                         const std::vector<std::int64_t>& prompt,
                                         std::int64_t max_new_tokens,
                                         const g2c::sampling::GenerateOptions& options,
                                         const std::function<bool(std::int64_t)>& on_token,
                                         const PretrainedDecoding& decoding) {
  auto& model = *pretrained.model;
  const auto context = model.options.max_seq_len();
  const auto length = static_cast<std::int64_t>(prompt.size());
  if (prompt.empty() || max_new_tokens <= 0 || length >= context) {
    throw ValueError(fmt::format(
        "generate_pretrained needs a prompt of 1 to {} tokens and max_new_tokens > 0; got {} "
        "tokens and max_new_tokens {}",
        context - 1, length, max_new_tokens));
  }
  if (decoding.prefill_chunk() <= 0 || decoding.min_p() < 0 || decoding.min_p() > 1 ||
      decoding.repeat_last_n() < -1) {
    throw ValueError(fmt::format(
        "generate_pretrained: prefill_chunk must be > 0, min_p in [0, 1] and repeat_last_n >= -1; "
        "got {}, {} and {}",
        decoding.prefill_chunk(), decoding.min_p(), decoding.repeat_last_n()));
  }
  torch::NoGradGuard no_grad;
  const auto room = std::min(max_new_tokens, context - length);
  auto cache = model.empty_kv_cache(length + room);
  auto history = torch::tensor(prompt, torch::kLong);  // (T), for the repetition penalty
  // The prompt a chunk at a time; only the last position's logits are needed.
  torch::Tensor logits;  // (1, V)
  for (std::int64_t start = 0; start < length; start += decoding.prefill_chunk()) {
    const auto chunk = history.narrow(0, start, std::min(decoding.prefill_chunk(), length - start));
    logits = model.head(model.hidden_states(chunk.unsqueeze(0), &cache).select(1, -1));
  }
  const auto window = [&] {  // the ids the repetition penalty sees
    const auto n = decoding.repeat_last_n();
    if (n < 0 || n >= history.size(0)) return history;
    return history.narrow(0, history.size(0) - n, n);
  };
  auto sampling = options;
  sampling.repetition_penalty(1.0);  // applied below, before sample_next_token
  PretrainedGeneration generation;
  const auto eos = pretrained.tokenizer.eos_id();
  for (std::int64_t step = 0; step < room; ++step) {
    // The penalties come first, here, so that they also steer greedy decoding (module 11's
    // sample_next_token applies its repetition penalty only when it samples), as in Ollama.
    const auto seen = window();
    auto adjusted = logits;
    if (options.repetition_penalty() != 1.0 && seen.numel() > 0) {
      adjusted =
          g2c::sampling::apply_repetition_penalty(adjusted, seen, options.repetition_penalty());
    }
    adjusted = penalize_counts(keep_min_p(adjusted, decoding.min_p()), seen,
                               decoding.frequency_penalty(), decoding.presence_penalty());
    const auto next = g2c::sampling::sample_next_token(adjusted, seen, sampling);  // (1)
    const auto id = next.item<std::int64_t>();
    const bool go_on = !on_token || on_token(id);
    if (id == eos) {
      generation.stopped = true;
      break;
    }
    generation.ids.push_back(id);
    if (!go_on) {
      generation.cancelled = true;
      break;
    }
    if (step + 1 == room) break;
    history = torch::cat({history, next});
    logits = model.forward(next.view({1, 1}), cache).select(1, -1);
  }
  return generation;
}

PretrainedGeneration generate_pretrained_text(
    PretrainedModel& pretrained, const std::vector<std::int64_t>& prompt,
    std::int64_t max_new_tokens, const g2c::sampling::GenerateOptions& options,
    const std::function<bool(const std::string&)>& on_text, const PretrainedDecoding& decoding,
    const std::function<bool()>& keep_going) {
  PretrainedTextStream stream(pretrained.tokenizer);
  const auto eos = pretrained.tokenizer.eos_id();
  bool wanted = true;
  auto generation = generate_pretrained(
      pretrained, prompt, max_new_tokens, options,
      [&](std::int64_t id) {
        if (id != eos && on_text) {
          if (const auto text = stream.push(id); !text.empty()) wanted = on_text(text);
        }
        return wanted && (!keep_going || keep_going());
      },
      decoding);
  if (const auto rest = stream.finish(); !rest.empty() && on_text && wanted) on_text(rest);
  return generation;
}

FittedChat fit_chat(const PretrainedTokenizer& tokenizer, std::vector<ChatMessage>& turns,
                    std::size_t step, const std::function<bool(std::int64_t)>& fits) {
  FittedChat fitted{tokenizer.encode(tokenizer.format_chat(turns, true))};
  const std::size_t first = !turns.empty() && turns.front().role == "system" ? 1 : 0;
  while (!fits(static_cast<std::int64_t>(fitted.ids.size())) && turns.size() > first + 1) {
    const auto drop = std::min(step, turns.size() - first - 1);
    turns.erase(turns.begin() + static_cast<std::ptrdiff_t>(first),
                turns.begin() + static_cast<std::ptrdiff_t>(first + drop));
    fitted.dropped_messages += static_cast<std::int64_t>(drop);
    fitted.ids = tokenizer.encode(tokenizer.format_chat(turns, true));
  }
  return fitted;
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
  // Oldest turns go first, a user turn with its reply.
  auto fitted = fit_chat(pretrained.tokenizer, kept, 2,
                         [&](std::int64_t length) { return length + max_new_tokens <= context; });
  const auto prompt = std::move(fitted.ids);
  reply.dropped_messages = fitted.dropped_messages;
  if (static_cast<std::int64_t>(prompt.size()) >= context) {
    throw ValueError(
        fmt::format("the last message alone is {} tokens, more than {}'s context of "
                    "{}; shorten it",
                    prompt.size(), pretrained.name, context));
  }
  reply.prompt_tokens = static_cast<std::int64_t>(prompt.size());
  const auto generation = generate_pretrained_text(
      pretrained, prompt, std::min(max_new_tokens, context - reply.prompt_tokens), options,
      [&](const std::string& text) {
        if (on_text) on_text(text);
        return true;
      });
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

namespace g2c::pretrained {

g2c::sft::SFTExample chat_sft_example(const PretrainedTokenizer& tokenizer,
                                      const std::vector<ChatMessage>& turns) {
  if (turns.empty()) throw ValueError("chat_sft_example: the conversation is empty");
  g2c::sft::SFTExample example;
  // Appends the ids that `text` (a longer prefix of the rendering) adds, masked with `mask`.
  const auto extend = [&](const std::string& text, std::int64_t mask) {
    const auto ids = tokenizer.encode(text);
    if (ids.size() < example.ids.size() ||
        !std::equal(example.ids.begin(), example.ids.end(), ids.begin())) {
      throw ValueError(
          "chat_sft_example: the tokenizer merges tokens across a turn's boundary in this "
          "template; the turns cannot be masked one by one");
    }
    example.ids.insert(example.ids.end(),
                       ids.begin() + static_cast<std::ptrdiff_t>(example.ids.size()), ids.end());
    example.mask.resize(example.ids.size(), mask);
  };
  std::vector<ChatMessage> prefix;
  for (const auto& turn : turns) {
    const auto before = prefix.empty() ? std::string() : tokenizer.format_chat(prefix, false);
    prefix.push_back(turn);
    const auto after = tokenizer.format_chat(prefix, false);  // before + this turn (+ system)
    if (turn.role != "assistant") {
      extend(after, 0);
      continue;
    }
    // "<|im_start|>assistant\n" is the prompt; the content and <|im_end|> the reply; "\n" not.
    constexpr std::string_view kHeader = "<|im_start|>assistant\n";
    const auto header_end = after.find(kHeader, before.size()) + kHeader.size();
    const auto reply_end = after.rfind("<|im_end|>") + std::string_view("<|im_end|>").size();
    extend(after.substr(0, header_end), 0);
    extend(after.substr(0, reply_end), 1);
    extend(after, 0);
  }
  return example;
}

}  // namespace g2c::pretrained
