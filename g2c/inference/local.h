// Module 16 — a Backend over a model in this process: the TransformerLM you trained (module 09),
// its tokenizer (module 04) and your generate() (module 11), behind the one interface that
// modules 17-20 call. The constructor and info() are provided; complete() is yours: encode, time
// the generation, cut the prompt off, decode.
//
//   LocalTransformerBackend backend(model, std::make_shared<TextTokenizerCodec>(tokenizer),
//                                   LocalBackendOptions().with_model_id("ShakespeareLM-1M"));
//   auto result = backend.complete("KING:", CompletionOptions().with_max_new_tokens(40));
//   result.completion, result.completion_tokens, result.tokens_per_second(), …
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/inference/backend.h"
#include "g2c/nn/module.h"
#include "g2c/sampling/generate.h"
#include "g2c/sft/chat_template.h"
#include "g2c/tokenizer/text_tokenizer.h"

namespace g2c::inference {

/// What a local backend needs of a tokenizer: text to ids and back. encode_with_vocab_size (module
/// 13's TokenEncoder) gives ids a model with fewer ids than the tokenizer can read; by default it
/// refuses an id that does not fit.
class TextCodec : public g2c::sft::TokenEncoder {
 public:
  virtual std::string decode(const std::vector<std::int64_t>& ids) const = 0;
  /// The id of a special token such as "<|end|>", if the tokenizer has it.
  virtual std::optional<std::int64_t> special_id(std::string_view /*token*/) const {
    return std::nullopt;
  }
};

/// Module 04's TextTokenizer (the ShakespeareTokenizer, a BPE, characters) as a TextCodec.
class TextTokenizerCodec : public TextCodec {
 public:
  explicit TextTokenizerCodec(g2c::tokenizer::TextTokenizer tokenizer)
      : tokenizer_(std::move(tokenizer)) {}
  std::vector<std::int64_t> encode(std::string_view text) const override {
    return tokenizer_.encode(text);
  }
  std::string decode(const std::vector<std::int64_t>& ids) const override {
    return tokenizer_.decode(ids);
  }
  std::optional<std::int64_t> special_id(std::string_view token) const override;
  const g2c::tokenizer::TextTokenizer& tokenizer() const { return tokenizer_; }

 private:
  g2c::tokenizer::TextTokenizer tokenizer_;
};

/// How the backend generates: prompt_ids (T) int64 on the model's device -> the prompt followed by
/// up to max_new_tokens new ids, (T + n). Module 11's generate() by default; a test passes its own
/// to see what the backend asks for (the Python tests monkeypatch g2c.inference.local.generate).
using GenerateFunction = std::function<torch::Tensor(
    g2c::nn::Module& model, const torch::Tensor& prompt_ids, std::int64_t max_new_tokens,
    const g2c::sampling::GenerateOptions& options)>;

/// Module 11's generate() on a TransformerLM; ValueError for a model of another kind.
torch::Tensor generate_with_transformer(g2c::nn::Module& model, const torch::Tensor& prompt_ids,
                                        std::int64_t max_new_tokens,
                                        const g2c::sampling::GenerateOptions& options);

struct LocalBackendOptions {
  std::string model_id = "g2c-local";               // the checkpoint's label, on every result
  std::optional<std::int64_t> eos_id;               // generation stops after this id
  std::string name = "local";                       // the backend's kind
  nlohmann::json extra = nlohmann::json::object();  // a device, a dtype, a run id, …
  GenerateFunction generate = generate_with_transformer;

  LocalBackendOptions& with_model_id(std::string value) {
    model_id = std::move(value);
    return *this;
  }
  LocalBackendOptions& with_eos_id(std::optional<std::int64_t> value) {
    eos_id = value;
    return *this;
  }
  LocalBackendOptions& with_name(std::string value) {
    name = std::move(value);
    return *this;
  }
  LocalBackendOptions& with_extra(nlohmann::json value) {
    extra = std::move(value);
    return *this;
  }
  LocalBackendOptions& with_generate(GenerateFunction value) {
    generate = std::move(value);
    return *this;
  }
};

class LocalTransformerBackend : public Backend {
 public:
  /// ValueError for a null model or tokenizer, or an empty generate function.
  LocalTransformerBackend(std::shared_ptr<g2c::nn::Module> model,
                          std::shared_ptr<const TextCodec> tokenizer,
                          LocalBackendOptions options = {});

  const BackendInfo& info() const override { return info_; }

  /// Encode the prompt, time generate() on it, decode the new ids only. The result's metadata:
  /// {"sampling": options.to_json(), "eos_id": the end id or null}. ValueError for
  /// options.max_new_tokens <= 0 or a prompt that encodes to no tokens (generate is not called).
  /// Module 16's student function (g2c/inference/local.cpp).
  InferenceResult complete(const std::string& prompt,
                           const CompletionOptions& options = {}) override;

  const std::shared_ptr<g2c::nn::Module>& model() const { return model_; }
  const std::shared_ptr<const TextCodec>& tokenizer() const { return tokenizer_; }
  std::optional<std::int64_t> eos_id() const { return eos_id_; }

 private:
  std::shared_ptr<g2c::nn::Module> model_;
  std::shared_ptr<const TextCodec> tokenizer_;
  std::optional<std::int64_t> eos_id_;
  GenerateFunction generate_;
  BackendInfo info_;
};

/// "LocalTransformerBackend(name='local', model_id='g2c-local')".
std::ostream& operator<<(std::ostream& stream, const LocalTransformerBackend& backend);

}  // namespace g2c::inference
