// How a failed HDF5 call becomes a pfc::Error: what was being done, in which file and object,
// and why in words. HDF5 keeps the why on its error stack (pfc silences the stack's printing,
// see h5::quiet_errors): the system's own text for a failed read or write ("No space left on
// device", "Read-only file system"), or the check that failed ("data error detected by
// Fletcher32 checksum"). Shared by every file of the HDF5 layer.
#pragma once

#include <hdf5.h>

#include <string>

namespace pfc::h5 {

// Why the HDF5 call that just failed failed, from the current error stack, which it clears:
// the errno text of a failed system call when there is one, else the innermost description;
// "" when the stack is empty. Call it before any other HDF5 call, which would reset the stack.
std::string take_error_reason();

// "file.h5:/group/object" for an open HDF5 object (or its file).
std::string object_name(hid_t loc);

// Throws pfc::Error "HDF5: cannot WHAT (in FILE:OBJECT): REASON".
[[noreturn]] void throw_hdf5_error(hid_t loc, const std::string& what);

// `id`, or throw_hdf5_error when it is negative (HDF5's sign of failure).
hid_t checked(hid_t id, hid_t loc, const std::string& what);
void checked_status(herr_t status, hid_t loc, const std::string& what);

}  // namespace pfc::h5
