// From the image features of a pass over an IJB list to eval_ijbc.py's results: template
// features, pair scores (a block of pairs at a time), the ROC, its AUC and the TAR at each
// target FAR, gathered as the file `pfc ijb` writes (io/ijb_result_file.h).
#pragma once

#include "eval/ijb_protocol.h"
#include "io/ijb_result_file.h"

namespace pfc {

// `features`: host [images, emb] f32, flip-summed (eval/ijb_embedding.h). The summary's
// target, checkpoint, step and network and the result's root and image_size are left to the
// caller. Throws pfc::Error when a feature is not finite (a diverged network), naming the image.
IjbResult evaluate_ijb(const IjbImages& images, const IjbPairs& pairs, Tensor features);

}  // namespace pfc
