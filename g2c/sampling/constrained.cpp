// Module 18 — your work: the grammar's mask, and module 11's loop with the mask spliced in.
#include "g2c/sampling/constrained.h"

#include <algorithm>
#include <limits>

namespace g2c::sampling {

torch::Tensor allowed_token_mask(const JsonPrefixAutomaton& automaton, const JsonState& state,
                                 const std::vector<std::string>& pieces) {
  // TODO: The decode-and-check sweep, pieces (V) -> a (V) bool CPU tensor: allowed[i] is true when
  // pieces[i] is non-empty AND automaton.advance(state, pieces[i]) is not nullopt. Both conditions
  // carry weight: an empty piece advances nothing, so allowing it lets the sampler emit it
  // forever; and a multi-character piece is checked whole (R"(": ")" is one legal hop after a
  // key). A complete state accepts nothing, so its mask is all false: the automaton saying "stop".
  // Operations: torch::zeros with torch::kBool, a loop over the pieces, accessor<bool, 1>.
  // Hints, one step at a time: scripts/hint.sh 18 allowed_token_mask
  throw g2c::todo("allowed_token_mask", "g2c/sampling/constrained.cpp", "18");
}

torch::Tensor generate_json(LogitsModel& model, const torch::Tensor& prompt_ids,
                            const std::vector<std::string>& pieces,
                            const GenerateJsonOptions& options) {
  // TODO: Module 11's generate() loop with two insertions: the mask before the warpers, and a stop
  // when the grammar is complete. Check the arguments first (check_generate_json_arguments); no
  // autograd; ids = the prompt as a CPU int64 (T); state = automaton.initial(); the masks come
  // from options.mask_cache() (or a cache of this call when it is null), computed by
  // allowed_token_mask only for a state not in it yet. Each of at most max_new_tokens steps: the
  // state's mask, and stop if it allows nothing; logits (1, V) of the last position of the model's
  // forward on the last max_seq_len ids (1, T_ctx) on its device, moved to the CPU; logits where
  // the mask is false become -inf; sample_next_token(logits, ids, options.sampling()) draws the id
  // (greedy at temperature 0); append it, advance the state by its piece, stop once complete.
  // Operations: masked_fill, logical_not, narrow, torch::cat.
  // Hints, one step at a time: scripts/hint.sh 18 generate_json
  throw g2c::todo("generate_json", "g2c/sampling/constrained.cpp", "18");
}

}  // namespace g2c::sampling
