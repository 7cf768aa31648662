# Sourced by the run scripts: lets Open MPI's mpirun run as root (as on CI machines and in
# containers) and place more ranks than cores.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1

# launch_ranks NP COMMAND...: mpirun with --oversubscribe only when the ranks outnumber the cores,
# because it also makes Open MPI yield the core while it waits: a run that fits the cores then
# measures Open MPI as it normally runs.
launch_ranks() {
  local ranks=$1
  shift
  if ((ranks > $(nproc))); then
    mpirun --oversubscribe -np "$ranks" "$@"
  else
    mpirun -np "$ranks" "$@"
  fi
}
