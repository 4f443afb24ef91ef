/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one libnl request engine of tandemctl: build a request, send it, call
 * a parser for every reply message, and turn a kernel error into one line
 * "kernel reports: <extack message>".
 */
#ifndef TANDEM_CTL_NL_H
#define TANDEM_CTL_NL_H

#include <stdbool.h>
#include <stdint.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "tandem.h"

struct tnl_req {
	uint8_t cmd;			/* TANDEM_CMD_* */
	bool dump;			/* NLM_F_DUMP, else a doit with an ACK */
	size_t size;			/* message buffer, 0 = default */
	/* add the attributes from in; 0 or -errno */
	int (*build)(struct nl_msg *msg, const void *in);
	const void *in;
	/* one reply message, attributes indexed by TANDEM_A_*, into out; 0 or -errno */
	int (*parse)(struct nlattr **tb, void *out);
	void *out;
};

/*
 * Connect and resolve the family. -ENOENT (printed) when tandem.ko is not
 * loaded; with quiet, nothing is printed.
 */
int tnl_open(bool quiet);
void tnl_close(void);
/* 0, or -errno with the error already printed */
int tnl_request(const struct tnl_req *req);
/* The kernel's last extack message ("" if none), for tests and callers. */
const char *tnl_last_extack(void);

#endif
