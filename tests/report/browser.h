/* Headless Chromium for the report tests: load a report from file:// and
 * read back its DOM, or save a screenshot. No network: the browser is told
 * to resolve no host and use a dead proxy, and the page's policy forbids
 * every fetch anyway. */
#ifndef OPPROF_TESTS_REPORT_BROWSER_H
#define OPPROF_TESTS_REPORT_BROWSER_H

#include <stddef.h>

/* The browser to use: $OPPROF_CHROMIUM, else /usr/bin/chromium; NULL when
 * it is not there (the tests then skip, saying so). */
const char *browser_path(void);

/* Loads file://html_path#fragment in a window of w x h pixels and returns
 * the DOM once the page has drawn (malloc'd): its loading note gone and,
 * with #selftest, the self-test's results written (a minute at most); NULL
 * on failure. */
char *browser_dump_dom(const char *html_path, const char *fragment, int w, int h);

/* The page's data-first-draw-ms (from the navigation's start to its first
 * view drawn), -1 when the DOM has none. */
double browser_first_draw_ms(const char *dom);

/* Saves a PNG of the page; 0 on success. */
int browser_screenshot(const char *html_path, const char *fragment, int w, int h, const char *png_path);

/* The number after `"key":` in the first object that follows `"within":{`
 * in the self-test JSON; -1 when absent. The page writes each view's numbers
 * before its lists, whose names may hold any character. */
double selftest_num(const char *dom, const char *within, const char *key);

/* s as it appears in the self-test JSON read back from the DOM: JSON string
 * escapes, then the HTML serialiser's &amp; &lt; &gt; (malloc'd). */
char *selftest_text(const char *s);

/* 1 when the self-test showed `view` alone (its tab active, the other
 * views hidden), 0 when it showed it otherwise, -1 when it never got there. */
int selftest_view_shown(const char *dom, const char *view);

/* n as the page writes counts (toLocaleString("en-US")): "1,234". */
void selftest_count(char *buf, size_t size, unsigned long long n);

/* 1 when a browser is there; else prints why the test skips and returns 0. */
int browser_or_skip_message(void);

#endif
