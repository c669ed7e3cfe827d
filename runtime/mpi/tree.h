/* tree.h - tree aggregation: the shape of the tree, and a worker's part.
 *
 * Node 0 is the coordinator and node w + 1 the pool's worker w; node t's
 * children are t * arity + 1 .. t * arity + arity.  Each round the query
 * goes down the tree, every worker forwards it to its children, answers
 * it, and sends up the rows-weighted mean of its answer and its
 * children's, with the sum of their rows: the coordinator absorbs one
 * answer per child, and no rank receives more than arity messages.
 */
#ifndef AIARUN_TREE_H
#define AIARUN_TREE_H

#include "session/setup.h"

/* tree_parent and tree_children, the tree's shape, are in proto.h. */

/* The rank of node t. */
int tree_rank(const struct setup *s, int t);

/* A worker's loop in tree mode; returns the job's exit status. */
int tree_worker_run(struct setup *s);

#endif
