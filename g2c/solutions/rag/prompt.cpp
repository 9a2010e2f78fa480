// Module 17, reference: the system paragraph, the numbered context, the question, the instruction.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/rag/prompt.h"

namespace g2c::rag {

RAGPrompt assemble_rag_prompt(const std::string& question, const std::vector<Chunk>& chunks,
                              const PromptTemplate& prompt_template) {
  if (question.empty()) throw ValueError("assemble_rag_prompt: question must be non-empty");

  std::string context = "Context:";
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    // People cite from 1: chunks[0] is [1].
    context += fmt::format("{}[{}] (source: {})\n{}", i == 0 ? "\n" : "\n\n", i + 1,
                           chunks[i].source(), chunks[i].text());
  }

  std::string text;
  const auto paragraph = [&text](const std::string& part) {
    if (part.empty()) return;
    if (!text.empty()) text += "\n\n";
    text += part;
  };
  paragraph(prompt_template.system);
  paragraph(context);
  paragraph("Question: " + question);
  paragraph(prompt_template.instruction);
  return RAGPrompt{text, question, chunks};
}

}  // namespace g2c::rag
