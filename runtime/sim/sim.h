/* sim.h - aiarun --simulate N: a job run in virtual time, in one process.
 *
 * The coordinator's protocol runs through the same state machine as under
 * mpirun (proto.c), fed by a virtual clock: an event queue of answer
 * arrivals whose times come from the latency models (latency.c), answers
 * computed by the job's real plugins for each of N workers (simpool.c).
 * The history, answer log, per-worker table and report are the
 * recorder's, as in a real run, in virtual seconds.  The same job and
 * seed give the same bytes on every machine, under any load (unless
 * simulate.compute is measured).
 */
#ifndef AIARUN_SIM_H
#define AIARUN_SIM_H

/* Simulate the job file at path with n workers; overrides as for a run
 * (NULL-terminated, may be NULL); resume: on from output.checkpoint, as
 * aiarun --resume.  Prints like rank 0 of a run; returns
 * the exit status (RUN_OK, RUN_FAILED, RUN_BAD_JOB). */
int sim_main(const char *path, const char *const *overrides, int n,
             int resume);

#endif
