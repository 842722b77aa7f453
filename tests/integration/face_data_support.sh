# Sourced first by the integration scripts that build face datasets: $make_faces
# (pfc_make_faces) and $python (/usr/bin/python3, which reads metrics.h5 with h5py); the script
# is skipped (77) when pfc, pfc_make_faces or h5py is missing, and runs in the source tree.
make_faces="${PFC_BINARY_DIR:-.}/bin/pfc_make_faces"
python=/usr/bin/python3
if [ -z "${PFC:-}" ] || [ ! -x "$PFC" ] || [ ! -x "$make_faces" ]; then
  echo "skipped: ${PFC:-\$PFC} or $make_faces is not built"
  exit 77
fi
if ! "$python" -c 'import h5py' 2>/dev/null; then
  echo "skipped: $python cannot import h5py"
  exit 77
fi
cd "${PFC_SOURCE_DIR:?}"
