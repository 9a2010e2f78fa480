// Module 14 in one include: preference examples and batches, the DPO loss and the DPO trainer.
#pragma once

#include "g2c/dpo/data.h"
#include "g2c/dpo/loss.h"
#include "g2c/dpo/trainer.h"
