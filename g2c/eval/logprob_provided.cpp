// Module 15 — continuation log-probability (provided part): the checks.
#include "g2c/eval/logprob.h"

#include "g2c/core/errors.h"

namespace g2c::eval {

void check_continuation_ids(const std::vector<std::int64_t>& prompt_ids,
                            const std::vector<std::int64_t>& cont_ids) {
  if (prompt_ids.empty()) {
    throw ValueError(
        "continuation_logprob: the prompt must encode to at least one token (the first "
        "continuation token needs a context to be predicted from); got an empty prompt");
  }
  if (cont_ids.empty()) {
    throw ValueError(
        "continuation_logprob: the continuation must encode to at least one token; an empty "
        "continuation has nothing to score");
  }
}

}  // namespace g2c::eval
