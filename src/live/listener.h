/* The trigger socket's listener (listener.c): one thread per process that
 * accepts triggers, shared by the services that answer them (on demand,
 * ondemand.c; the flight recorder, flight.c). Each service registers its
 * requests when it starts; the listener answers pings itself. */
#ifndef OPPROF_LIVE_LISTENER_H
#define OPPROF_LIVE_LISTENER_H

#include "common/compiler.h"

enum { OP_LISTEN_ON_DEMAND = 1, OP_LISTEN_FLIGHT = 2 };

/* One request a service answers. serve gets the connection c, the request
 * and the trigger's number n ({n} in file names). A refusal (refusal = 1)
 * answers only when no running service serves op: what a service tells a
 * request meant for another. */
typedef struct op_listen_op {
    const char *op;
    void (*serve)(int c, const char *req, unsigned long n);
    int refusal;
} op_listen_op;

typedef struct op_listen_service {
    int reason;                 /* one OP_LISTEN_* bit */
    const char *mode;           /* its name in a ping's mode= */
    const char *(*state)(void); /* a ping's state= while it is busy; NULL when idle */
    void (*forked)(void);       /* in a forked child, which has no listener */
    const op_listen_op *ops;    /* its requests, ended by {NULL} */
} op_listen_service;

/* Starts the listener (or adds a service to it): 0 or a status. */
int op_listener_acquire(const op_listen_service *s);

/* Drops a service; the last one stops the listener and removes its socket. */
void op_listener_release(int reason);

/* 1 while the service of reason is registered. */
int op_listener_has(int reason);

/* What op_listener_wait saw. */
enum {
    OP_WAIT_TIME = 0,   /* the time passed, or another request was answered */
    OP_WAIT_STOP = 1,   /* the listener is told to stop (the program exits), or cannot wait */
    OP_WAIT_HANGUP = 2, /* the client of the request being served is gone */
    OP_WAIT_EVENT = 3   /* event (a pipe) has bytes, now read */
};

/* For a request being served on connection c: waits up to timeout_ms,
 * answering pings and turning other requests away ("busy") meanwhile, and
 * watching c for the client's hangup and event (-1: none) for a byte. */
int op_listener_wait(int timeout_ms, int c, int event);

/* Replies on a connection: text, or "error STATUS message". */
void op_listen_reply(int c, const char *text);
void op_listen_reply_error(int c, int status, const char *fmt, ...) OP_PRINTF(3, 4);

#endif
