/* bell.h - doorbells: a rank that sleeps waiting for a message is woken by
 * the rank on its node that sent it, instead of at the end of its sleep.
 *
 * Open MPI's shared-memory transport has no blocking receive: a waiting
 * rank either tests in a loop, taking a core, or sleeps between tests and
 * notices a message up to a sleep late.  On a node with more ranks than
 * cores every hop of a message (a query down a tree, an answer up) then
 * costs a sleep.  A doorbell is a 32-bit word per rank in a page the
 * node's ranks share: a sender adds 1 to the receiver's word after every
 * send, and a receiver that sleeps waits on its word with a futex, so the
 * kernel wakes it as soon as the message is there.  The sleep keeps its
 * timeout: a message from another node, or a step of a large message's
 * rendezvous, rings no bell and is noticed as before. */
#ifndef AIARUN_BELL_H
#define AIARUN_BELL_H

#include <mpi.h>

/* Share a page of doorbells between the ranks of node (the ranks of
 * MPI_COMM_WORLD on this node); collective over node.  Where the system
 * has no futexes or shared memory, every bell call below does nothing
 * and sleeps are plain sleeps. */
void bell_setup(MPI_Comm node);

/* Whether sleeping waits wait on this rank's bell (pool.wake: bell), or
 * sleep out their time (timer).  Rings are sent either way. */
void bell_use(int on);

/* Tell world rank dest that a message was sent to it: wakes it if it
 * waits on its bell; a no-op for a rank on another node. */
void bell_ring(int dest);

/* How the runtime sends: MPI_Isend or MPI_Send of count bytes to world
 * rank dest on MPI_COMM_WORLD, then, when it succeeded, bell_ring(dest),
 * so that every message rings its receiver.  Return MPI's code. */
int bell_isend(const void *buf, int count, int dest, int tag,
               MPI_Request *req);
int bell_send(const void *buf, int count, int dest, int tag);

/* Before a sleep: returns a ticket, the bell's count now, or -1 where
 * there is no bell to wait on.  Test once more for the message after
 * bell_arm: a message sent in between rang a bell that bell_sleep then
 * does not wait for. */
long bell_arm(void);

/* Sleep for s seconds, or until the bell rings past ticket; a ticket of
 * -1 sleeps the whole time.  Disarms the bell. */
void bell_sleep(long ticket, double s);

/* Line for the log (static): whether bells are set up, and why not. */
const char *bell_state(void);

#endif
