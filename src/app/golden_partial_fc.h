// The classifier half of `pfc golden`: PartialFC sharded over the ranks of the run, fed the
// stored embeddings, compared on loss, embedding gradient and class-centre gradient.
#pragma once

#include "app/golden_table.h"
#include "backend/backend.h"
#include "comm/comm.h"
#include "io/golden_file.h"

namespace pfc {

// How the check stores the class centres (classifier_storage): f32 (the run's dtype), or f16
// or bf16, whose bound then also admits what rounding the exact centres to 16 bits does to an
// exact computation, measured by an f64 run on the reference CPU backend and comm (the same
// ranks).
struct GoldenStorage {
  DType type = DType::f32;
  Backend* reference_backend = nullptr;
  Comm* reference_comm = nullptr;
};

// Collective over comm; only rank 0's table is printed. dtype: the classifier's element type
// (f32, or f64 in an f64 run); gemm_operands: its GEMM operand type (f16 in the fp16 check, as
// in fp16 training; dtype otherwise).
void check_golden_partial_fc(const GoldenFile& file, const GoldenNetwork& network,
                             const GoldenCase& golden_case, Backend& backend, Comm& comm,
                             DType dtype, DType gemm_operands, GoldenTable& table,
                             const GoldenStorage& storage = {});

}  // namespace pfc
