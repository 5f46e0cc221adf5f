/* A minimal client of the browser's DevTools protocol over the pipe that
 * --remote-debugging-pipe opens (the browser reads commands on its fd 3 and
 * writes replies on its fd 4, each message JSON ending in a NUL byte). The
 * report tests use it to read a page back once the page says it is drawn,
 * with the page's clocks real: a report whose data the browser inflates
 * asynchronously is drawn after its load event, where --dump-dom has
 * already printed, and --virtual-time-budget would freeze performance.now()
 * within each task. */
#ifndef OPPROF_TESTS_REPORT_DEVTOOLS_H
#define OPPROF_TESTS_REPORT_DEVTOOLS_H

/* Evaluates expr in the browser's first page, awaiting the promise it
 * returns, and gives back its string value (malloc'd). Retries while the
 * page is still navigating (the evaluation then fails or yields ""), until
 * timeout_s; NULL at the deadline or on a broken pipe. to: the write end
 * the browser reads as fd 3; from: the read end of its fd 4. */
char *devtools_eval(int to, int from, const char *expr, double timeout_s);

/* Asks the browser to close (its reply is not awaited). */
void devtools_close(int to);

#endif
