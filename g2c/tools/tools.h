// Module 18 in one include: the tool types, the registry, schemas, the parser, the calculator, the
// built-in tools and the loop.
#pragma once

#include "g2c/tools/builtins.h"
#include "g2c/tools/calculator.h"
#include "g2c/tools/loop.h"
#include "g2c/tools/parser.h"
#include "g2c/tools/registry.h"
#include "g2c/tools/schema.h"
#include "g2c/tools/tool.h"
