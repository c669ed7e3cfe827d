/* selflaunch.h - a C test that needs several MPI ranks starts itself on
 * them, so that the test harness can run it without arguments. */
#ifndef AIARUN_SELFLAUNCH_H
#define AIARUN_SELFLAUNCH_H

/* Started by the harness (no argument of selflaunch's), replace this
 * process with argv[0] on np ranks under $MPIRUN (default mpirun; as
 * root with Open MPI's switches for root), with --oversubscribe and
 * $AIA_MPIRUN_FLAGS, in an Open MPI session directory of its own
 * (removed after), killed after 120 s; when that cannot be started,
 * print a TAP skip and return 0, the exit status to give.  Started that
 * way already: return -1, and the test goes on under mpirun. */
int selflaunch(int argc, char **argv, int np);

#endif
