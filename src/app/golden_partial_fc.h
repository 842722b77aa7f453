// The classifier half of `pfc golden`: PartialFC sharded over the ranks of the run, fed the
// stored embeddings, compared on loss, embedding gradient and class-centre gradient.
#pragma once

#include "app/golden_table.h"
#include "backend/backend.h"
#include "comm/comm.h"
#include "io/golden_file.h"

namespace pfc {

// Collective over comm; only rank 0's table is printed. dtype: the classifier's element type
// (f32, or f64 in an f64 run); gemm_operands: its GEMM operand type (f16 in the fp16 check, as
// in fp16 training; dtype otherwise).
void check_golden_partial_fc(const GoldenFile& file, const GoldenNetwork& network,
                             const GoldenCase& golden_case, Backend& backend, Comm& comm,
                             DType dtype, DType gemm_operands, GoldenTable& table);

}  // namespace pfc
