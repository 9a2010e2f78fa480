// Module 16's whole interface in one include: the Backend and its results, the backends over a
// model of this process (a TransformerLM, a saved artifact, the pretrained SmolLM2) and over a
// server in Ollama's protocol, the benchmark, and the helpers that pick the backend modules 17-20
// run on.
#pragma once

#include "g2c/inference/artifact.h"
#include "g2c/inference/backend.h"
#include "g2c/inference/benchmark.h"
#include "g2c/inference/local.h"
#include "g2c/inference/ollama.h"
#include "g2c/inference/pretrained_backend.h"
#include "g2c/inference/prodlm.h"
