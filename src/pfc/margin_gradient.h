// How the margin's gradient reaches the target's cosine: the two versions of arcface_torch
// (config key `margin_gradient`).
//  - exact: the seed's losses.py applies acos and cos in place under autograd, so the target's
//    gradient carries d cos(m1 theta + m2) / d cos theta = m1 sin(m1 theta + m2) / sin theta
//    (backend/margin_derivative.h).
//  - straight_through: today's CombinedMarginLoss applies the margin under no_grad, so the
//    gradient passes as if the margin were not there.
// CosFace (m1 = 1, m2 = 0) has no acos, and the two agree.
#pragma once

#include <string_view>

namespace pfc {

enum class MarginGradient { exact, straight_through };

// "exact" | "straight_through"; throws pfc::UsageError naming the value otherwise.
MarginGradient parse_margin_gradient(std::string_view name);
std::string_view margin_gradient_name(MarginGradient gradient);

}  // namespace pfc
