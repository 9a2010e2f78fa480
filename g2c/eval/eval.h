// Module 15 in one include: examples and reports, matchers, continuation log-probability,
// calibration, multiple-choice and generation harnesses.
#pragma once

#include "g2c/eval/calibration.h"
#include "g2c/eval/data.h"
#include "g2c/eval/generation.h"
#include "g2c/eval/logprob.h"
#include "g2c/eval/match.h"
#include "g2c/eval/multiple_choice.h"
