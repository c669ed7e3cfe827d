/* guard.h - what ends a run cleanly from outside its loop, for both
 * drivers: the signals that ask a run to stop, caught into one flag that
 * the loops read, and a watchdog over plugin calls for the simulator,
 * where one call that never returns holds every simulated rank. */
#ifndef AIARUN_GUARD_H
#define AIARUN_GUARD_H

#include <signal.h>

/* The signal that asked this process to stop (0: none), set by the
 * handler guard_catch_signals installs. */
extern volatile sig_atomic_t guard_signal;

/* Catch SIGTERM, SIGINT, SIGHUP and SIGUSR1 (Slurm's --signal) into
 * guard_signal.  A second SIGTERM, SIGINT or SIGHUP takes the default
 * action, so a process stuck where the flag is not read can still be
 * ended.  Installed before any plugin is opened: a signal during a
 * plugin's open or create is then noticed when the run starts. */
void guard_catch_signals(void);

/* Ignore SIGTERM, SIGINT, SIGHUP and SIGUSR1 (MPI workers: mpirun
 * forwards them to every rank, and the coordinator decides). */
void guard_ignore_signals(void);

/* Start watching plugin calls: when one call (guard_call) has not
 * returned after seconds, expired(what, rank, seconds) is called on the
 * watchdog's thread; it must end the process.  0 (seconds <= 0: no
 * bound), or -1 when the thread cannot be started.  One watch at a
 * time. */
int guard_watch(double seconds,
                void (*expired)(const char *what, int rank, double seconds));

/* A plugin call begins (what: "the algorithm's worker step", rank: the
 * rank it stands for), or ended (what NULL).  Two stores: cheap enough
 * for every call of a simulation. */
void guard_call(const char *what, int rank);

/* Stop watching (waits for the thread); a no-op when not watching. */
void guard_unwatch(void);

#endif
