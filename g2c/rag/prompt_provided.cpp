// Module 17, provided: a retriever's results as a prompt, in their order.
#include "g2c/rag/prompt.h"

namespace g2c::rag {

RAGPrompt assemble_rag_prompt(const std::string& question,
                              const std::vector<RetrievedChunk>& retrieved,
                              const PromptTemplate& prompt_template) {
  std::vector<Chunk> chunks;
  chunks.reserve(retrieved.size());
  for (const auto& result : retrieved) chunks.push_back(result.chunk);
  return assemble_rag_prompt(question, chunks, prompt_template);
}

}  // namespace g2c::rag
