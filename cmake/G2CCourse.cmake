# The course map and the scaffold/solution switch.
#
# G2C_COURSE_FILES is the one table of student files: "module topic file" per entry, the file
# relative to g2c/ without ".cpp". Each has a reference twin at g2c/solutions/<file>.cpp.
#
# G2C_SOLUTIONS picks, per file, which of the two is compiled. It speaks the course's selector
# language; selectors may be combined in a comma or space separated list:
#   (empty) 0 off none      no solutions (the student build)
#   1 on all                every solution (the reference build)
#   7  07  03b  09b         one module ("03" also covers its parts such as "03b")
#   03-07                   a range of modules (parts included)
#   attention               a topic (a folder under g2c/)
#   attention/self_attention one file
#   muon  moe  specdec ...  a Beyond module, by its slug (outside the numbered chain: a range such
#                           as 03-20 never covers one, and a slug inside a range is an error)

set(G2C_COURSE_FILES
  "01  autodiff   autodiff/value"
  "01  autodiff   autodiff/grad_check"
  "01  autodiff   autodiff/nn"
  "02  tensors    tensors/matmul"
  "02  tensors    tensors/broadcasting"
  "02  tensors    tensors/forward"
  "03  nn         nn/linear"
  "03  nn         nn/activations"
  "03  nn         nn/sequential"
  "03  nn         nn/cross_entropy"
  "03  nn         nn/sgd"
  "03b nn         nn/adamw"
  "03b training   training/clip"
  "03b training   training/schedule"
  "03  nn         nn/training"
  "04  tokenizer  tokenizer/bpe"
  "05  embeddings embeddings/token_embedding"
  "05  embeddings embeddings/positional"
  "05  embeddings embeddings/rotary"
  "05  embeddings embeddings/similarity"
  "05  embeddings embeddings/skipgram"
  "06  lm         lm/bigram"
  "06  lm         lm/mlp"
  "06  lm         lm/evaluation"
  "06  lm         lm/sampling"
  "06  lm         lm/training"
  "07  attention  attention/self_attention"
  "08  attention  attention/multi_head"
  "09  transformer transformer/layer_norm"
  "09  transformer transformer/ffn"
  "09  transformer transformer/block"
  "09  transformer transformer/transformer_lm"
  "09b pretraining pretraining/loss"
  "10  pretraining pretraining/trainer"
  "11  sampling   sampling/temperature"
  "11  sampling   sampling/top_k"
  "11  sampling   sampling/top_p"
  "11  sampling   sampling/repetition_penalty"
  "11  sampling   sampling/generate"
  "11  sampling   sampling/best_of_n"
  "13  sft        sft/chat_template"
  "13  sft        sft/data"
  "13  sft        sft/loss"
  "13  sft        sft/trainer"
  "13b lora       lora/layer"
  "13b lora       lora/inject"
  "14  dpo        dpo/data"
  "14  dpo        dpo/loss"
  "14  dpo        dpo/trainer"
  "15  eval       eval/match"
  "15  eval       eval/logprob"
  "15  eval       eval/calibration"
  "15  eval       eval/multiple_choice"
  "16  gguf       pretrained/dequantize"
  "16  pretrained pretrained/rms_norm"
  "16  pretrained pretrained/swiglu"
  "16  pretrained pretrained/grouped_query_attention"
  "16  inference  inference/benchmark"
  "16  inference  inference/ollama"
  "16  backends   inference/local"
  "16b synth      synth/filter"
  "17  rag        rag/chunk"
  "17  vectors    rag/embed"
  "17  vectors    rag/store"
  "17  rag        rag/prompt"
  "18  tools      tools/schema"
  "18  tools      tools/parser"
  "18  tools      tools/calculator"
  "18  tools      tools/loop"
  "18  constrained sampling/constrained"
  "19  agent      agent/parser"
  "19  agent      agent/planner"
  "19  agent      agent/memory"
  "19  agent      agent/agent"
  "20  assistant  assistant/conversation"
  "20  assistant  assistant/assistant"
  # The Beyond modules: their slug is their module, outside the numbered chain.
  "muon muon      muon/optimizer"
  "moe  moe       moe/router"
  "moe  moe       moe/layer"
  "linear_attention linear_attention linear_attention/attention"
  "midtraining midtraining midtraining/mixture"
  "midtraining midtraining midtraining/evaluation"
  "specdec specdec specdec/verify"
  "specdec specdec specdec/generate"
  "specdec specdec specdec/mtp"
  "rl   rl        rl/grpo"
  "rl   rl        rl/trainer"
  "harness harness harness/context"
  "harness harness harness/failures"
  "harness harness harness/runner"
  "harness harness harness/agent"
  "multimodal multimodal multimodal/patches"
  "multimodal multimodal multimodal/model"
)

# The Beyond modules' slugs, as the table names them.
set(G2C_BEYOND_MODULES muon moe linear_attention midtraining specdec rl harness multimodal)

set(G2C_SOLUTIONS "" CACHE STRING
  "Reference solutions to compile instead of student files: none, all, a module (07), a range (03-07), a topic (attention), a file (attention/self_attention), or a list")

# Splits one table entry into its module, topic and file.
function(_g2c_entry entry module_var topic_var file_var)
  string(REGEX REPLACE " +" ";" fields "${entry}")
  list(GET fields 0 module)
  list(GET fields 1 topic)
  list(GET fields 2 file)
  set(${module_var} "${module}" PARENT_SCOPE)
  set(${topic_var} "${topic}" PARENT_SCOPE)
  set(${file_var} "${file}" PARENT_SCOPE)
endfunction()

# "7" -> "07", "3b" -> "03b"; anything else is returned unchanged.
function(_g2c_normalize_module value out)
  if(value MATCHES "^([0-9]+)([a-z]?)$")
    set(number "${CMAKE_MATCH_1}")
    math(EXPR number "${number} + 0")
    if(number LESS 10)
      set(number "0${number}")
    endif()
    set(${out} "${number}${CMAKE_MATCH_2}" PARENT_SCOPE)
  else()
    set(${out} "${value}" PARENT_SCOPE)
  endif()
endfunction()

# Number part of a module name as an integer: "03b" -> 3.
function(_g2c_module_number module out)
  string(REGEX MATCH "^[0-9]+" number "${module}")
  math(EXPR number "${number} + 0")
  set(${out} "${number}" PARENT_SCOPE)
endfunction()

# Does one selector pick this entry? Sets out to TRUE/FALSE.
function(_g2c_selector_matches selector module topic file out)
  set(${out} FALSE PARENT_SCOPE)
  string(TOLOWER "${selector}" selector)
  if(selector MATCHES "^(1|on|all|true|yes)$")
    set(${out} TRUE PARENT_SCOPE)
  elseif(selector MATCHES "^([0-9]+[a-z]?)-([0-9]+[a-z]?)$")
    _g2c_module_number("${CMAKE_MATCH_1}" low)
    _g2c_module_number("${CMAKE_MATCH_2}" high)
    if(NOT module MATCHES "^[0-9]")  # (after reading the range: a match resets CMAKE_MATCH_n)
      return()  # a Beyond module: no range covers it
    endif()
    _g2c_module_number("${module}" number)
    if(number GREATER_EQUAL low AND number LESS_EQUAL high)
      set(${out} TRUE PARENT_SCOPE)
    endif()
  elseif(selector MATCHES "^[0-9]+[a-z]?$")
    _g2c_normalize_module("${selector}" wanted)
    if(module STREQUAL wanted OR (wanted MATCHES "^[0-9]+$" AND module MATCHES "^${wanted}[a-z]$"))
      set(${out} TRUE PARENT_SCOPE)
    endif()
  elseif(selector MATCHES "/")
    string(REGEX REPLACE "\\.cpp$" "" selector "${selector}")
    string(REGEX REPLACE "^g2c/" "" selector "${selector}")
    if(selector STREQUAL file)
      set(${out} TRUE PARENT_SCOPE)
    endif()
  elseif(selector STREQUAL topic)
    set(${out} TRUE PARENT_SCOPE)
  endif()
endfunction()

# Resolves G2C_SOLUTIONS into G2C_SOLUTION_FILES (the files compiled from g2c/solutions/).
function(g2c_resolve_solutions)
  set(modules "")
  set(topics "")
  set(files "")
  foreach(entry IN LISTS G2C_COURSE_FILES)
    _g2c_entry("${entry}" module topic file)
    list(APPEND modules "${module}")
    list(APPEND topics "${topic}")
    list(APPEND files "${file}")
  endforeach()
  list(REMOVE_DUPLICATES modules)
  list(REMOVE_DUPLICATES topics)

  string(REGEX REPLACE "[ ,]+" ";" selectors "${G2C_SOLUTIONS}")
  list(FILTER selectors EXCLUDE REGEX "^$")
  set(chosen "")
  foreach(selector IN LISTS selectors)
    string(TOLOWER "${selector}" lowered)
    if(lowered MATCHES "^(0|off|none|false|no)$")
      continue()
    endif()
    set(any_match FALSE)
    foreach(entry IN LISTS G2C_COURSE_FILES)
      _g2c_entry("${entry}" module topic file)
      _g2c_selector_matches("${selector}" "${module}" "${topic}" "${file}" match)
      if(match)
        set(any_match TRUE)
        list(APPEND chosen "${file}")
      endif()
    endforeach()
    if(NOT any_match AND lowered MATCHES "-")
      string(REGEX MATCHALL "[a-z_]+" words "${lowered}")
      foreach(word IN LISTS words)
        if(word IN_LIST G2C_BEYOND_MODULES)
          string(REPLACE ";" ", " beyond_text "${G2C_BEYOND_MODULES}")
          message(FATAL_ERROR
            "g2c: G2C_SOLUTIONS has the range '${selector}', but ${word} is a Beyond module, outside "
            "the numbered chain: a range covers numbered modules only (00-20). Name a Beyond module "
            "on its own beside the range, e.g. -DG2C_SOLUTIONS=01-10,${word}\n"
            "  Beyond modules: ${beyond_text}")
        endif()
      endforeach()
    endif()
    if(NOT any_match)
      string(REPLACE ";" ", " modules_text "${modules}")
      string(REPLACE ";" ", " topics_text "${topics}")
      message(FATAL_ERROR
        "g2c: G2C_SOLUTIONS has the selector '${selector}', which names no course file.\n"
        "  valid modules: ${modules_text} (also 7 for 07, and ranges such as 03-07)\n"
        "  valid topics:  ${topics_text}\n"
        "  valid files:   a course file such as attention/self_attention\n"
        "  or none / all. Example: -DG2C_SOLUTIONS=03,attention")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES chosen)
  set(G2C_SOLUTION_FILES "${chosen}" PARENT_SCOPE)
endfunction()

# Source path (absolute) to compile for one course file, after the switch.
function(g2c_course_source file out)
  if(file IN_LIST G2C_SOLUTION_FILES)
    set(source "${PROJECT_SOURCE_DIR}/g2c/solutions/${file}.cpp")
  else()
    set(source "${PROJECT_SOURCE_DIR}/g2c/${file}.cpp")
  endif()
  if(NOT EXISTS "${source}")
    file(RELATIVE_PATH shown "${PROJECT_SOURCE_DIR}" "${source}")
    message(FATAL_ERROR "${shown} is missing: this build (G2C_SOLUTIONS='${G2C_SOLUTIONS}') "
      "compiles it. Restore it (git checkout -- ${shown}), or switch that file to the other side.")
  endif()
  set(${out} "${source}" PARENT_SCOPE)
endfunction()

# TRUE when every student file of `module` (and of its lettered parts, 03 -> 03b) is switched to
# its reference: what a test of code built on the module's work needs to pass.
function(g2c_module_solved module out)
  set(result TRUE)
  foreach(entry IN LISTS G2C_COURSE_FILES)
    _g2c_entry("${entry}" entry_module topic file)
    if(entry_module MATCHES "^${module}[a-z]?$" AND NOT file IN_LIST G2C_SOLUTION_FILES)
      set(result FALSE)
    endif()
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# Writes the table where scripts can read it (scripts/test.sh checks the twins against it).
function(g2c_write_course_map path)
  set(text "# module topic file (generated from cmake/G2CCourse.cmake)\n")
  foreach(entry IN LISTS G2C_COURSE_FILES)
    _g2c_entry("${entry}" module topic file)
    if(file IN_LIST G2C_SOLUTION_FILES)
      set(source solution)
    else()
      set(source student)
    endif()
    string(APPEND text "${module} ${topic} ${file} ${source}\n")
  endforeach()
  file(WRITE "${path}" "${text}")
endfunction()

# Adds the course files of `topic` to `target`, each from g2c/ or g2c/solutions/ as selected.
# Student files name their parameters but leave them unused until written, hence the one
# relaxed warning there; and they stay out of unity batches, so that an edit recompiles one file.
function(g2c_add_course_files target topic)
  foreach(entry IN LISTS G2C_COURSE_FILES)
    _g2c_entry("${entry}" module entry_topic file)
    if(NOT entry_topic STREQUAL topic)
      continue()
    endif()
    g2c_course_source("${file}" source)
    target_sources(${target} PRIVATE "${source}")
    if(NOT file IN_LIST G2C_SOLUTION_FILES)
      set_source_files_properties("${source}" TARGET_DIRECTORY ${target}
        PROPERTIES COMPILE_OPTIONS "-Wno-unused-parameter" SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
endfunction()

# What a build compiles by default, and the targets that gather the rest.
#
# The default target is the course library and every module's tests: what `ctest` needs. The
# programs (exercises and tools) compile when they are first asked for — `scripts/run.sh <program>`
# builds its one target, `cmake --build --preset student --target 07_strip_mask` does the same —
# so a first build does not compile fifty programs a student has not reached yet. Two kinds of
# target gather them:
#   module-07   one module: its course tests, its checks and its programs
#   programs    every program (scripts/test.sh builds it for the smoke runs)
# A lettered part belongs to its module's target as well (module-03 builds 03b's, as `-L 03` runs
# them).
function(g2c_module_parts module)
  set(modules ${module})
  if(module MATCHES "^([0-9][0-9])[a-z]$")
    list(APPEND modules ${CMAKE_MATCH_1})
  endif()
  foreach(m IN LISTS modules)
    if(NOT TARGET module-${m})
      add_custom_target(module-${m})
    endif()
    add_dependencies(module-${m} ${ARGN})
  endforeach()
endfunction()

# g2c_program(<target> <module>): marks an executable as a program of `module`, built on demand.
function(g2c_program name module)
  set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL ON)
  if(NOT TARGET programs)
    add_custom_target(programs)
  endif()
  add_dependencies(programs ${name})
  g2c_module_parts(${module} ${name})
endfunction()
