// Exercise 17 — ask the course. An index over this course's own documents (the top-level README
// and every module README: data/questions.json names them), and fifty questions whose answers are
// facts of this course that no pretrained model can know: a parameter count, what a command
// prints on day one, a measured speed. Two measurements:
//   retrieval  recall@k of the hash, BM25 and dense retrievers: does a chunk holding the answer's
//              evidence come back in the top k?
//   answers    SmolLM2-135M-Instruct answers each question closed-book, with the top k chunks of
//              each retriever, and with the one chunk that holds the evidence (the oracle: how well
//              the model reads when retrieval is perfect); a reply is right when it contains the
//              answer or an alias (module 15's contains_match), with 95 % intervals.
// The dense index (SmolLM2's mean-pooled states) is saved under artifacts/rag/ and reused while
// the documents and chunking are unchanged. Writes ask_the_course.json and two figures.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/proportion.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/eval/match.h"
#include "g2c/inference/benchmark.h"
#include "g2c/inference/ollama.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/pretraining/build_info.h"
#include "g2c/rag/rag.h"

namespace exercise_17_ask_the_course {

namespace {

namespace fs = std::filesystem;
using g2c::exercises::Proportion;
using g2c::rag::Chunk;

struct Question {
  std::string id, question, answer, source, evidence;
  std::vector<std::string> references;  // the answer and its aliases
};

struct Corpus {
  std::vector<Chunk> chunks;
  std::vector<std::vector<std::int64_t>>
      relevant;  // per question: indices of chunks with its evidence
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<Question> read_questions(const nlohmann::json& data) {
  std::vector<Question> questions;
  for (const auto& q : data.at("questions")) {
    Question question{q.at("id"),     q.at("question"), q.at("answer"),
                      q.at("source"), q.at("evidence"), {}};
    question.references.push_back(question.answer);
    for (const auto& alias : q.at("aliases")) question.references.push_back(alias);
    questions.push_back(std::move(question));
  }
  return questions;
}

/// The documents chunked, and for each question the chunks that hold its evidence: those whose
/// text contains it whole, or — when a chunk boundary cuts it — those that overlap its span.
Corpus build_corpus(const fs::path& root, const std::vector<std::string>& documents,
                    const std::vector<Question>& questions, std::int64_t size,
                    std::int64_t overlap) {
  Corpus corpus;
  std::map<std::string, std::string> text_of;
  std::map<std::string, std::vector<std::size_t>> offsets_of;  // each character's byte offset
  for (const auto& document : documents) {
    text_of[document] = g2c::read_file(root / document);
    offsets_of[document] = g2c::rag::character_offsets(text_of[document]);
    g2c::rag::ChunkOptions options;
    options.source = document;
    options.chunk_size = size;
    options.chunk_overlap = overlap;
    for (auto& chunk : g2c::rag::chunk_text(text_of[document], options)) {
      corpus.chunks.push_back(std::move(chunk));
    }
  }
  for (const auto& q : questions) {
    const auto found = text_of.find(q.source);
    if (found == text_of.end())
      throw g2c::ValueError("question " + q.id + ": unknown source " + q.source);
    const auto at = found->second.find(q.evidence);
    if (at == std::string::npos) {
      throw g2c::ValueError(
          fmt::format("question {}: its evidence is no longer in {}; run "
                      "scripts/check_questions.py and update the question",
                      q.id, q.source));
    }
    // The evidence's span in characters.
    const auto& offsets = offsets_of[q.source];
    const auto first = std::lower_bound(offsets.begin(), offsets.end(), at) - offsets.begin();
    const auto last =
        std::lower_bound(offsets.begin(), offsets.end(), at + q.evidence.size()) - offsets.begin();
    std::vector<std::int64_t> whole, touching;
    for (std::size_t i = 0; i < corpus.chunks.size(); ++i) {
      const auto& c = corpus.chunks[i];
      if (c.source() != q.source) continue;
      if (c.start() <= first && last <= c.end()) whole.push_back(static_cast<std::int64_t>(i));
      if (c.start() < last && first < c.end()) touching.push_back(static_cast<std::int64_t>(i));
    }
    corpus.relevant.push_back(whole.empty() ? touching : whole);
  }
  return corpus;
}

/// The dense index for these chunks: read from `path` when it holds exactly these chunks from
/// this embedder, else embedded now (with progress) and saved.
std::shared_ptr<g2c::rag::VectorStore> dense_store(const fs::path& path,
                                                   g2c::rag::Embedder& embedder,
                                                   const Corpus& corpus, bool quiet,
                                                   double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  if (fs::exists(path)) {
    try {
      auto index = g2c::rag::load_index(path);
      if (index.embedder == embedder.spec() && index.store->chunks() == corpus.chunks) {
        seconds = 0;
        fmt::print("dense index: read {} ({} chunks)\n", path.string(), index.store->size());
        return index.store;
      }
    } catch (const g2c::ValueError& error) {
      fmt::print("dense index: {} cannot be used ({}); embedding again\n", path.string(),
                 error.what());
    }
  }
  auto store = std::make_shared<g2c::rag::VectorStore>(embedder.dim());
  g2c::Progress progress("embedding chunks", static_cast<std::int64_t>(corpus.chunks.size()),
                         !quiet);
  const std::size_t step = 16;
  for (std::size_t first = 0; first < corpus.chunks.size(); first += step) {
    const auto last = std::min(corpus.chunks.size(), first + step);
    const std::vector<Chunk> chunks(corpus.chunks.begin() + static_cast<std::ptrdiff_t>(first),
                                    corpus.chunks.begin() + static_cast<std::ptrdiff_t>(last));
    store->add(chunks, embedder.embed(g2c::rag::chunk_texts(chunks)));
    progress.update(static_cast<std::int64_t>(last));
  }
  progress.finish();
  seconds = seconds_since(start);
  g2c::rag::save_index(path, *store, embedder);
  fmt::print("dense index: {} chunks embedded in {:.1f} s, saved to {}\n", store->size(), seconds,
             path.string());
  return store;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 17: fifty questions about this course, answered by SmolLM2-135M-Instruct "
      "closed-book\n"
      "and with retrieval over the course's READMEs; recall@k of the hash, BM25 and dense\n"
      "retrievers, answer accuracy with 95% intervals. Writes ask_the_course.json and figures."};
  g2c::exercises::CommonOptions options;
  options.out = "results/17-rag";
  std::string model_name = "SmolLM2-135M-Instruct";
  std::string url;
  std::int64_t chunk_size = 600, overlap = 100, k = 1, limit = 0, max_tokens = 48, hash_dim = 2048;
  std::vector<std::string> answer_with = {"none", "hash", "bm25", "dense", "oracle"};
  bool no_dense = false, retrieval_only = false;
  std::string template_name = "short";
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", model_name, "The model that answers and embeds");
  app.add_option("--url", url,
                 "A server in Ollama's protocol to use instead of this process (g2c-serve)")
      .no_default();
  app.add_option("--chunk-size", chunk_size, "Characters per chunk").positive();
  app.add_option("--overlap", overlap, "Characters shared by neighbouring chunks").non_negative();
  app.add_option("--k", k, "Chunks in each answer's prompt").positive();
  app.add_option("--hash-dim", hash_dim, "The hash embedder's buckets").positive();
  app.add_option("--limit", limit, "Only the first N questions (0: all)").non_negative();
  app.add_option("--max-tokens", max_tokens, "Reply length limit, in tokens").positive();
  app.add_option(
         "--answer-with", answer_with,
         "Conditions to answer under: none (closed-book), hash, bm25, dense, oracle (the chunk "
         "that holds the evidence, alone: reading without retrieval's errors)")
      .one_of({"none", "hash", "bm25", "dense", "oracle"});
  app.add_option("--template", template_name,
                 "The prompt around the chunks: short (no system paragraph, a one-line "
                 "instruction: what a 135M model follows) or default (the module's)")
      .one_of({"short", "default"});
  app.add_flag("--retrieval-only", retrieval_only, "Measure retrieval, answer nothing");
  app.add_flag("--no-dense", no_dense, "Leave the dense retriever out");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const bool dense = !no_dense;
    if (retrieval_only) answer_with.clear();
    if (!device.is_cpu())
      throw g2c::ValueError("17_ask_the_course runs SmolLM2 on the CPU; use --device cpu");
    if (overlap >= chunk_size) throw g2c::ValueError("--overlap must be smaller than --chunk-size");
    const fs::path root(g2c::pretraining::source_dir());
    const auto data =
        nlohmann::json::parse(g2c::read_file(root / "exercises/17-rag/data/questions.json"));
    auto questions = read_questions(data);
    if (limit > 0 && static_cast<std::size_t>(limit) < questions.size())
      questions.resize(static_cast<std::size_t>(limit));
    const auto documents = data.at("documents").get<std::vector<std::string>>();
    const auto corpus = build_corpus(root, documents, questions, chunk_size, overlap);
    fmt::print("{} documents, {} chunks of {} characters ({} shared); {} questions\n",
               documents.size(), corpus.chunks.size(), chunk_size, overlap, questions.size());

    // The model, in this process or behind a server, for the answers and the dense embedder.
    const bool needs_model = dense || !answer_with.empty();
    std::shared_ptr<g2c::pretrained::PretrainedModel> model;
    std::shared_ptr<g2c::inference::Backend> backend;
    std::shared_ptr<g2c::rag::Embedder> dense_embedder;
    if (needs_model) {
      if (url.empty()) {
        model = std::make_shared<g2c::pretrained::PretrainedModel>(
            g2c::pretrained::load_pretrained_model(model_name,
                                                   g2c::pretrained::LoadOptions().packed(true)));
        backend = std::make_shared<g2c::inference::PretrainedBackend>(model);
        dense_embedder = std::make_shared<g2c::rag::PretrainedEmbedder>(model);
      } else {
        backend = std::make_shared<g2c::inference::OllamaBackend>(
            model_name, g2c::inference::OllamaOptions().with_base_url(url));
        g2c::rag::OllamaEmbedderOptions embed_options;
        embed_options.base_url = url;
        embed_options.dim = 576;
        embed_options.batch = 8;
        dense_embedder = std::make_shared<g2c::rag::OllamaEmbedder>(model_name, embed_options);
      }
    }

    // The retrievers.
    std::map<std::string, std::shared_ptr<g2c::rag::Retriever>> retrievers;
    nlohmann::json build_seconds = nlohmann::json::object();
    {
      auto start = std::chrono::steady_clock::now();
      auto hash =
          std::make_shared<g2c::rag::HashEmbedder>(g2c::rag::HashEmbedderOptions{.dim = hash_dim});
      auto store = std::make_shared<g2c::rag::VectorStore>(hash_dim);
      store->add(corpus.chunks, hash->embed(g2c::rag::chunk_texts(corpus.chunks)));
      retrievers["hash"] = std::make_shared<g2c::rag::DenseRetriever>(hash, store);
      build_seconds["hash"] = seconds_since(start);
      start = std::chrono::steady_clock::now();
      auto bm25 = std::make_shared<g2c::rag::BM25Retriever>();
      bm25->add(corpus.chunks);
      retrievers["bm25"] = bm25;
      build_seconds["bm25"] = seconds_since(start);
    }
    if (dense) {
      const auto index_path =
          root / "artifacts/rag" /
          fmt::format("course-{}-{}-{}.index", dense_embedder->spec().value("model", "dense"),
                      chunk_size, overlap);
      double seconds = 0;
      auto store = dense_store(index_path, *dense_embedder, corpus, options.quiet, seconds);
      retrievers["dense"] = std::make_shared<g2c::rag::DenseRetriever>(dense_embedder, store);
      build_seconds["dense"] = seconds;
    }

    // Retrieval: recall@k for k = 1, 3, 5, 10, and the query time.
    const std::vector<std::int64_t> ks = {1, 3, 5, 10};
    nlohmann::json recall = nlohmann::json::object();
    nlohmann::json recall_table = {{"k", ks}};
    std::map<std::string, std::vector<std::vector<g2c::rag::RetrievedChunk>>> retrieved;
    for (const auto& [name, retriever] : retrievers) {
      std::vector<Proportion> at(ks.size());
      std::vector<double> query_ms;
      for (std::size_t qi = 0; qi < questions.size(); ++qi) {
        const auto start = std::chrono::steady_clock::now();
        auto results = retriever->retrieve(questions[qi].question, ks.back());
        query_ms.push_back(seconds_since(start) * 1e3);
        // The rank of the first result that holds the evidence (0: none does).
        const auto& relevant = corpus.relevant[qi];
        std::int64_t first_hit = 0;
        for (std::size_t r = 0; r < results.size() && first_hit == 0; ++r) {
          for (const auto index : relevant) {
            if (corpus.chunks[static_cast<std::size_t>(index)] == results[r].chunk) {
              first_hit = static_cast<std::int64_t>(r) + 1;
            }
          }
        }
        for (std::size_t j = 0; j < ks.size(); ++j) {
          at[j].hits += first_hit > 0 && first_hit <= ks[j];
          ++at[j].total;
        }
        if (static_cast<std::int64_t>(results.size()) > k)
          results.erase(results.begin() + k, results.end());
        retrieved[name].push_back(std::move(results));
      }
      nlohmann::json per_k = nlohmann::json::object();
      std::vector<double> values;
      for (std::size_t j = 0; j < ks.size(); ++j) {
        per_k[std::to_string(ks[j])] = at[j].to_json();
        values.push_back(at[j].value());
      }
      const double median_ms = g2c::inference::percentile(query_ms, 50);
      recall[name] = {{"at", per_k}, {"query_ms_median", median_ms}};
      recall_table[name] = values;
      fmt::print("{:>5} retriever: recall@1 {}  @3 {}  @5 {}  @10 {}   query {:.2f} ms (median)\n",
                 name, at[0].to_string(), at[1].to_string(), at[2].to_string(), at[3].to_string(),
                 median_ms);
    }

    g2c::rag::PromptTemplate prompt_template;
    if (template_name == "short") {
      prompt_template.system = "";
      prompt_template.instruction =
          "Answer the question in one short sentence, using the context above.";
    }

    // The oracle: the one chunk that holds each question's evidence, as if retrieval were perfect.
    for (std::size_t qi = 0; qi < questions.size(); ++qi) {
      const auto best = corpus.relevant[qi].front();
      retrieved["oracle"].push_back({{corpus.chunks[static_cast<std::size_t>(best)], 1.0, 1}});
    }

    // Answers: closed-book, with each retriever's top k, and with the oracle's chunk.
    nlohmann::json answers = nlohmann::json::object();
    nlohmann::json accuracy_table = {{"condition", nlohmann::json::array()},
                                     {"accuracy", nlohmann::json::array()},
                                     {"low", nlohmann::json::array()},
                                     {"high", nlohmann::json::array()}};
    for (const auto& condition : answer_with) {
      if (condition != "none" && !retrieved.count(condition)) continue;
      Proportion correct, abstained;
      nlohmann::json rows = nlohmann::json::array();
      const auto start = std::chrono::steady_clock::now();
      g2c::Progress progress(fmt::format("answering ({})", condition),
                             static_cast<std::int64_t>(questions.size()), !options.quiet);
      for (std::size_t qi = 0; qi < questions.size(); ++qi) {
        const auto& q = questions[qi];
        std::string prompt;
        if (condition == "none") {
          prompt = "Answer the question in one short sentence.\n\nQuestion: " + q.question;
        } else {
          prompt =
              g2c::rag::assemble_rag_prompt(q.question, retrieved[condition][qi], prompt_template)
                  .text;
        }
        const auto reply = backend->complete(prompt, g2c::inference::CompletionOptions()
                                                         .with_max_new_tokens(max_tokens)
                                                         .with_temperature(0));
        const bool right = g2c::eval::contains_match(reply.completion, q.references);
        const bool dont_know = reply.completion.find("don't know") != std::string::npos;
        correct.hits += right;
        ++correct.total;
        abstained.hits += dont_know;
        ++abstained.total;
        rows.push_back({{"id", q.id},
                        {"reply", reply.completion},
                        {"correct", right},
                        {"dont_know", dont_know},
                        {"prompt_tokens", reply.prompt_tokens.value_or(-1)}});
        progress.update(static_cast<std::int64_t>(qi + 1));
      }
      progress.finish();
      const double seconds = seconds_since(start);
      fmt::print("answers {:>5}: correct {}   \"don't know\" {}   ({:.1f} s/question)\n", condition,
                 correct.to_string(), abstained.to_string(),
                 seconds / static_cast<double>(questions.size()));
      answers[condition] = {{"correct", correct.to_json()},
                            {"dont_know", abstained.to_json()},
                            {"seconds", seconds},
                            {"replies", rows}};
      accuracy_table["condition"].push_back(condition == "none" ? "closed-book" : condition);
      accuracy_table["accuracy"].push_back(correct.value());
      accuracy_table["low"].push_back(correct.low());
      accuracy_table["high"].push_back(correct.high());
    }

    auto out = g2c::exercises::run_metadata("17_ask_the_course", options, device);
    out["config"] = {{"model", model_name},
                     {"backend", backend ? backend->info().name() : "none"},
                     {"chunk_size", chunk_size},
                     {"overlap", overlap},
                     {"k", k},
                     {"template", template_name},
                     {"hash_dim", hash_dim},
                     {"documents", documents.size()},
                     {"chunks", corpus.chunks.size()},
                     {"questions", questions.size()},
                     {"max_tokens", max_tokens}};
    out["index_seconds"] = build_seconds;
    out["recall"] = recall;
    out["recall_table"] = recall_table;
    out["answers"] = answers;
    out["accuracy_table"] = accuracy_table;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    auto recall_figure = Figure::line("rag_recall.png", "Recall@k over the course's documents", "k",
                                      "questions with an evidence chunk in the top k");
    for (const auto& [name, retriever] : retrievers)
      recall_figure.add(Series(name, "/recall_table/k", "/recall_table/" + name));
    std::vector<Figure> figures = {recall_figure};
    if (!answers.empty()) {
      figures.push_back(
          Figure::bar(
              "rag_answers.png",
              fmt::format("{} on {} questions about the course", model_name, questions.size()), "",
              "answers containing the right fact")
              .add(Series("", "/accuracy_table/condition", "/accuracy_table/accuracy")));
    }
    out["figures"] = g2c::exercises::figures(figures);
    const auto path = g2c::exercises::save_result(options, "ask_the_course.json", out);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_17_ask_the_course
