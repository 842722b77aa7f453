# Sourced by the sweeps (emulated_sweep.sh, plan_sweep.sh): the benchmark's rows as the row
# scripts name them, one "IDENTITIES ROW" line each ("125000 row_0125k"), fewest identities first.
benchmark_rows() {  # benchmark_rows JOBS_DIR
  sed -n 's/.*bench_row\.sh"* *\(row_[^ ]*\) \([0-9][0-9]*\).*/\2 \1/p' "$1"/rows/*.sbatch | sort -n
}
