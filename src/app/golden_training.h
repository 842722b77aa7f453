// The training half of `pfc golden`, for the parity file's optimiser cases (sgd_2steps,
// adamw_2steps, sgd_acc2): iresnet and PartialFC rebuilt from the fill rule take the case's
// optimiser steps through TrainingStep, the trainer's own step, and the losses, every trained
// parameter, the class centres and the running statistics afterwards are compared with
// arcface_torch's.
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
