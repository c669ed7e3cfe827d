/* selflaunch.c - see selflaunch.h. */
#include <config.h>

#include "selflaunch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UNDER "--under-mpirun"

int selflaunch(int argc, char **argv, int np)
{
    if (argc >= 2 && strcmp(argv[1], UNDER) == 0)
        return -1;
    if (getuid() == 0) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
    if (!getenv("MPIRUN"))
        setenv("MPIRUN", "mpirun", 1);
    /* Open MPI's session directory, /tmp/ompi.HOST.UID, is shared by
     * every job of the user, and two mpiruns started at once race on it
     * ("orte_init failed"): each run gets one of its own, as t/lib.sh's
     * own_session gives the shell tests. */
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "s=$(mktemp -d \"${TMPDIR:-/tmp}/aia-ompi.XXXXXX\") || exit 99; "
             "OMPI_MCA_orte_tmpdir_base=$s timeout -k 5 120 \"$MPIRUN\" "
             "-np %d --oversubscribe ${AIA_MPIRUN_FLAGS:-} \"$0\" " UNDER "; "
             "st=$?; rm -rf \"$s\"; exit $st",
             np);
    execl("/bin/sh", "sh", "-c", cmd, argv[0], (char *)NULL);
    printf("1..0 # SKIP cannot run /bin/sh\n");
    return 0;
}
