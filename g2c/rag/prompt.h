// Module 17 — the retrieved chunks and the question, spliced into one prompt. The template does
// three jobs: it tells the model which text is context (not the user speaking), it numbers the
// chunks so the answer can cite them, and it says what to do when the context has no answer:
//
//   {system}
//
//   Context:
//   [1] (source: {chunks[0].source})
//   {chunks[0].text}
//
//   [2] (source: {chunks[1].source})
//   {chunks[1].text}
//
//   Question: {question}
//
//   {instruction}
//
// Citations count from 1, as people cite: chunks[0] is [1]. An empty system or instruction leaves
// its paragraph out (no blank line in its place); no chunks leave "Context:" alone on its line. A
// chat model gets this text as its user turn — the chat template wraps it afterwards. Plain C++,
// no LibTorch. RAGPrompt and the two defaults are provided; assemble_rag_prompt is yours
// (g2c/rag/prompt.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "g2c/rag/chunk.h"

namespace g2c::rag {

/// The opening paragraph unless told otherwise: answer from the context, cite it by number.
inline constexpr std::string_view DEFAULT_SYSTEM =
    "You are a helpful assistant. Answer the user's question using only the context below, and "
    "cite the context items you use by their numbers in brackets, such as [1] or [2].";

/// The closing paragraph unless told otherwise: the guard against answers the context lacks.
inline constexpr std::string_view DEFAULT_INSTRUCTION =
    "If the context does not hold what the question asks for, answer: \"I don't know based on "
    "the provided context.\" Do not add facts the context does not state.";

/// An assembled prompt: the text to send, the question it asks and the chunks it holds, in the
/// order of their citations (chunks[0] is [1]). A value: fixed once made.
struct RAGPrompt {
  const std::string text;
  const std::string question;
  const std::vector<Chunk> chunks;
};

/// assemble_rag_prompt's two paragraphs around the context and the question.
struct PromptTemplate {
  std::string system = std::string(DEFAULT_SYSTEM);            // "": no opening paragraph
  std::string instruction = std::string(DEFAULT_INSTRUCTION);  // "": no closing paragraph
};

/// Your work. The prompt above, paragraphs joined by one blank line ("\n\n"), each chunk as
/// "[n] (source: …)\n" and its text, chunks separated by a blank line too. ValueError for an
/// empty question.
/// Example: assemble_rag_prompt("Q?", {}, {"", ""}).text == "Context:\n\nQuestion: Q?".
RAGPrompt assemble_rag_prompt(const std::string& question, const std::vector<Chunk>& chunks,
                              const PromptTemplate& prompt_template = {});

/// The same for a retriever's results, in their order (what RAGPipeline passes). Provided.
RAGPrompt assemble_rag_prompt(const std::string& question,
                              const std::vector<RetrievedChunk>& retrieved,
                              const PromptTemplate& prompt_template = {});

}  // namespace g2c::rag
