// Exercise 18 — read the notes: questions answered from a file the model must ask for. Module 17's
// fifty questions about this course (exercises/17-rag/data/questions.json) each quote the sentence
// of a course document that answers them; the paragraph around that sentence becomes a note,
// notes/<id>.md, in a folder the read_file tool is sandboxed to. SmolLM2-135M-Instruct answers each
// question three ways:
//   alone     closed-book: the question only
//   read_file the question and the note's file name; the model calls read_file (the call decoded
//             under the tool's schema, as 18_calculator's constrained condition) and answers from
//             what comes back
//   oracle    the note pasted above the question: how well the model reads when the call is perfect
// A reply is right when it contains the answer or an alias (module 15's contains_match), as in
// module 17. For read_file, also how often the model asked for the right file. Writes
// read_the_notes.json and a figure.
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/proportion.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/eval/match.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/pretraining/build_info.h"
#include "g2c/tools/tools.h"

namespace exercise_18_read_the_notes {

namespace {

namespace fs = std::filesystem;
using g2c::exercises::Proportion;

struct Note {
  std::string id, question, file, text;
  std::vector<std::string> references;  // the answer and its aliases
};

/// The paragraph of `document` (a block between blank lines) that holds `evidence`, at most
/// `max_chars` bytes of it centred on the evidence.
std::string paragraph_around(const std::string& document, const std::string& evidence,
                             std::size_t max_chars) {
  const auto at = document.find(evidence);
  if (at == std::string::npos) {
    throw g2c::ValueError("read_the_notes: evidence not found in its document: " + evidence +
                          " (scripts/check_questions.py checks the question set)");
  }
  auto start = document.rfind("\n\n", at);
  start = start == std::string::npos ? 0 : start + 2;
  auto end = document.find("\n\n", at + evidence.size());
  if (end == std::string::npos) end = document.size();
  if (end - start > max_chars) {  // keep the evidence and what surrounds it, within the cap
    const auto slack = (max_chars - std::min(max_chars, evidence.size())) / 2;
    const auto paragraph_start = start, paragraph_end = end;
    start = std::max(start, at > slack ? at - slack : 0);
    end = std::min(end, std::max(start + max_chars, at + evidence.size()));
    // Cut at spaces, never inside a word (or a UTF-8 character).
    if (start > paragraph_start) start = document.find_first_of(" \n", start) + 1;
    if (end < paragraph_end) end = document.find_last_of(" \n", end);
    start = std::min(start, at);
    end = std::max(end, at + evidence.size());
  }
  return document.substr(start, end - start);
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 18: questions about this course answered by SmolLM2-135M-Instruct closed-book, by\n"
      "reading a note through the read_file tool, and with the note in the prompt: accuracy with\n"
      "95% intervals, and how often the model asked for the right file. Writes\n"
      "read_the_notes.json and a figure."};
  g2c::exercises::CommonOptions options;
  options.out = "results/18-tools";
  std::string model_name = "SmolLM2-135M-Instruct";
  std::int64_t limit = 0, max_tokens = 48, note_chars = 600;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--model", model_name, "The pretrained model that answers");
  app.add_option("--limit", limit, "Only the first N questions (0: all)").non_negative();
  app.add_option("--max-tokens", max_tokens, "Reply length limit per step, in tokens").positive();
  app.add_option("--note-chars", note_chars, "A note's length at most, in bytes").positive();
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    if (!device.is_cpu()) {
      throw g2c::ValueError("18_read_the_notes runs SmolLM2 on the CPU; use --device cpu");
    }
    const fs::path root(g2c::pretraining::source_dir());
    const auto data =
        nlohmann::json::parse(g2c::read_file(root / "exercises/17-rag/data/questions.json"));

    // The notes, written to a folder of their own: the only place read_file may read.
    const fs::path notes_dir = fs::path(options.out) / "notes";
    fs::create_directories(notes_dir);
    std::vector<Note> notes;
    for (const auto& q : data.at("questions")) {
      if (limit > 0 && static_cast<std::int64_t>(notes.size()) == limit) break;
      Note note{q.at("id"), q.at("question"), q.at("id").get<std::string>() + ".md", "", {}};
      note.references.push_back(q.at("answer"));
      for (const auto& alias : q.at("aliases")) note.references.push_back(alias);
      const auto document = g2c::read_file(root / q.at("source").get<std::string>());
      note.text =
          paragraph_around(document, q.at("evidence"), static_cast<std::size_t>(note_chars));
      std::ofstream(notes_dir / note.file) << note.text << "\n";
      notes.push_back(std::move(note));
    }

    auto model =
        std::make_shared<g2c::pretrained::PretrainedModel>(g2c::pretrained::load_pretrained_model(
            model_name, g2c::pretrained::LoadOptions().packed(true)));
    g2c::inference::PretrainedBackend free_backend(model);
    g2c::inference::PretrainedBackend reader(
        model, g2c::inference::PretrainedBackendOptions().with_tool_choice(
                   g2c::inference::ToolChoice::Required));
    const g2c::tools::ToolRegistry registry(
        {g2c::tools::make_read_file({notes_dir, note_chars + 100})});
    const auto sampling =
        g2c::inference::CompletionOptions().with_max_new_tokens(max_tokens).with_temperature(0);

    nlohmann::json results = nlohmann::json::object();
    nlohmann::json table = {{"condition", nlohmann::json::array()},
                            {"accuracy", nlohmann::json::array()}};
    for (const std::string condition : {"alone", "read_file", "oracle"}) {
      Proportion right, right_file;
      double seconds = 0;
      auto replies = nlohmann::json::array();
      g2c::Progress progress(condition, static_cast<std::int64_t>(notes.size()), !options.quiet);
      for (const auto& note : notes) {
        const auto start = std::chrono::steady_clock::now();
        nlohmann::json record = {{"id", note.id}, {"question", note.question}};
        std::string reply;
        if (condition == "alone") {
          reply = free_backend.complete(note.question, sampling).completion;
        } else if (condition == "oracle") {
          reply =
              free_backend
                  .complete("Note:\n" + note.text + "\n\nAnswer from the note: " + note.question,
                            sampling)
                  .completion;
        } else {
          g2c::tools::RunWithToolsOptions loop;
          loop.max_steps = 2;
          loop.sampling = sampling;
          const auto run = g2c::tools::run_with_tools(
              reader, registry, note.question + " The answer is in the file " + note.file + ".",
              loop);
          reply = run.final_answer.value_or("");
          const auto& first = run.steps.front();
          const bool asked_right = !first.tool_calls.empty() && !first.tool_results[0].is_error() &&
                                   first.tool_calls[0].arguments().value("path", "") == note.file;
          right_file.hits += asked_right;
          ++right_file.total;
          record["path"] = first.tool_calls.empty()
                               ? nlohmann::json(nullptr)
                               : first.tool_calls[0].arguments().value("path", nlohmann::json());
          record["stopped"] = run.stopped_reason;
        }
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const bool ok = g2c::eval::contains_match(reply, note.references);
        right.hits += ok;
        ++right.total;
        record["reply"] = reply;
        record["correct"] = ok;
        replies.push_back(record);
        progress.update(right.total);
      }
      progress.finish();
      fmt::print("{:<10} right {}{}  {:.2f} s per question\n", condition, right.to_string(),
                 condition == "read_file" ? "  right file " + right_file.to_string() : "",
                 seconds / static_cast<double>(notes.size()));
      results[condition] = {{"correct", right.to_json()},
                            {"seconds_per_question", seconds / static_cast<double>(notes.size())},
                            {"replies", replies}};
      if (condition == "read_file") results[condition]["right_file"] = right_file.to_json();
      table["condition"].push_back(condition);
      table["accuracy"].push_back(right.value());
    }

    auto out = g2c::exercises::run_metadata("18_read_the_notes", options, device);
    out["config"] = {{"model", model_name},
                     {"questions", notes.size()},
                     {"max_tokens", max_tokens},
                     {"note_chars", note_chars},
                     {"temperature", 0}};
    out["conditions"] = results;
    out["accuracy_table"] = table;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    out["figures"] = g2c::exercises::figures(
        {Figure::bar("read_the_notes.png",
                     fmt::format("{} on {} questions about the course", model_name, notes.size()),
                     "", "answers containing the right fact")
             .add(Series("", "/accuracy_table/condition", "/accuracy_table/accuracy"))});
    const auto path = g2c::exercises::save_result(options, "read_the_notes.json", out);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_18_read_the_notes
