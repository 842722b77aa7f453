# Sourced by the sweeps (emulated_sweep.sh, plan_sweep.sh): what both need of the checkout.

# benchmark_rows JOBS_DIR: the benchmark's rows as the row scripts name them, one
# "IDENTITIES ROW" line each ("125000 row_0125k"), fewest identities first.
benchmark_rows() {
  sed -n 's/.*bench_row\.sh"* *\(row_[^ ]*\) \([0-9][0-9]*\).*/\2 \1/p' "$1"/rows/*.sbatch | sort -n
}

# sweep_pfc_bin JOBS_DIR SWEEP: the pfc executable: PFC_BIN, else pfc on PATH, else the
# checkout's build; exits 2 naming SWEEP when there is none.
sweep_pfc_bin() {
  local bin=${PFC_BIN:-} candidate
  if [[ -z $bin ]]; then
    for candidate in "$(command -v pfc || true)" "$(dirname "$1")/build/bin/pfc"; do
      [[ -n $candidate && -x $candidate ]] && { bin=$candidate; break; }
    done
  fi
  [[ -x $bin ]] || { echo "$2: no pfc executable (set PFC_BIN)" >&2; exit 2; }
  echo "$bin"
}
