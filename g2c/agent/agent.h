// Module 19 in one include: the records, the ReAct parser, the plan, the scratchpad and the
// prompts. (The agent's loop and the native agent come next.)
#pragma once

#include "g2c/agent/memory.h"
#include "g2c/agent/parser.h"
#include "g2c/agent/planner.h"
#include "g2c/agent/prompts.h"
#include "g2c/agent/types.h"
