// Module 06 in one include: the language models, batching, perplexity, sampling and training.
#pragma once

#include "g2c/lm/batching.h"
#include "g2c/lm/bigram.h"
#include "g2c/lm/evaluation.h"
#include "g2c/lm/language_model.h"
#include "g2c/lm/mlp.h"
#include "g2c/lm/sampling.h"
#include "g2c/lm/training.h"
