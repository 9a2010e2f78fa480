// Module 13, implemented for you — talking to a model through the chat template: the prompt of a
// conversation fitted into the model's context, and a reply generated until the model writes
// <|end|>. What g2c-chat and the exercises of modules 13–15 share.
//
//   auto text_model = g2c::sampling::load_text_model("ShakespeareLM-1M-SFT");
//   const auto reply = g2c::sft::chat_reply(*text_model.artifact.model, text_model.tokenizer,
//                                           {{"user", "Greet me as a courtier would."}});
//   reply.text      // "Good morrow, my lord; ..."   (the end marker not included)
//   reply.stopped   // true when the model wrote <|end|> within max_new_tokens
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/sampling/generate.h"
#include "g2c/sft/chat_template.h"
#include "g2c/tokenizer/text_tokenizer.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::sft {

struct ChatReplyOptions {
  TORCH_ARG(std::int64_t, max_new_tokens) = 60;
  /// How each token is drawn: greedy (temperature 0) by default, which is what scoring wants. The
  /// end marker is set by chat_reply itself.
  TORCH_ARG(g2c::sampling::GenerateOptions,
            sampling) = g2c::sampling::GenerateOptions().temperature(0.0);
};

struct ChatReply {
  std::string text;                   // the reply, without the end marker
  std::vector<std::int64_t> ids;      // its token ids, without the end marker
  bool stopped = false;               // the model wrote <|end|> within max_new_tokens
  std::int64_t dropped_messages = 0;  // oldest messages left out so that the prompt fits
  bool prompt_cut = false;            // the last user turn alone did not fit: its start was cut
};

/// The id of ChatTemplate::END in `tokenizer`; ValueError when the tokenizer does not keep it as
/// one id (a character tokenizer, a tokenizer without the course's special tokens).
std::int64_t end_token_id(const g2c::tokenizer::TextTokenizer& tokenizer);

/// The model's reply to `messages` (a conversation ending with a user turn). The prompt is
/// ChatTemplate::generation_prompt of the messages; while it and max_new_tokens do not fit in
/// max_seq_len, whole messages are left out from the oldest (a user turn with its reply), and if
/// the last user turn alone is too long its start is cut. Generation (the KV cache, `options`'
/// sampling with the end marker as eos) stops at <|end|> or after max_new_tokens. `on_text` sees
/// the reply's text as it arrives (valid UTF-8 pieces; the end marker never). Autograd off; the
/// model is used in eval mode and put back. ValueError for no messages, max_new_tokens < 1 or >=
/// max_seq_len, and end_token_id's.
ChatReply chat_reply(g2c::transformer::TransformerLMImpl& model,
                     const g2c::tokenizer::TextTokenizer& tokenizer,
                     const std::vector<Message>& messages,
                     const ChatReplyOptions& options = ChatReplyOptions(),
                     const std::function<void(const std::string&)>& on_text = {});

/// chat_reply for many conversations at once, greedily: the replies chat_reply gives one by one
/// with temperature 0 (up to rounding: a near-tie between two tokens may break the other way in
/// a batch), at a fraction of the time. Conversations whose fitted prompts have the same length
/// are generated together, at most `batch_size` at a time, through one KV cache: the same
/// positions as alone, no padding. ValueError for a sampling temperature other than 0 (sampled
/// replies depend on the order of the draws), batch_size < 1, and what chat_reply refuses.
std::vector<ChatReply> chat_replies(g2c::transformer::TransformerLMImpl& model,
                                    const g2c::tokenizer::TextTokenizer& tokenizer,
                                    const std::vector<std::vector<Message>>& conversations,
                                    const ChatReplyOptions& options = ChatReplyOptions(),
                                    std::int64_t batch_size = 64);

}  // namespace g2c::sft
