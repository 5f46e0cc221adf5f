/* The pool keeper: a background thread that maps full-size chunks into the
 * pool (pool.h) ahead of the recording threads, so that the pool holds
 * OP_KEEP_AHEAD_CHUNKS again soon after a thread takes one (keeper.c says
 * why). */
#ifndef OPPROF_CAPTURE_KEEPER_H
#define OPPROF_CAPTURE_KEEPER_H

/* Starts the keeper, once, at a session's start (under the session lock;
 * it runs from then on); the pool wakes it from the chunk slow path. */
void op_keeper_start(void);

#endif
