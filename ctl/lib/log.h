/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error lines of the libraries and the CLI. By default they go to stderr,
 * ctl_err() prefixed "tandemctl: ", ctl_err_raw() as given ("kernel
 * reports: ..."). A caller that is not the CLI (a daemon) routes them to
 * its own log with ctl_log_set().
 */
#ifndef TANDEM_CTL_LOG_H
#define TANDEM_CTL_LOG_H

/* line: one message without its newline; prefixed says ctl_err() sent it */
typedef void (*ctl_log_fn)(void *arg, const char *line, int prefixed);

void ctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ctl_err_raw(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* NULL restores stderr */
void ctl_log_set(ctl_log_fn fn, void *arg);

#endif
