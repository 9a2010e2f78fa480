// Module 04 in one include: BPETokenizer, CharTokenizer, TextTokenizer (what exercises feed a
// model with), artifact files and UTF-8 helpers. Link the CMake target g2c_tokenizer.
#pragma once

#include "g2c/tokenizer/artifacts.h"
#include "g2c/tokenizer/bpe.h"
#include "g2c/tokenizer/char_tokenizer.h"
#include "g2c/tokenizer/text_tokenizer.h"
#include "g2c/tokenizer/utf8.h"
