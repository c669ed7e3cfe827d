#!/bin/sh
# t/lib.sh passes --oversubscribe to Open MPI's mpirun only: MPICH's
# hydra (and others) oversubscribe as they are and refuse the flag.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

printf '#!/bin/sh\necho "HYDRA build details:"\necho "    Version: 4.0"\n' >hydra
printf '#!/bin/sh\necho "mpirun (Open MPI) 4.1.4"\n' >ompi
chmod +x hydra ompi
flags() { (unset AIA_MPIRUN_FLAGS; MPIRUN=$1; . "$top_srcdir/t/lib.sh"; printf '%s' "$AIA_MPIRUN_FLAGS"); }
is "$(flags ./ompi)" "--oversubscribe" "Open MPI's mpirun gets --oversubscribe"
is "$(flags ./hydra)" "" "MPICH's mpiexec does not"
is "$(flags "$MPIRUN")" "$AIA_MPIRUN_FLAGS" "the tests' own launcher is detected the same way"
run 2 --version
out=$(cat out.txt err.txt)
like "$out" "^aiarun " "and runs aiarun with it"
done_testing
