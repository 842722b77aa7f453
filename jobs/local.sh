#!/usr/bin/env bash
# The main job on one machine. Builds pfc (installing what is missing), then:
#  - with a GPU: the 3-million-identity Partial FC 0.1 headline config on one GPU, 200 steps;
#  - without:    input/smoke.toml on 2 CPU ranks, each with half the CPUs as its threads
#                 (OMP_NUM_THREADS, when not set already).
# It prints the training log (also kept in the run's training.log) and where metrics.h5 is.
# Each run writes a folder of its own, output/<config>-<date and time> (pfc train never starts
# a new run where another one is).
# Extra arguments go to `pfc train` (e.g. --set steps=50).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OPENBLAS_NUM_THREADS=1
pfc=build/bin/pfc
stamp=$(date +%Y%m%d-%H%M%S)
if "$pfc" info | grep -q "visible GPUs: [1-9]"; then
  out=output/3millions_pfc-$stamp
  mpiexec -n 1 "$pfc" train input/3millions_pfc.toml --set steps=200 --set output=\"$out\" "$@"
else
  out=output/smoke-$stamp
  # 2 ranks x OMP_NUM_THREADS threads, the CPUs shared between them; unbound, so that a rank's
  # threads may use the CPUs given to it.
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(($(nproc) / 2 > 0 ? $(nproc) / 2 : 1))}
  mpiexec -n 2 --bind-to none "$pfc" train input/smoke.toml --set output=\"$out\" "$@"
fi
echo "metrics: $out/metrics.h5   (h5ls -r $out/metrics.h5; checkpoints in $out/ckpt;" \
  "log in $out/training.log)"
