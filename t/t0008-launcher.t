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

# One MPI: aiarun links one MPI library, and the tests' launcher is that
# MPI's (configure's MPIRUN), else every rank would run alone.
kind() {
    case $("$1" --version 2>&1 </dev/null) in
    *"Open MPI"* | *OpenRTE*) echo openmpi ;;
    *HYDRA* | *MPICH*) echo mpich ;;
    *) echo unknown ;;
    esac
}
# MPICH's library is libmpich.so.12, or libmpi.so.12 where it is built
# as it comes; Open MPI's is libmpi.so.40 and on.
libs=$(ldd "$AIARUN" | grep -oE 'lib(mpi|mpich)\.so\.[0-9]+' | sort -u |
    tr '\n' ' ')
case $libs in
'libmpich.so.'[0-9]*' ' | 'libmpi.so.12 ') built=mpich other=mpirun.openmpi
    sz=OMPI_COMM_WORLD_SIZE rk=OMPI_COMM_WORLD_RANK ;;
'libmpi.so.'[0-9]*' ') built=openmpi other=mpirun.mpich sz=PMI_SIZE
    rk=PMI_RANK ;;
*) built=several other= sz=PMI_SIZE rk=PMI_RANK ;;
esac
like "$libs" "^lib[a-z]+\.so\.[0-9]+ \$" "aiarun links one MPI library ($libs)"
launcher=$(kind "$MPIRUN")
if [ "$launcher" = unknown ]; then
    test_count=$((test_count + 1))
    echo "ok $test_count # SKIP $MPIRUN is neither Open MPI's nor MPICH's"
else
    is "$launcher" "$built" "the tests' launcher $MPIRUN is aiarun's MPI"
fi

# Started by the other MPI's launcher, each rank sees a world of one while
# the launcher's environment says 3: one line from the launcher's rank 0
# names the mismatch, the others say nothing, all exit 2.
job=$top_srcdir/etc/sgd-lrmse.yaml
err=$(env "$sz=3" "$rk=0" timeout 60 "$AIARUN" "$job" 2>&1 >/dev/null); rc=$?
is "$rc" 2 "a rank alone while $sz=3 exits 2"
like "$err" "built for .*launcher of another MPI.* 3 ranks \\($sz=3\\)" \
    "naming the likely mismatch"
is "$(printf '%s\n' "$err" | wc -l)" 1 "in one line"
err=$(env "$sz=3" "$rk=1" timeout 60 "$AIARUN" "$job" 2>&1 >/dev/null); rc=$?
is "$rc:$err" "2:" "the launcher's other ranks exit 2 saying nothing"
if [ -n "$other" ] && command -v "$other" >/dev/null 2>&1; then
    oflags=
    [ "$(kind "$other")" = openmpi ] && oflags=--oversubscribe
    err=$(own_session timeout -k 5 120 "$other" -np 3 $oflags "$AIARUN" \
        "$job" 2>&1 >/dev/null)
    rc=$?
    expect_ok "under $other the job fails ($rc)" [ "$rc" != 0 ]
    is "$(printf '%s\n' "$err" | grep -c 'launcher of another MPI')" 1 \
        "with one line naming the mismatch"
    unlike "$err" "needs a coordinator" "not every rank asking for one"
else
    test_count=$((test_count + 1))
    echo "ok $test_count # SKIP no ${other:-other MPI's launcher} installed"
fi
done_testing
