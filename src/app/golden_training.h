// The training half of `pfc golden`: the parity file's optimiser cases (sgd_2steps,
// adamw_2steps, sgd_acc2), the several-step cases at sample rate 0.1 and 0 of the seed's and
// today's arcface_torch, and today's ten-step schedule cases (PolynomialLRWarmup through
// warm-up and decay), taken through TrainingStep, the trainer's own step, at the rate the
// trainer's schedule gives each step, and compared with arcface_torch's state after them and
// with the rate each step applied.
#pragma once

#include "app/golden_table.h"
#include "backend/backend.h"
#include "comm/comm.h"
#include "io/golden_file.h"

namespace pfc {

// Collective over comm: every rank feeds each stored batch whole, which leaves the mean loss
// and every gradient as on one rank (the classes are sharded over the ranks). Only rank 0's
// table is printed. dtype (the classifier's: f32, or f64 in an f64 run), activations and
// gemm_operands as in the other checks.
void check_golden_training(const GoldenFile& file, const GoldenNetwork& network,
                           const GoldenCase& golden_case, const GoldenTraining& training,
                           Backend& backend, Comm& comm, DType dtype, DType activations,
                           DType gemm_operands, GoldenTable& table);

}  // namespace pfc
