#include "g2c/sampling/text_generation.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/artifacts.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::sampling {

using g2c::tokenizer::TextTokenizer;

torch::Tensor TextModel::encode(std::string_view text) const {
  return torch::tensor(tokenizer.encode(text), torch::kLong);
}

TextModel load_text_model(const std::string& name_or_dir, torch::Device device) {
  auto artifact = g2c::pretraining::load_model_artifact(name_or_dir, device);
  const auto& tokenizer_name = artifact.summary.tokenizer_artifact;
  if (tokenizer_name.empty()) {
    throw ValueError(fmt::format(
        "the model artifact in {} names no tokenizer artifact (it was trained on characters, "
        "because artifacts/tokenizers/ShakespeareTokenizer did not exist then). Build the "
        "tokenizer with scripts/make_tokenizer_artifacts.sh build/reference and train again",
        artifact.dir.string()));
  }
  const auto vocab_size = artifact.model->vocab_size;  // model.pt's, the model's own
  auto bpe = std::make_shared<const g2c::tokenizer::BPETokenizer>(
      g2c::tokenizer::load_tokenizer_artifact(tokenizer_name).tokenizer);
  if (static_cast<std::int64_t>(bpe->vocab_size()) < vocab_size) {
    throw ValueError(fmt::format(
        "the model in {} has {} token ids but the tokenizer artifact {} only {}: it is not the "
        "tokenizer the model was trained with",
        artifact.dir.string(), vocab_size, tokenizer_name, bpe->vocab_size()));
  }
  auto tokenizer =
      TextTokenizer::from_bpe(bpe, static_cast<std::size_t>(vocab_size), tokenizer_name);
  return {std::move(artifact), std::move(tokenizer)};
}

std::vector<std::int64_t> unreadable_token_ids(const TextTokenizer& tokenizer) {
  std::vector<std::int64_t> ids;
  for (std::int64_t id = 0; id < tokenizer.size(); ++id) {
    std::string text;
    if (const auto* bpe = tokenizer.bpe()) {
      const auto token = static_cast<g2c::tokenizer::TokenId>(id);
      if (id >= 256 && id < static_cast<std::int64_t>(bpe->base_vocab_size())) {
        ids.push_back(id);  // a special token
        continue;
      }
      text = bpe->token_bytes(token);
    } else {
      text = tokenizer.decode({id});
    }
    const bool control = std::any_of(text.begin(), text.end(), [](char c) {
      const auto byte = static_cast<unsigned char>(c);
      return (byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7F;
    });
    if (control || !g2c::tokenizer::is_valid_utf8(text)) ids.push_back(id);
  }
  return ids;
}

SuppressTokens::SuppressTokens(g2c::transformer::TransformerLMImpl& model,
                               const std::vector<std::int64_t>& ids)
    : bias_(model.head_bias) {
  torch::NoGradGuard no_grad;
  saved_ = bias_.detach().clone();
  if (!ids.empty()) {
    const auto index = torch::tensor(ids, torch::kLong).to(bias_.device());
    bias_.index_fill_(/*dim=*/0, index, -std::numeric_limits<float>::infinity());
  }
}

SuppressTokens::~SuppressTokens() {
  torch::NoGradGuard no_grad;
  bias_.copy_(saved_);
}

std::string TextStream::push(std::int64_t id) {
  if (const auto* bpe = tokenizer_.bpe()) {
    if (id < 0 || id >= tokenizer_.size()) {
      throw ValueError(
          fmt::format("token id {} is outside the tokenizer's [0, {})", id, tokenizer_.size()));
    }
    return bytes_.push(bpe->token_bytes(static_cast<g2c::tokenizer::TokenId>(id)));
  }
  return bytes_.push(tokenizer_.decode({id}));
}

std::string TextStream::finish() {
  return bytes_.finish();
}

LongGeneration generate_long_cached(g2c::transformer::TransformerLMImpl& model,
                                    const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
                                    const GenerateOptions& options,
                                    const std::function<void(std::int64_t)>& on_token) {
  if (model.max_seq_len < 2) {
    throw ValueError(fmt::format(
        "generate_long_cached needs max_seq_len >= 2 (one position for the context, one for a new "
        "token); the model has {}",
        model.max_seq_len));
  }
  const std::int64_t window = model.max_seq_len / 2;
  LongGeneration run;
  run.ids = prompt_ids.to(torch::kCPU, torch::kLong).flatten();
  const auto last = [](const torch::Tensor& ids, std::int64_t count) {
    return ids.narrow(0, ids.size(0) - count, count);
  };
  // generate_cached checks the prompt itself (empty, ids outside the vocabulary, ...).
  auto context = run.ids.size(0) >= model.max_seq_len ? last(run.ids, window) : run.ids;
  while (run.new_tokens < max_new_tokens) {
    const auto count =
        std::min(max_new_tokens - run.new_tokens, model.max_seq_len - context.size(0));
    const auto out = generate_cached(model, context, count, options, on_token);
    const auto produced = out.size(0) - context.size(0);
    run.ids = torch::cat({run.ids, out.narrow(0, context.size(0), produced)});
    run.new_tokens += produced;
    const bool stopped_at_eos =
        options.eos_id() && produced > 0 && out[-1].item<std::int64_t>() == *options.eos_id();
    if (stopped_at_eos || produced < count) break;
    if (run.new_tokens < max_new_tokens) {
      context = last(run.ids, window);
      ++run.cache_restarts;
    }
  }
  return run;
}

std::string for_terminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7F) {
      // U+2400 + byte (U+2421 for DEL) in UTF-8: E2 90 80+byte, or E2 90 A1.
      const unsigned char picture = byte == 0x7F ? 0xA1 : static_cast<unsigned char>(0x80 + byte);
      out += "\xE2\x90";
      out += static_cast<char>(picture);
    } else {
      out += c;
    }
  }
  return out;
}

bool stdout_is_terminal() {
  return ::isatty(::fileno(stdout)) == 1;
}

}  // namespace g2c::sampling
