#!/usr/bin/env bash
# The CUDA build's GPU code (cmake/Cuda.cmake): without CMAKE_CUDA_ARCHITECTURES the list is
# machine code for 70 (where this nvcc still builds it), 75, 80 and 90 plus PTX of the newest;
# every CUDA object is compiled for exactly that list (compile_commands.json), and where
# cuobjdump is on PATH the pfc executable holds that machine code and PTX. Skipped (77) in a
# CPU-only build.
set -uo pipefail

build=${PFC_BINARY_DIR:?PFC_BINARY_DIR must name the build folder}
src=${PFC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/check_support.sh"
cache=$build/CMakeCache.txt

archs=$(sed -n 's/^PFC_CUDA_ARCHITECTURES:INTERNAL=//p' "$cache")
[[ -n $archs ]] || { echo "CPU-only build: no GPU code to check"; exit 77; }

if ! grep -q '^CMAKE_CUDA_ARCHITECTURES:' "$cache"; then
  nvcc=$(sed -n 's/^PFC_CUDA_COMPILER:INTERNAL=//p' "$cache")
  codes=$("$nvcc" --list-gpu-code)
  expected=""
  for arch in 70 75 80 90; do
    grep -qx "sm_$arch" <<<"$codes" && expected+="$arch-real;"
  done
  expected=${expected%-real;}
  [[ $archs == "$expected" ]] || fail "default architectures '$archs', want '$expected'"
  if ! grep -qx sm_70 <<<"$codes"; then
    echo "this nvcc cannot build sm_70 (Volta): the default leaves it out"
  fi
fi

# "75-real;90" -> sm: "75 90", ptx: "90"
sm=$(tr ';' '\n' <<<"$archs" | sed 's/-real$//; s/-virtual$//' | grep -v '^$' | sort -u | xargs)
ptx=$(tr ';' '\n' <<<"$archs" | grep -v -- '-real$' | sed 's/-virtual$//' | sort -u | xargs)

python3 - "$build/compile_commands.json" "$sm" "$ptx" <<'PY' || fail "compile commands"
import json, re, sys
commands, sm, ptx = sys.argv[1], set(sys.argv[2].split()), set(sys.argv[3].split())
cu = [c for c in json.load(open(commands)) if c["file"].endswith(".cu")]
assert cu, "no CUDA objects in " + commands
for c in cu:
    text = c.get("command") or " ".join(c["arguments"])
    got_sm, got_ptx = set(), set()
    for arch, codes in re.findall(r"arch=compute_(\w+),code=\[?([\w,]+)\]?", text):
        for code in codes.split(","):
            (got_sm if code.startswith("sm_") else got_ptx).add(code.split("_")[1])
    if (got_sm, got_ptx) != (sm, ptx):
        sys.exit(f"{c['file']}: machine code {sorted(got_sm)}, PTX {sorted(got_ptx)}; "
                 f"want {sorted(sm)} and {sorted(ptx)}")
print(f"{len(cu)} CUDA objects: machine code for {sorted(sm)}, PTX for {sorted(ptx)}")
PY

if command -v cuobjdump >/dev/null; then
  elf=$(cuobjdump --list-elf "$build/bin/pfc" | grep -o 'sm_[0-9]*' | sed 's/sm_//' | sort -u |
    xargs)
  in_ptx=$(cuobjdump --list-ptx "$build/bin/pfc" | grep -o 'sm_[0-9]*' | sed 's/sm_//' |
    sort -u | xargs)
  [[ $elf == "$sm" ]] || fail "pfc holds machine code for '$elf', want '$sm'"
  [[ $in_ptx == "$ptx" ]] || fail "pfc holds PTX for '$in_ptx', want '$ptx'"
  echo "cuobjdump: pfc holds machine code for $elf and PTX for $in_ptx"
else
  echo "cuobjdump not on PATH: the executable itself is not inspected"
fi
((failures == 0))
