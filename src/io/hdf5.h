// Thin RAII over the HDF5 C API: owned handles, typed reads and writes of host Tensors and
// attributes, each failure reported as a pfc::Error that names the file and the object.
// Everything HDF5 in pfc (golden files, metrics, checkpoints, reports) goes through here.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace pfc::h5 {

// An owned hid_t, closed with the right H5*close for its kind.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(other.id_) { other.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset();
  // Gives up ownership without closing.
  hid_t release();

 private:
  hid_t id_ = H5I_INVALID_HID;
};

enum class Mode {
  read,
  read_write,
  create_truncate,
  // A file one process grows while others read it (metrics.h5), in HDF5's single-writer /
  // multiple-reader mode (SWMR): the writer creates or opens it in the latest file format,
  // which SWMR needs, makes every object it will use, then calls start_swmr_write(); readers
  // open it with read_live (h5py: swmr=True). No mode here takes HDF5's advisory file lock
  // (flock): the file's own "open for writing" mark already stops a second writer and a
  // reader that is not SWMR, a reader left open (a notebook watching a job that was
  // preempted) must not stop the requeued job from continuing the file, and Lustre mounted
  // without flock support refuses the lock outright.
  live_create,
  // Opens a live file to continue it. A mark left by a writer that was killed before it could
  // close the file is cleared (cleared_stale_write_mark() says so).
  live_read_write,
  live_read,
};

// An open HDF5 file. A failure to open or create names the file and says why (missing, not
// HDF5, permission denied, read-only file system). Written files should end with close():
// HDF5 writes cached data and metadata there, so a full disk may show only then; the
// destructor closes too, but cannot report.
class File {
 public:
  File(const std::string& path, Mode mode);
  hid_t id() const { return handle_.get(); }
  const std::string& path() const { return path_; }
  void flush();
  // Every handle opened inside the file must be closed first. Throws pfc::Error on failure.
  void close();
  // From now on readers may open the file (live_read) while this process appends to its
  // datasets and overwrites their values; no object may be created or deleted any more.
  // False when the file's format predates SWMR (written by an older pfc): it stays writable,
  // readable once closed.
  bool start_swmr_write();
  bool cleared_stale_write_mark() const { return cleared_stale_write_mark_; }

 private:
  std::string path_;
  Handle handle_;
  bool cleared_stale_write_mark_ = false;
};

// Silences HDF5's own error printing; pfc reports errors itself. Called once per process.
void quiet_errors();

bool exists(hid_t loc, const std::string& path);
std::vector<std::string> children(hid_t loc, const std::string& group_path);
Shape dataset_shape(hid_t loc, const std::string& path);
// Opens a group, creating it and its parents when missing.
Handle require_group(hid_t loc, const std::string& path);

// Reads a whole dataset into a host tensor of the given type (HDF5 converts).
Tensor read_tensor(hid_t loc, const std::string& path, DType as);
// Writes a host tensor as a new dataset (shape as the tensor's; parents created), chunked by
// rows with HDF5's Fletcher32 checksum (but for scalars and empty tensors), so that reading
// damaged data back fails with "data error detected by Fletcher32 checksum".
void write_tensor(hid_t loc, const std::string& path, const Tensor& host);
// Writes [n] variable-length UTF-8 strings as a new dataset (h5py reads them as bytes/str).
void write_strings(hid_t loc, const std::string& path, const std::vector<std::string>& values);
// Whether a dataset carries the Fletcher32 checksum (files of older versions do not).
bool has_checksum(hid_t loc, const std::string& path);

double read_attribute_double(hid_t loc, const std::string& object, const std::string& name);
std::int64_t read_attribute_int(hid_t loc, const std::string& object, const std::string& name);
std::vector<std::int64_t> read_attribute_ints(hid_t loc, const std::string& object,
                                              const std::string& name);
std::string read_attribute_string(hid_t loc, const std::string& object, const std::string& name);
bool has_attribute(hid_t loc, const std::string& object, const std::string& name);

void write_attribute(hid_t loc, const std::string& object, const std::string& name, double value);
void write_attribute(hid_t loc, const std::string& object, const std::string& name,
                     std::int64_t value);
void write_attribute(hid_t loc, const std::string& object, const std::string& name,
                     const std::vector<std::int64_t>& values);
void write_attribute(hid_t loc, const std::string& object, const std::string& name,
                     const std::string& value);

// The HDF5 memory type for a DType: f16 and bf16 as 16-bit IEEE-style float types (sign,
// exponent of 5 or 8 bits, mantissa of 10 or 7), so that h5py reads a dataset of them as
// float16 (f16) or, converted exactly by HDF5, as float32 (bf16, which numpy lacks).
hid_t native_type(DType dtype);

// The floating type a dataset stores: f16, bf16, f32 or f64 (pfc::Error naming it otherwise).
DType stored_float_type(hid_t loc, const std::string& path);

}  // namespace pfc::h5
