/* watchdog.h - a bound on the set-up (pool.setup_timeout). */
#ifndef AIARUN_WATCHDOG_H
#define AIARUN_WATCHDOG_H

/* Start watching: unless watchdog_stop comes within seconds, the job is
 * aborted with a line saying what this rank was doing (0: no bound).
 * 0, or -1 when the thread cannot be started. */
int watchdog_start(double seconds);

/* What this rank is doing now ("creating the algorithm"), for the
 * message; NULL: waiting for the other ranks. */
void watchdog_phase(const char *what);

/* The set-up is over: stop watching (waits for the thread). */
void watchdog_stop(void);

#endif
