// The backbone half of `pfc golden`: iresnet rebuilt from the file's fill rule, forward on
// the stored input, backward from the stored embeddings_grad, compared tensor by tensor.
#pragma once

#include "app/golden_table.h"
#include "backend/backend.h"
#include "io/golden_file.h"

namespace pfc {

void check_golden_backbone(const GoldenFile& file, const GoldenNetwork& network,
                           const GoldenCase& golden_case, Backend& backend, bool fp16,
                           GoldenTable& table);

// NCHW host f32 -> NHWC host f32 (the golden input's layout to ours).
Tensor nchw_to_nhwc(const Tensor& nchw);

}  // namespace pfc
