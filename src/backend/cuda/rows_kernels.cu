// Row-wise kernels for PartialFC. CPU reference: src/backend/cpu/cpu_partial_fc_ops.cpp
// (l2_normalize_rows, l2_normalize_rows_backward, gather_rows, scatter_rows). One warp per
// row: rows are short (the embedding size, 512) and there are many of them (the sampled
// class centres). The normalisation also reads stored bf16 centres; its backward may run in
// place (each row's dot product is complete before the row is written).
#include "backend/cuda/kernel_common.cuh"
#include "backend/cuda/rows_kernels.h"

namespace pfc::cuda {

namespace {

constexpr int kWarpsPerBlock = 8;
constexpr float kNormFloor = 1e-12f;

int row_blocks(std::int64_t rows) { return grid_size(rows, kWarpsPerBlock, 16); }

template <class TX, class TY>
__global__ void l2_normalize(const TX* x, TY* y, float* norms, std::int64_t rows,
                             std::int64_t cols) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
       r < rows; r += warps) {
    const TX* xr = x + r * cols;
    float ss = 0.0f;
    for (std::int64_t c = lane; c < cols; c += 32) {
      const float v = to_float(xr[c]);
      ss = fmaf(v, v, ss);
    }
    ss = warp_reduce(ss, SumOp{});
    const float norm = sqrtf(ss);
    const float inv = 1.0f / fmaxf(norm, kNormFloor);
    TY* yr = y + r * cols;
    for (std::int64_t c = lane; c < cols; c += 32) yr[c] = from_float<TY>(to_float(xr[c]) * inv);
    if (lane == 0) norms[r] = norm;
  }
}

template <class TG, class TY, class TD>
__global__ void l2_normalize_backward(const TG* dy, const TY* y, const float* norms, TD* dx,
                                      std::int64_t rows, std::int64_t cols) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
       r < rows; r += warps) {
    const TG* gr = dy + r * cols;
    const TY* yr = y + r * cols;
    TD* dr = dx + r * cols;
    const float norm = norms[r];
    const float inv = 1.0f / fmaxf(norm, kNormFloor);
    if (norm > kNormFloor) {
      float dot = 0.0f;
      for (std::int64_t c = lane; c < cols; c += 32)
        dot = fmaf(to_float(yr[c]), to_float(gr[c]), dot);
      dot = warp_reduce(dot, SumOp{});
      for (std::int64_t c = lane; c < cols; c += 32)
        dr[c] = from_float<TD>((to_float(gr[c]) - to_float(yr[c]) * dot) * inv);
    } else {
      for (std::int64_t c = lane; c < cols; c += 32) dr[c] = from_float<TD>(to_float(gr[c]) * inv);
    }
  }
}

// Copies whole rows in words of W (16, 8, 4, 2 or 1 bytes, the widest the layout allows).
template <class W, bool kScatter>
__global__ void move_rows(const W* src, W* dst, const std::int64_t* index, std::int64_t count,
                          std::int64_t table_rows, std::int64_t row_words, int* error_flag,
                          int code) {
  for (std::int64_t i = blockIdx.x; i < count; i += gridDim.x) {
    const std::int64_t j = index[i];
    if (j < 0 || j >= table_rows) {
      if (threadIdx.x == 0) atomicCAS(error_flag, 0, code);
      continue;
    }
    const W* from = src + (kScatter ? i : j) * row_words;
    W* to = dst + (kScatter ? j : i) * row_words;
    for (std::int64_t w = threadIdx.x; w < row_words; w += blockDim.x) to[w] = from[w];
  }
}

template <bool kScatter>
void launch_move_rows(const void* src, void* dst, const std::int64_t* index, std::int64_t count,
                      std::int64_t table_rows, std::int64_t row_bytes, int* error_flag, int code,
                      cudaStream_t stream) {
  if (count == 0) return;
  constexpr int kBlock = 128;
  const int blocks = grid_size(count, 1, 32);
  auto go = [&](auto word) {
    using W = decltype(word);
    move_rows<W, kScatter><<<blocks, kBlock, 0, stream>>>(
        static_cast<const W*>(src), static_cast<W*>(dst), index, count, table_rows,
        row_bytes / static_cast<std::int64_t>(sizeof(W)), error_flag, code);
  };
  auto fits = [&](std::size_t w) {
    return row_bytes % static_cast<std::int64_t>(w) == 0 && is_aligned(src, w) &&
           is_aligned(dst, w);
  };
  if (fits(16))
    go(uint4{});
  else if (fits(8))
    go(uint2{});
  else if (fits(4))
    go(std::uint32_t{});
  else if (fits(2))
    go(std::uint16_t{});
  else
    go(std::uint8_t{});
  PFC_CHECK_LAUNCH();
}

}  // namespace

void launch_l2_normalize_rows(const void* x, DType x_dtype, void* y, DType y_dtype, float* norms,
                              std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  if (rows == 0) return;
  dispatch_stored(x_dtype, "l2_normalize_rows", [&](auto x_tag) {
    dispatch_float(y_dtype, "l2_normalize_rows", [&](auto y_tag) {
      using TX = decltype(x_tag);
      using TY = decltype(y_tag);
      l2_normalize<TX, TY><<<row_blocks(rows), kWarpsPerBlock * 32, 0, stream>>>(
          static_cast<const TX*>(x), static_cast<TY*>(y), norms, rows, cols);
      PFC_CHECK_LAUNCH();
    });
  });
}

void launch_l2_normalize_rows_backward(const void* dy, DType dy_dtype, const void* y, DType y_dtype,
                                       const float* norms, void* dx, DType dx_dtype,
                                       std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  if (rows == 0) return;
  dispatch_float(dy_dtype, "l2_normalize_rows_backward", [&](auto g_tag) {
    dispatch_float(y_dtype, "l2_normalize_rows_backward", [&](auto y_tag) {
      dispatch_float(dx_dtype, "l2_normalize_rows_backward", [&](auto d_tag) {
        using TG = decltype(g_tag);
        using TY = decltype(y_tag);
        using TD = decltype(d_tag);
        l2_normalize_backward<TG, TY, TD><<<row_blocks(rows), kWarpsPerBlock * 32, 0, stream>>>(
            static_cast<const TG*>(dy), static_cast<const TY*>(y), norms, static_cast<TD*>(dx),
            rows, cols);
        PFC_CHECK_LAUNCH();
      });
    });
  });
}

void launch_gather_rows(const void* src, std::int64_t src_rows, const std::int64_t* index,
                        std::int64_t count, void* dst, std::int64_t row_bytes, int* error_flag,
                        int code, cudaStream_t stream) {
  launch_move_rows<false>(src, dst, index, count, src_rows, row_bytes, error_flag, code, stream);
}

void launch_scatter_rows(const void* src, const std::int64_t* index, std::int64_t count, void* dst,
                         std::int64_t dst_rows, std::int64_t row_bytes, int* error_flag, int code,
                         cudaStream_t stream) {
  launch_move_rows<true>(src, dst, index, count, dst_rows, row_bytes, error_flag, code, stream);
}

}  // namespace pfc::cuda
