// Module 16 — your work: one prompt through a server that speaks Ollama's protocol.
#include <chrono>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/inference/ollama.h"

namespace g2c::inference {

InferenceResult OllamaBackend::complete(const std::string& prompt,
                                        const CompletionOptions& options) {
  // TODO: One prompt through a model server: POST a JSON body to base_url_ + "/api/generate"
  // without streaming and turn the JSON answer into an InferenceResult (ollama.h shows both and
  // documents every field). In order: ValueError for an empty prompt or max_new_tokens <= 0; the
  // body, with top_k / top_p only when set (absent, the server's default applies); the call,
  // transport_(HttpRequest, timeout_), timed with std::chrono::steady_clock. Every failure after
  // that is an OllamaError, so a caller catches one type: no server ("Could not reach Ollama at
  // <url>", the NetworkError nested inside with std::throw_with_nested), a status outside 200-299
  // (say the status), a body that is not JSON (parse with exceptions off, then is_discarded()), no
  // string "response". Counts the answer lacks are nullopt; its durations are in ns (/ 1e6 for the
  // metadata's ms, else null).
  // Hints, one step at a time: scripts/hint.sh 16 OllamaBackend::complete
  throw g2c::todo("OllamaBackend::complete", "g2c/inference/ollama.cpp", "16");
}

}  // namespace g2c::inference
