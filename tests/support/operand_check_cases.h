// Calls of Backend primitives with good and bad operands, made on whichever backend they are
// given (its own tensors): a meta backend planning a backend must accept and refuse exactly the
// calls that backend does (tests/unit/meta_operand_checks_test.cpp against the CPU backend,
// tests/gpu/gpu_meta_backend_test.cpp against CUDA).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace pfc::test {

struct OperandCase {
  std::string name;
  std::function<void(Backend&)> call;  // throws pfc::Error when the backend refuses
};

std::vector<OperandCase> operand_check_cases();

// Whether `call` throws pfc::Error on `backend`; the message, if it did, in *message.
bool refuses(Backend& backend, const OperandCase& c, std::string* message = nullptr);

}  // namespace pfc::test
