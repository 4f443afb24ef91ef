/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A client of the node agent's socket (lib/agent_proto.h): connect, send a
 * request, read the answer a line at a time, each step against a deadline
 * on CLOCK_MONOTONIC, and optionally interrupted by a signalfd. The one
 * client of tandemctl (`agent status`) and the SPANK plugin. libc only.
 */
#ifndef TANDEM_LIB_AGENT_CLIENT_H
#define TANDEM_LIB_AGENT_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agent_proto.h"

/* one connection to the agent and what it has sent that is not read yet */
struct tandem_agent_client {
	int fd;			/* -1: not connected */
	int sfd;		/* a signalfd that interrupts a read, or -1 */
	size_t len;
	char buf[TANDEM_AGENT_LINE_MAX];	/* also where a caller may format its request */
};

/* CLOCK_MONOTONIC in ms: what the deadlines are on */
uint64_t tandem_agent_mono_ms(void);

/* Not connected yet; sfd: a signalfd to watch while reading, or -1. */
void tandem_agent_client_init(struct tandem_agent_client *c, int sfd);
/* Connect to the socket at path; -ENAMETOOLONG, -ETIMEDOUT or -errno. */
int tandem_agent_client_connect(struct tandem_agent_client *c, const char *path,
				uint64_t deadline);
/* All of buf[0..n); -ETIMEDOUT or -errno (-EPIPE: the agent closed). */
int tandem_agent_client_send(struct tandem_agent_client *c, const char *buf, size_t n,
			     uint64_t deadline);
/*
 * The next line (LF cut) in c->buf[0..*n): 1; 0 at EOF, -ETIMEDOUT at the
 * deadline, -EINTR for a signal on sfd (*signo), -EMSGSIZE or -errno.
 * tandem_agent_client_consume() drops it once read.
 */
int tandem_agent_client_line(struct tandem_agent_client *c, uint64_t deadline, size_t *n,
			     int *signo);
void tandem_agent_client_consume(struct tandem_agent_client *c, size_t n);
/* Close the connection (not sfd). */
void tandem_agent_client_close(struct tandem_agent_client *c);

#endif
