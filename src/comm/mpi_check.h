// PFC_CHECK_MPI: every MPI call goes through it, so that a failure names the call, where it
// was made and MPI's own description of the error. Communicators created by MpiComm return
// errors instead of aborting (MPI_ERRORS_RETURN), which is what makes this check reachable.
#pragma once

#include <mpi.h>

namespace pfc {

[[noreturn]] void throw_mpi_error(const char* file, int line, const char* call, int code);

}  // namespace pfc

#define PFC_CHECK_MPI(call)                                                     \
  do {                                                                          \
    const int pfc_mpi_code_ = (call);                                           \
    if (pfc_mpi_code_ != MPI_SUCCESS)                                           \
      ::pfc::throw_mpi_error(__FILE__, __LINE__, #call, pfc_mpi_code_);         \
  } while (0)
