// Module 17 — your work: the question and its chunks as one numbered-citation prompt.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/rag/prompt.h"

namespace g2c::rag {

RAGPrompt assemble_rag_prompt(const std::string& question, const std::vector<Chunk>& chunks,
                              const PromptTemplate& prompt_template) {
  // TODO: The question and its chunks as one prompt the model can cite from. ValueError for an
  // empty question. The context block is "Context:" followed, for each chunk, by
  // "[n] (source: <source>)\n" and its text, n counting from 1 so that the model's "[2]" is
  // chunks[1]; the first entry comes after one "\n", each later one after a blank line ("\n\n").
  // The paragraphs system, context block, "Question: <question>", instruction are joined with
  // "\n\n", a system or instruction that is empty left out (no blank line in its place).
  // Return RAGPrompt{text, question, chunks}.
  // Hints, one step at a time: scripts/hint.sh 17 assemble_rag_prompt
  throw g2c::todo("assemble_rag_prompt", "g2c/rag/prompt.cpp", "17");
}

}  // namespace g2c::rag
