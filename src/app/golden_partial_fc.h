// The classifier half of `pfc golden`: PartialFC sharded over the ranks of the run, fed the
// stored embeddings, compared on loss, embedding gradient and class-centre gradient.
#pragma once

#include "app/golden_table.h"
#include "backend/backend.h"
#include "comm/comm.h"
#include "io/golden_file.h"

namespace pfc {

// Collective over comm; only rank 0's table is printed. gemm_operands: the classifier's
// GEMM operand type (f16 in the fp16 check, as in fp16 training).
void check_golden_partial_fc(const GoldenFile& file, const GoldenNetwork& network,
                             const GoldenCase& golden_case, Backend& backend, Comm& comm,
                             DType gemm_operands, GoldenTable& table);

}  // namespace pfc
