#!/usr/bin/env bash
# pfc against its peers on the same CPU cores, interleaved in one run (a benchmark, not a test):
#   training   pfc train vs PyTorch (cpu_peers.py: arcface_torch's iresnet, or vit_t with its
#              masking and DropPath, as small torch modules; the same batch, 1000 classes, SGD),
#              r18, r50 and vit_t at batch 8 and 32, in fp32 and, where the CPU has bf16
#              instructions, pfc's fp16 = true (bf16 products) and PyTorch's bf16 autocast;
#   embedding  pfc embed (its fused inference network, in fp32 and, where the CPU has bf16
#              instructions, with --precision bf16) vs onnxruntime fp32 running pfc's own
#              exported model, r50 and vit_t at batch 1 and 64;
#   verify     pfc verify (each image and its mirror image), fp32 and bf16, vs onnxruntime's two
#              forwards per image, r50 and vit_t at pfc verify's batch;
# each at two layouts of the cores: 2 ranks x 1 thread and 1 rank x 2 threads (OMP_NUM_THREADS;
# PyTorch as 2 DistributedDataParallel processes over gloo or 1 process of 2 threads;
# onnxruntime as 2 processes of 1 thread or 1 of 2). Prints a table per kind, pfc / peer per
# row. onnxruntime's CPU provider offers no bf16 on x86 (its bf16 fast-math option is for
# ARM64) and its int8 needs a model quantized by its Python tools (the `onnx` package, which
# this environment does not hold), so it runs in fp32.
#
#   tests/bench/cpu_vs_peers.sh [BUILD_DIR]       (default build; run from the project folder)
# It starts with one core's multiply-add ceiling in f32 and bf16 (pfc_cpu_peak).
# Variables: BENCH_STEPS (timed training steps, 6), BENCH_REPEATS (interleaved rounds, 2; the
# best of each is kept), BENCH_CASES (a regular expression over the case names, all by default),
# BENCH_WORK (a folder to keep the files in). The peers come from a PyPI virtual environment
# under the build folder (tests/support/python_venv.sh torch torch onnxruntime numpy).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
pfc=$build/bin/pfc
steps=${BENCH_STEPS:-6} repeats=${BENCH_REPEATS:-2} cases=${BENCH_CASES:-.}
warmup=2 classes=1000 embed_images=384 verify_pairs=96
# arcface_torch's networks over input/smoke.toml's small defaults.
network_args() {  # network_args NET: sets $net_args to the --set options of r18, r50 or vit_t
  net_args=(--set network=\"$1\" --set image_size=112 --set embedding_size=512)
  [[ $1 == vit* ]] || net_args+=(--set widths=[64,128,256,512])
}
# One OpenBLAS thread per process: its pthreads spin between calls beside the OpenMP threads.
export PFC_BINARY_DIR=$build OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
python=$(bash "$root/tests/support/python_venv.sh" torch torch onnxruntime numpy)
work=${BENCH_WORK:-$(mktemp -d)}
mkdir -p "$work"
echo "cpu_vs_peers: $(nproc) CPUs, $("$pfc" info | grep 'CPU backend'), files in $work"
# What the cores can do at all, both busy as in the layouts below: a network's multiply-adds
# per image over it is the least time an image can take, whoever computes it.
"$build/bin/pfc_cpu_peak" >/dev/null &  # only keeps the other core busy
"$build/bin/pfc_cpu_peak" >"$work/peak-0.txt"
wait
sed 's/^/ceiling, both cores busy: /' "$work/peak-0.txt"

# layout NAME -> ranks and threads
ranks_of() { [ "$1" = 2x1 ] && echo 2 || echo 1; }
threads_of() { [ "$1" = 2x1 ] && echo 1 || echo 2; }

pfc_train() {  # pfc_train NET BATCH LAYOUT FP16: samples/s (steady state, all ranks)
  local out=$work/train-$1-$2-$3-$4-$RANDOM ranks threads
  ranks=$(ranks_of "$3") threads=$(threads_of "$3")
  network_args "$1"
  OMP_NUM_THREADS=$threads mpiexec -n "$ranks" --bind-to none "$pfc" train "$root/input/smoke.toml" \
    "${net_args[@]}" --set batch_size="$2" \
    --set num_classes=$classes --set method=\"pfc\" --set sample_rate=1.0 --set fp16=$4 \
    --set steps=$((warmup + steps)) --set frequent=1 --set checkpoint_every=-1 \
    --set output=\""$out"\" >"$out.log" 2>&1 || { tail -5 "$out.log" >&2; echo 0; return; }
  /usr/bin/python3 -c "import h5py,sys; f=h5py.File(sys.argv[1],'r'); import numpy as np; \
s=f['steps/samples_per_s'][:]; print(f'{np.median(s[$warmup:]):.3f}')" "$out/metrics.h5"
}

torch_train() {  # torch_train NET BATCH LAYOUT PRECISION (fp32, or bf16 autocast)
  local ranks threads
  ranks=$(ranks_of "$3") threads=$(threads_of "$3")
  if [ "$ranks" = 1 ]; then
    "$python" "$here/cpu_peers.py" train "$1" "$2" $classes $steps $warmup "$threads" "$4"
  else
    local port=$((29500 + RANDOM % 1000)) pids=()
    for r in 0 1; do
      WORLD_SIZE=2 RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        "$python" "$here/cpu_peers.py" train "$1" "$2" $classes $steps $warmup 1 "$4" &
      pids+=($!)
    done
    wait "${pids[@]}"
  fi | awk '/samples\/s/ {print $2}'
}

# A trained NET (one step), its ONNX export and a verification file of 112x112 faces.
prepare_model() {  # prepare_model NET
  [ -f "$work/$1.onnx" ] && return
  network_args "$1"
  OMP_NUM_THREADS=2 "$pfc" train "$root/input/smoke.toml" "${net_args[@]}" \
    --set batch_size=2 --set steps=1 \
    --set checkpoint_every=1 --set output=\""$work/$1"\" >"$work/$1.log" 2>&1
  "$pfc" export "$work/$1" "$work/$1.onnx" >/dev/null
  [ -f "$work/embed.bin" ] && return
  "$build/bin/pfc_make_faces" "$work/faces" 24 $((verify_pairs / 6)) 112 --photos 0 >/dev/null
  python3 "$root/tests/integration/learning/write_verification_bin.py" "$work/faces" \
    $verify_pairs 7 "$work/faces.bin" "$work/faces_py3.bin" >/dev/null
  # embed_images images from the faces, repeated.
  python3 - "$work" $embed_images <<'PY'
import pickle, sys
work, n = sys.argv[1], int(sys.argv[2])
bins, issame = pickle.load(open(f"{work}/faces_py3.bin", "rb"), encoding="bytes")
images = [bins[i % len(bins)] for i in range(n)]
pickle.dump((images, [True] * (n // 2)), open(f"{work}/embed.bin", "wb"), protocol=4)
PY
}

pfc_embed() {  # pfc_embed NET BATCH LAYOUT PRECISION: images/s from pfc's own progress line
  local ranks threads log=$work/embed-$1-$2-$3-$4.log
  ranks=$(ranks_of "$3") threads=$(threads_of "$3")
  OMP_NUM_THREADS=$threads mpiexec -n "$ranks" --bind-to none "$pfc" embed "$work/$1" \
    "$work/embed.bin" --batch-size "$2" --precision "$4" \
    --output "$work/embed-$1-$2-$3-$4.h5" >"$log" 2>&1 || { tail -5 "$log" >&2; echo 0; return; }
  grep -o '[0-9.]* images/s' "$log" | tail -1 | awk '{print $1}'
}

pfc_verify() {  # pfc_verify NET LAYOUT PRECISION: images/s (each with its mirror image)
  local ranks threads log=$work/verify-$1-$2-$3.log
  ranks=$(ranks_of "$2") threads=$(threads_of "$2")
  OMP_NUM_THREADS=$threads mpiexec -n "$ranks" --bind-to none "$pfc" verify "$work/$1" \
    "$work/faces.bin" --precision "$3" >"$log" 2>&1 || { tail -5 "$log" >&2; echo 0; return; }
  grep -o '[0-9.]* ms per image' "$log" | awk '{printf "%.3f\n", 1000 / $1}'
}

ort_embed() {  # ort_embed NET BATCH COPIES LAYOUT IMAGES: images/s, the images shared by the ranks
  local ranks threads
  ranks=$(ranks_of "$4") threads=$(threads_of "$4")
  local per=$(($5 / ranks)) pids=() r
  rm -f "$work"/ort-[0-9].out
  for ((r = 0; r < ranks; r++)); do
    "$python" "$here/cpu_peers.py" embed "$work/$1.onnx" "$2" $per "$3" "$threads" \
      >"$work/ort-$r.out" &
    pids+=($!)
  done
  wait "${pids[@]}"
  cat "$work"/ort-[0-9].out | awk '/images\/s/ {s += $2} END {printf "%.3f\n", s}'
}

best() { printf '%s\n' "$@" | sort -g | tail -1; }
declare -A ours theirs bf16 theirs_bf16
record() {  # record CASE OURS THEIRS [OURS_BF16 [THEIRS_BF16]]
  ours[$1]=$(best ${ours[$1]:-} "$2")
  theirs[$1]=$(best ${theirs[$1]:-} "$3")
  [ -z "${4:-}" ] || bf16[$1]=$(best ${bf16[$1]:-} "$4")
  [ -z "${5:-}" ] || theirs_bf16[$1]=$(best ${theirs_bf16[$1]:-} "$5")
}
# pfc's bf16 rows where the CPU has bf16 instructions (pfc info: oneDNN's instruction set).
has_bf16=false
grep -qE '^CPU backend: oneDNN .*(BF16|AMX)' <<<"$("$pfc" info)" && has_bf16=true

order=() c=""
for layout in 2x1 1x2; do
  for net in r18 r50 vit_t; do
    for batch in 8 32; do order+=("train $net batch $batch $layout"); done
  done
  for net in r50 vit_t; do
    for batch in 1 64; do order+=("embed $net batch $batch $layout"); done
    order+=("verify $net mirror, batch 16 $layout")
  done
done
for ((round = 1; round <= repeats; round++)); do
  for name in "${order[@]}"; do
    [[ $name =~ $cases ]] || continue
    # "train r18 batch 8 2x1", "embed r50 batch 64 1x2", "verify r50 mirror, batch 16 2x1"
    read -r what net _ <<<"$name"
    layout=${name##* } arg=${name% *} arg=${arg##* }
    case $what in
      train)
        a=$(pfc_train "$net" "$arg" "$layout" false)
        b=$(torch_train "$net" "$arg" "$layout" fp32)
        if $has_bf16; then
          c=$(pfc_train "$net" "$arg" "$layout" true)
          d=$(torch_train "$net" "$arg" "$layout" bf16)
        fi
        ;;
      embed)
        prepare_model "$net"
        a=$(pfc_embed "$net" "$arg" "$layout" f32)
        b=$(ort_embed "$net" "$arg" 1 "$layout" $embed_images)
        ! $has_bf16 || c=$(pfc_embed "$net" "$arg" "$layout" bf16)
        ;;
      verify)
        prepare_model "$net"
        a=$(pfc_verify "$net" "$layout" f32)
        b=$(ort_embed "$net" "$arg" 2 "$layout" $((2 * verify_pairs)))
        ! $has_bf16 || c=$(pfc_verify "$net" "$layout" bf16)
        ;;
    esac
    record "$name" "$a" "$b" "${c:-}" "${d:-}"
    echo "round $round: $name: pfc $a${c:+ (bf16 $c)}, peer $b${d:+ (bf16 $d)}" >&2
    c="" d=""
  done
done

# "12.34", or "-" where a precision did not run; and a / b as "1.23x".
value() { awk -v v="${1:-}" 'BEGIN {print (v == "" ? "-" : sprintf("%.2f", v))}'; }
ratio() {
  awk -v a="${1:-}" -v b="${2:-}" \
    'BEGIN {print (a == "" || b == "" || b <= 0 ? "-" : sprintf("%.2fx", a / b))}'
}
if [[ "${!ours[*]}" == *train* ]]; then
  printf '\n| case (ranks x threads), samples/s | pfc fp32 | pfc bf16 | PyTorch fp32 |'
  printf ' PyTorch bf16 | pfc fp32 / PyTorch fp32 | pfc bf16 / PyTorch fp32 |'
  printf ' pfc bf16 / PyTorch bf16 |\n|---|---|---|---|---|---|---|---|\n'
fi
for name in "${order[@]}"; do
  [ -n "${ours[$name]:-}" ] && [[ $name == train* ]] || continue
  a=${ours[$name]} b=${theirs[$name]} c=${bf16[$name]:-} d=${theirs_bf16[$name]:-}
  echo "| $name | $(value "$a") | $(value "$c") | $(value "$b") | $(value "$d") |" \
    "$(ratio "$a" "$b") | $(ratio "$c" "$b") | $(ratio "$c" "$d") |"
done
[[ "${!ours[*]}" =~ embed|verify ]] || exit 0
printf '\n| case (ranks x threads), images/s | pfc fp32 (fused) | pfc bf16 | onnxruntime fp32 |'
printf ' pfc fp32 / ort | pfc bf16 / ort |\n|---|---|---|---|---|---|\n'
for name in "${order[@]}"; do
  [ -n "${ours[$name]:-}" ] && [[ $name != train* ]] || continue
  awk -v n="$name" -v a="${ours[$name]}" -v b="${theirs[$name]}" -v c="${bf16[$name]:-}" \
    'BEGIN {r = (b > 0 ? a / b : 0); printf "| %s | %.2f | %s | %.2f | %.2fx | %s |\n", n, a,
            (c == "" ? "-" : sprintf("%.2f", c)), b, r,
            (c == "" || b <= 0 ? "-" : sprintf("%.2fx", c / b))}'
done
