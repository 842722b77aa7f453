-- Lmod modulefile for pfc. It finds pfc from its own location, so the same file serves
--   an installed tree:  module use <prefix>/share/pfc/modules; module load pfc
--   the source tree:    module use <checkout>/modules; module load pfc
--                       (pfc from <checkout>/build, or from $PFC_BUILD_DIR when set)
help([[
pfc: PartialFC face-recognition training over MPI, on CPU or CUDA (NCCL, cuDNN, HDF5).

  pfc info                          the build, its backends and the visible GPUs
  srun --mpi=pmix pfc train input/base.toml --set num_classes=1000000
  sbatch $PFC_JOBS/rows/row_1m.sbatch      one row of the seed's benchmark
  pfc report output/bench           the benchmark tables from the runs' metrics.h5

Sets PATH (pfc), LD_LIBRARY_PATH (<prefix>/lib), PFC_HOME (the installed prefix or the
checkout), PFC_JOBS (the Slurm scripts; see jobs/README.md) and, from a checkout, PFC_BUILD
(the build folder used).
]])
whatis("Name: pfc")
whatis("Description: PartialFC face-recognition training (MPI, NCCL, cuDNN, HDF5)")
whatis("URL: see README.md in PFC_HOME")

local function parent(path)
  return (path:gsub("/+$", ""):match("^(.*)/[^/]*$")) or "."
end

local here = parent(myFileName())
local installed_suffix = "/share/pfc/modules"
local home, bin, lib, jobs
if here:sub(-#installed_suffix) == installed_suffix then
  home = here:sub(1, #here - #installed_suffix)
  bin, lib, jobs = home .. "/bin", home .. "/lib", home .. "/share/pfc/jobs"
else
  home = parent(here)
  local build = os.getenv("PFC_BUILD_DIR") or "build"
  if build:sub(1, 1) ~= "/" then build = home .. "/" .. build end
  -- Unloading removes what loading added, whatever PFC_BUILD_DIR says by then.
  if mode() == "unload" and os.getenv("PFC_BUILD") then build = os.getenv("PFC_BUILD") end
  setenv("PFC_BUILD", build)
  bin, lib, jobs = build .. "/bin", build .. "/lib", home .. "/jobs"
end

if not isFile(bin .. "/pfc") and mode() == "load" then
  LmodMessage("pfc: no executable at " .. bin .. "/pfc yet (build it, or set PFC_BUILD_DIR)")
end
prepend_path("PATH", bin)
if isDir(lib) then
  prepend_path("LD_LIBRARY_PATH", lib)
end
setenv("PFC_HOME", home)
setenv("PFC_JOBS", jobs)
