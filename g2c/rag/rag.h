// Module 17 in one include: chunks, embedders, the vector store, the retrievers (dense and BM25),
// the prompt, the pipeline and saved indexes.
#pragma once

#include "g2c/rag/bm25.h"
#include "g2c/rag/chunk.h"
#include "g2c/rag/dense_retriever.h"
#include "g2c/rag/embed.h"
#include "g2c/rag/index.h"
#include "g2c/rag/pipeline.h"
#include "g2c/rag/pretrained_embedder.h"
#include "g2c/rag/prompt.h"
#include "g2c/rag/retriever.h"
#include "g2c/rag/store.h"
