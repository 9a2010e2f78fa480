// Module 13 in one include: the chat template, SFT examples and batches, the masked loss and the
// SFT trainer.
#pragma once

#include "g2c/sft/chat_template.h"
#include "g2c/sft/data.h"
#include "g2c/sft/loss.h"
#include "g2c/sft/trainer.h"
