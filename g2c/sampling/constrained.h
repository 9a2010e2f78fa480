// Module 18 — constrained decoding: sampling that cannot emit invalid output.
//
// Module 18's tool calls almost parse; the parser's answer to a malformed one is to skip it and
// hope. This is the stronger answer: make malformed output unsampleable. At every step the
// generator already holds the whole next-token distribution; a grammar says which tokens keep the
// output well-formed; every other logit becomes -inf before sampling, and invalid continuations
// are not unlikely — they are impossible:
//
//   logits[~allowed] = -inf                               the entire trick
//
// Dimension legend: T tokens so far, V vocab_size. One step of generate_json():
//   allowed = mask_cache[state]                           (V) bool   or allowed_token_mask(...)
//   logits  = model(last max_seq_len ids)[:, -1, :]       (1, V)     moved to the CPU
//   logits  = logits.masked_fill(~allowed, -inf)          (1, V)     BEFORE every warper
//   next    = sample_next_token(logits, ids, sampling)    (1)        module 11: temperature, top-k,
//                                                                    top-p, draw (or argmax)
//   state   = automaton.advance(state, pieces[next])                 stop once it is complete
// Why the mask comes first: top-k keeps the k highest logits wherever they are; before the mask
// all k survivors can be ungrammatical, every logit ends at -inf and softmax gives NaN. Constrain
// the set, then shape the distribution within it. No repetition penalty either: JSON must repeat
// its '"', ':' and '}', and a warper made to fight loops in prose would fight the grammar.
//
// The division of labour is the lesson: the GRAMMAR carries the syntax (the parse rate goes to
// 100%), the MODEL carries the meaning (content quality does not move). A weak model under a
// JSON grammar writes perfectly parseable nonsense; that is the contract, not a failure. It is
// also why a server's `format: "json"` lives in the server: the mask needs the logits, and an API
// that returns text has already thrown them away.
//
// The mask depends on the automaton's state alone, and a generation visits a few dozen distinct
// states, so masks are memoised per state (MaskCache): one sweep over the vocabulary per new
// state, a lookup otherwise. Production systems (llguidance, Outlines, llama.cpp's grammars)
// compile the grammar against the vocabulary ahead of time so that sampling never sweeps at all;
// the same idea with heavy engineering. Over SmolLM2's 49,152 pieces one sweep costs 1-5 ms on one
// core: about 1 where most pieces fail at their first byte, about 5 inside a string, where almost
// every piece is read to its end (exercises/18-tools/constrained_bench.cpp measures it).
//
// Pieces are bytes. pieces[i] is what token i appends to the output, as UTF-8 bytes; a byte-level
// tokenizer has tokens that hold part of a character, and the automaton follows characters across
// pieces (json_prefix_automaton.h). vocab_pieces() builds the list once per tokenizer.
//
//   auto smol = g2c::pretrained::load_pretrained_model("SmolLM2-135M-Instruct");
//   const auto vocab = smol.model->options.vocab_size();                     // 49,152
//   const auto pieces = g2c::pretrained::vocab_pieces(smol.tokenizer, vocab);  // once
//   g2c::pretrained::LlamaLogitsModel model(*smol.model);  // g2c/pretrained/logits_model.h
//   g2c::sampling::MaskCache cache;  // shared by every call with these pieces
//   const auto ids = g2c::sampling::generate_json(
//       model, prompt, pieces,
//       g2c::sampling::GenerateJsonOptions().max_new_tokens(64).temperature(0).mask_cache(&cache));
//
// Provided: LogitsModel and the course model's adapter (g2c/sampling/logits_model.h), vocab_pieces
// and the argument check (constrained_provided.cpp). Yours (constrained.cpp): allowed_token_mask
// and generate_json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "g2c/core/errors.h"
#include "g2c/core/torch.h"

#include "g2c/sampling/generate.h"
#include "g2c/sampling/json_prefix_automaton.h"
#include "g2c/sampling/logits_model.h"
#include "g2c/transformer/kv_cache.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::tokenizer {
class TextTokenizer;
}  // namespace g2c::tokenizer

namespace g2c::sampling {

/// Each token id decoded once, in id order: pieces[i] is what id i appends to the text. Call it
/// once and reuse the list; it is the only tokenizer work constrained decoding needs. For any
/// tokenizer with decode(std::vector<std::int64_t>) -> std::string, the decode of each id alone
/// (right when decoding token by token concatenates to decoding the sequence, as it does for
/// byte-level BPEs that return raw bytes). ValueError for vocab_size < 0. A tokenizer with
/// special tokens (is_special(id)) has an overload of its own beside it, which says what such a
/// token appends (nothing: g2c::pretrained::vocab_pieces for SmolLM2's), so this one refuses it.
/// Example: a tokenizer of the pieces {"\"", "{", "}"} with vocab_size 3 -> {"\"", "{", "}"}.
template <class Tokenizer>
requires(!requires(const Tokenizer& tokenizer) {
  tokenizer.is_special(std::int64_t{0});
}) std::vector<std::string> vocab_pieces(const Tokenizer& tokenizer, std::int64_t vocab_size);

/// The course's tokenizer (module 04): each id's raw bytes — not decode(), which replaces the
/// bytes of a partial character by U+FFFD and so does not concatenate — and "" for the special
/// tokens (<|endoftext|> is a signal, not text, and an empty piece is never sampled).
/// ValueError for vocab_size outside [0, tokenizer.size()].
std::vector<std::string> vocab_pieces(const g2c::tokenizer::TextTokenizer& tokenizer,
                                      std::int64_t vocab_size);

/// Masks by automaton state: (V) bool CPU tensors, allowed_token_mask(automaton, state, pieces).
/// A cache belongs to one list of pieces and one automaton: share it between calls that use both.
using MaskCache = std::unordered_map<JsonState, torch::Tensor, JsonStateHash>;

/// How generate_json() decodes. Builder style:
/// GenerateJsonOptions().max_new_tokens(64).temperature(0.7).top_k(20).mask_cache(&cache).
struct GenerateJsonOptions {
  /// The token budget. When it runs out before the root object closes, the output is a valid
  /// prefix: truncated, never malformed (is_complete on the re-advanced text tells which).
  TORCH_ARG(std::int64_t, max_new_tokens) = 128;
  /// Module 11's temperature, applied after the mask. 0 is greedy: the argmax, no warper and no
  /// draw — but still the mask, which is a constraint, not a warper.
  TORCH_ARG(double, temperature) = 1.0;
  /// Module 11's top-k and top-p, applied after the mask, within the allowed set (nullopt: none).
  TORCH_ARG(std::optional<std::int64_t>, top_k) = std::nullopt;
  TORCH_ARG(std::optional<double>, top_p) = std::nullopt;
  /// A CPU generator for the draws (nullopt: LibTorch's default), shared as in GenerateOptions.
  TORCH_ARG(std::optional<at::Generator>, generator) = std::nullopt;
  /// The grammar; the continuation starts at its initial() whatever the prompt says.
  TORCH_ARG(JsonPrefixAutomaton, automaton) = JsonPrefixAutomaton();

 public:
  /// Where masks are memoised, owned by the caller, who may share it across calls (nullptr: a
  /// cache for this call only). Authoritative: a mask found there is used as it is.
  GenerateJsonOptions& mask_cache(MaskCache* cache) {
    mask_cache_ = cache;
    return *this;
  }
  MaskCache* mask_cache() const { return mask_cache_; }

  /// Module 11's GenerateOptions of these settings (temperature, top-k, top-p, generator; no
  /// repetition penalty, no end id), for sample_next_token.
  GenerateOptions sampling() const;

 private:
  MaskCache* mask_cache_ = nullptr;
};

/// What generate_json() refuses, before any forward pass: a prompt that is not a non-empty 1-D
/// integer tensor or holds ids outside [0, V); pieces that are not one per vocabulary entry
/// ("… has V = 8 logits per position but 7 pieces …"); max_new_tokens < 0; a temperature < 0 or
/// not finite; top_k <= 0; top_p outside (0, 1].
void check_generate_json_arguments(const LogitsModel& model, const torch::Tensor& prompt_ids,
                                   const std::vector<std::string>& pieces,
                                   const GenerateJsonOptions& options);

/// The decode-and-check sweep: which vocabulary entries keep the text a valid prefix? Returns a
/// (V = pieces.size()) bool CPU tensor, true at i when pieces[i] is non-empty and
/// automaton.advance(state, pieces[i]) accepts it whole. A complete state gives all false: the
/// automaton saying "stop". Example: at initial(), pieces {"\"", "{", " ", "x"} -> [0, 1, 1, 0].
torch::Tensor allowed_token_mask(const JsonPrefixAutomaton& automaton, const JsonState& state,
                                 const std::vector<std::string>& pieces);

/// Module 11's generation loop with the grammar's mask spliced in: prompt_ids (T) followed by at
/// most options.max_new_tokens() constrained ids, a 1-D int64 CPU tensor. The continuation, not
/// the prompt, is constrained: every sampled piece keeps it a valid prefix of the grammar, and
/// generation stops the moment the root object closes (or when a cached mask allows nothing). No
/// autograd. ValueError (check_generate_json_arguments) before anything is generated.
/// Example: a model whose logits always prefer '"' over '{', '}', ':', ... at temperature 0
/// writes {"":""} and stops.
torch::Tensor generate_json(LogitsModel& model, const torch::Tensor& prompt_ids,
                            const std::vector<std::string>& pieces,
                            const GenerateJsonOptions& options = GenerateJsonOptions());

// ---------------------------------------------------------------------------------------------

template <class Tokenizer>
requires(!requires(const Tokenizer& tokenizer) {
  tokenizer.is_special(std::int64_t{0});
}) std::vector<std::string> vocab_pieces(const Tokenizer& tokenizer, std::int64_t vocab_size) {
  if (vocab_size < 0) {
    throw ValueError("vocab_pieces: vocab_size must be >= 0 (one piece per token id); got " +
                     std::to_string(vocab_size));
  }
  std::vector<std::string> pieces;
  pieces.reserve(static_cast<std::size_t>(vocab_size));
  for (std::int64_t id = 0; id < vocab_size; ++id) {
    pieces.push_back(tokenizer.decode(std::vector<std::int64_t>{id}));
  }
  return pieces;
}

}  // namespace g2c::sampling
