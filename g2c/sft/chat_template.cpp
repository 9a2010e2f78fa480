// Module 13 — your work: rendering a conversation, and the mask of what the assistant says.
#include "g2c/sft/chat_template.h"

#include "g2c/core/errors.h"

namespace g2c::sft {

std::string ChatTemplate::render(const std::vector<Message>& messages) const {
  // TODO: The conversation as one string, turn after turn: a user turn is USER + "\n" + content +
  // "\n"; an assistant turn is ASSISTANT + "\n" + content + END (no newline after END: it is the
  // stop token). Check the messages first (check_messages: none, or an unknown role, is a
  // ValueError). Operations: a loop over the messages, std::string's +=.
  // Hints, one step at a time: scripts/hint.sh 13 ChatTemplate::render
  throw g2c::todo("ChatTemplate::render", "g2c/sft/chat_template.cpp", "13");
}

SFTExample ChatTemplate::render_with_mask(const std::vector<Message>& messages,
                                          const TokenEncoder& tokenizer,
                                          std::optional<std::int64_t> vocab_size) const {
  // TODO: The same turns as render, encoded piece by piece with
  // encode_template_chunk(tokenizer, piece, vocab_size) and appended to ids, with one mask entry
  // per id: a user turn (USER + "\n" + content + "\n") all 0; an assistant turn in two pieces,
  // its prefix ASSISTANT + "\n" (0: prompt, the model never writes it) and then content + END
  // (1: the reply, END included, or the model never learns to stop). ids and mask have the same
  // length. Check the messages first (check_messages).
  // Operations: vector::insert, vector::resize (or insert(n, value)).
  // Hints, one step at a time: scripts/hint.sh 13 ChatTemplate::render_with_mask
  throw g2c::todo("ChatTemplate::render_with_mask", "g2c/sft/chat_template.cpp", "13");
}

}  // namespace g2c::sft
