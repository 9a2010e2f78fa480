// Module 20 — a terminal loop over the assistant: type a question, read the answer.
//
//   (g2c-assistant ready — type /help for commands, blank line to exit)
//   ? What is 12 * 9?
//     -> calculator {"expression":"12 * 9"} = 108
//   12 times 9 is 108.
//     [2 steps, 1 tool calls, no-rag, no-plan]
//   ? /save runs/chat.json
//   (saved to runs/chat.json)
//   ? /quit
//   (exiting)
//
// A turn shows itself while it runs (Assistant::watch): the model's words as they are generated,
// when the backend streams (SmolLM2 in this process, g2c-serve or Ollama over HTTP), and a line
// for each tool call once its result is in. An answer already shown that way is not printed
// again; from a backend that cannot stream (a course model) it appears when the turn ends.
//
// Anything that does not start with "/" is a message for Assistant::chat; a line starting with
// "/" is a command (CLI_HELP lists them). Once the conversation is longer than the history the
// prompt shows (config.max_history_messages), each turn says so: "(the prompt now shows the last
// 20 of 24 messages)". A turn that failed prints "(error: …)" and the loop goes on, and so does
// an error from chat itself (a broken retriever: the line typed is then recorded with the error
// as its answer) or from a command (a /save to a folder that does not exist): a session is never
// lost to one bad turn. Whatever was said is in the conversation, and /save writes it: the
// messages, the config and every turn's stop reason
// and metadata, as JSON, atomically (a crash mid-write leaves the old file or the new one, never
// half of one). Unwritten course code is the exception: its NotImplementedError ends the loop, so
// that a TODO is not mistaken for a model failure.
//
// A plain text loop over any std::istream and std::ostream — the terminal, or a string in a test
// — because when the assistant misbehaves, a flat transcript is the easiest thing to debug.
// Provided.
#pragma once

#include <iostream>
#include <string_view>

#include "g2c/assistant/assistant.h"

namespace g2c::assistant {

/// The commands, as /help prints them.
extern const std::string_view CLI_HELP;

/// The loop: prints a banner, then for each line read from `in`: a command, or a chat turn whose
/// text and tool calls as they happen, answer (unless its text already showed it; or "(error:
/// …)", or "(stuck — <reason>; <tool> returned: <its last result>)") and a footer of its metadata
/// go to `out`. The assistant is watched while the loop runs and not after.
/// Each input line is preceded by `prompt` on `out`. Ends on /exit or /quit, a blank line, or the
/// end of the input (a last line without a newline is still sent). Throws only a
/// NotImplementedError (unwritten course code); every other error is printed and the loop goes on.
void run_cli(Assistant& assistant, std::istream& in = std::cin, std::ostream& out = std::cout,
             std::string_view prompt = "? ");

}  // namespace g2c::assistant
