/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's connections and epoll sources, shared by conn.c (queueing
 * replies, watching pids: what state.c calls) and server.c (the event loop
 * that reads, writes and closes them). Private to those two files.
 */
#ifndef TANDEM_AGENT_CONN_H
#define TANDEM_AGENT_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "agent.h"

enum src_kind { SRC_LISTEN, SRC_SIGNAL, SRC_CONN, SRC_PID, SRC_POLICY };

/* epoll's data.ptr points at one of these, first member of its owner */
struct src {
	enum src_kind kind;
};

struct tandem_agent_conn {
	struct src src;
	struct tandem_agent_conn *next;
	int fd;
	struct ucred peer;
	uint64_t t_accept;
	char *in;			/* request bytes until the LF; NULL after */
	size_t in_len;
	char *out;			/* replies not yet written */
	size_t out_len, out_off;
	int final;			/* close once out is written */
	struct tandem_agent_inst *inst;	/* held instance */
};

struct pid_src {
	struct src src;
	struct tandem_agent_inst *inst;
};

/* epoll_ctl() on the agent's epoll; -errno */
int tandem_agent_ep_mod(struct tandem_agent *a, int op, int fd, uint32_t events, const void *src);

#endif
