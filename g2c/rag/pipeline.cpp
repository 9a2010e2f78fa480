// Module 17, provided: retrieve, assemble, complete.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/rag/pipeline.h"

namespace g2c::rag {

RAGPipeline::RAGPipeline(std::shared_ptr<Retriever> retriever,
                         std::shared_ptr<g2c::inference::Backend> backend,
                         PromptTemplate prompt_template)
    : retriever_(std::move(retriever)),
      backend_(std::move(backend)),
      prompt_template_(std::move(prompt_template)) {
  if (!retriever_) throw ValueError("RAGPipeline requires a retriever (got a null pointer)");
  if (!backend_) throw ValueError("RAGPipeline requires a backend (got a null pointer)");
}

RAGAnswer RAGPipeline::answer(const std::string& question, const AnswerOptions& options) {
  if (question.empty()) throw ValueError("RAGPipeline.answer: question must be a non-empty string");
  if (options.k <= 0)
    throw ValueError(fmt::format("RAGPipeline.answer: k must be > 0, got {}", options.k));

  auto retrieved = retriever_->retrieve(question, options.k);
  auto prompt = assemble_rag_prompt(question, retrieved, prompt_template_);
  auto inference = backend_->complete(prompt.text, g2c::inference::CompletionOptions()
                                                       .with_max_new_tokens(options.max_new_tokens)
                                                       .with_temperature(options.temperature)
                                                       .with_top_k(options.top_k)
                                                       .with_top_p(options.top_p));
  const auto& info = backend_->info();
  nlohmann::json metadata = {{"k", options.k},
                             {"n_retrieved", retrieved.size()},
                             {"backend_name", info.name()},
                             {"backend_model_id", info.model_id()}};
  auto answer_text = inference.completion;
  return RAGAnswer{question,          std::move(answer_text), std::move(retrieved),
                   std::move(prompt), std::move(inference),   std::move(metadata)};
}

std::string RAGPipeline::describe() const {
  return fmt::format("RAGPipeline(retriever={}, backend={}/{})", retriever_->describe(),
                     backend_->info().name(), backend_->info().model_id());
}

}  // namespace g2c::rag
