# Sourced by the mpirun CLI tests (mpi_sort.sh, mpi_topk.sh) with their arguments RADIXMESH MPIEXEC:
# sets rxm (the CLI, absolute) and mpiexec, makes a scratch folder the current one (removed on
# exit), and defines run_ranks NP ARGS... (the CLI on NP ranks, stopped after 120 s).
rxm=$(readlink -f "$1")
mpiexec=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
run_ranks() { local np=$1; shift; timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe -np "$np" "$rxm" "$@"; }
