// Module 17, implemented for you — retrieval-augmented generation end to end:
//
//   question -> retriever -> top-k chunks -> assemble_rag_prompt -> prompt
//                                                                      |
//   RAGAnswer <- the completion, with its chunks <- backend.complete(prompt)
//
// Any Retriever (dense or BM25) and any Backend of module 16 (SmolLM2 in this process, g2c-serve,
// Ollama). The answer keeps both halves side by side — the model's text and the chunks it was
// given, in citation order — so a reader can check a claim against the [n] it cites, and an
// evaluation can score retrieval and answer apart. Plain C++, no LibTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/inference/backend.h"
#include "g2c/rag/prompt.h"
#include "g2c/rag/retriever.h"

namespace g2c::rag {

/// One answered question. `retrieved[i].chunk` is the prompt's citation [i + 1]; `metadata` holds
/// {"k", "n_retrieved", "backend_name", "backend_model_id"} and whatever a caller adds (an
/// evaluation's verdict).
struct RAGAnswer {
  std::string question;
  std::string answer;  // the backend's completion, as it came
  std::vector<RetrievedChunk> retrieved;
  RAGPrompt prompt;
  g2c::inference::InferenceResult inference;
  nlohmann::json metadata = nlohmann::json::object();
};

/// answer()'s settings: how many chunks, and the sampling, forwarded to the backend as they are.
/// Near-greedy by default: the answer should come from the chunks, not from invention.
struct AnswerOptions {
  std::int64_t k = 5;
  std::int64_t max_new_tokens = 256;
  double temperature = 0.2;
  std::optional<std::int64_t> top_k = std::nullopt;
  std::optional<double> top_p = std::nullopt;
};

class RAGPipeline {
 public:
  /// ValueError for a null retriever or backend.
  RAGPipeline(std::shared_ptr<Retriever> retriever,
              std::shared_ptr<g2c::inference::Backend> backend,
              PromptTemplate prompt_template = {});

  const std::shared_ptr<Retriever>& retriever() const { return retriever_; }
  const std::shared_ptr<g2c::inference::Backend>& backend() const { return backend_; }

  /// Retrieves options.k chunks for `question`, assembles the prompt, completes it. ValueError for
  /// an empty question or k <= 0.
  RAGAnswer answer(const std::string& question, const AnswerOptions& options = {});

  std::string describe() const;

 private:
  std::shared_ptr<Retriever> retriever_;
  std::shared_ptr<g2c::inference::Backend> backend_;
  PromptTemplate prompt_template_;
};

}  // namespace g2c::rag
