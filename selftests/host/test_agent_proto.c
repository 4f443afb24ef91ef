// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's line protocol (agent/agent_proto.h): every verb round-trips,
 * every malformed or out-of-range message is refused with the right ERR
 * code and a reason, and random mutations of valid lines never crash the
 * parser (ASan/UBSan watch).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "lib/agent_proto.h"

static struct tandem_agent_msg msg;
static char err[256];
static const char *code;

static int parse_req(const char *line)
{
	return tandem_agent_parse(line, strlen(line), 0, &msg, err, sizeof(err), &code);
}

static int parse_rep(const char *line)
{
	return tandem_agent_parse(line, strlen(line), 1, &msg, err, sizeof(err), &code);
}

#define REG "REGISTER v=1 job=17 step=batch task=0 uid=1000 pid=4242 stagger=30 maxhold=600"

TEST(register_parses)
{
	ASSERT_EQ(0, parse_req(REG " dataset=/data/image%20net cmd=python3%20train.py%0A"));
	EXPECT_EQ(TANDEM_REQ_REGISTER, msg.verb);
	EXPECT_EQ(17, msg.job);
	EXPECT_EQ(TANDEM_STEP_BATCH, msg.step);
	EXPECT_EQ(1000, msg.uid);
	EXPECT_EQ(4242, msg.pid);
	EXPECT_EQ(TANDEM_STAGGER_SECONDS, msg.stagger.mode);
	EXPECT_EQ(30000, msg.stagger.ms);
	EXPECT_EQ(600, msg.maxhold_s);
	EXPECT_STREQ("/data/image net", msg.dataset);
	EXPECT_STREQ("python3 train.py\n", msg.cmd);
	EXPECT_FALSE(TANDEM_HAS(&msg, TANDEM_F_ARRAY_JOB));
	ASSERT_EQ(0, parse_req("REGISTER v=1 job=9 step=3 task=7 array_job=8 array_task=1 uid=0 "
			       "pid=1 stagger=progress:0.25 maxhold=1 dataset=/"));
	EXPECT_EQ(3, msg.step);
	EXPECT_EQ(8, msg.array_job);
	EXPECT_EQ(1, msg.array_task);
	EXPECT_EQ(TANDEM_STAGGER_PROGRESS, msg.stagger.mode);
	EXPECT_EQ(250, msg.stagger.permille);
}

TEST(every_verb_round_trips)
{
	struct tandem_agent_msg m = { 0 }, back;
	char line[TANDEM_AGENT_LINE_MAX];
	int n;

	m.verb = TANDEM_REP_TASK;
	m.have = 1u << TANDEM_F_ID | 1u << TANDEM_F_JOB | 1u << TANDEM_F_STEP |
		 1u << TANDEM_F_TASK | 1u << TANDEM_F_UID | 1u << TANDEM_F_STATE |
		 1u << TANDEM_F_DATASET | 1u << TANDEM_F_STAGGER | 1u << TANDEM_F_SINCE |
		 1u << TANDEM_F_CMD | 1u << TANDEM_F_UNTIL | 1u << TANDEM_F_FRAC;
	m.id = 99;
	m.job = 4000000000u;
	m.step = TANDEM_STEP_INTERACTIVE;
	m.uid = 65534;
	strcpy(m.state, "held");
	strcpy(m.dataset, "/d/\xc3\xa9t\xc3\xa9 100%");
	m.stagger = (struct tandem_stagger){ .mode = TANDEM_STAGGER_SECONDS, .ms = 1500 };
	m.since_ms = 1796144820381ull;
	m.until_ms = 1796144830381ull;
	m.frac_permille = 1000;
	strcpy(m.cmd, "a b\tc=d \"e\"");
	n = tandem_agent_format(&m, line, sizeof(line));
	ASSERT_GT(n, 0);
	EXPECT_EQ('\n', line[n - 1]);
	EXPECT_EQ(NULL, strchr(line, ' ') ? strchr(strchr(line, ' ') + 1, '\t') : NULL);
	ASSERT_EQ(0, tandem_agent_parse(line, (size_t)n - 1, 1, &back, err, sizeof(err), &code)) {
		TH_LOG("%s: %s", line, err);
	}
	EXPECT_EQ(m.have, back.have);
	EXPECT_EQ(m.job, back.job);
	EXPECT_EQ(m.step, back.step);
	EXPECT_EQ(m.since_ms, back.since_ms);
	EXPECT_EQ(1000, back.frac_permille);
	EXPECT_EQ(1500, back.stagger.ms);
	EXPECT_STREQ(m.dataset, back.dataset);
	EXPECT_STREQ(m.cmd, back.cmd);

	/* requests get v=1 first, whatever have says */
	m = (struct tandem_agent_msg){ .verb = TANDEM_REQ_PROGRESS, .job = 5, .frac_permille = 300,
				       .have = 1u << TANDEM_F_JOB | 1u << TANDEM_F_FRAC };
	n = tandem_agent_format(&m, line, sizeof(line));
	EXPECT_STREQ("PROGRESS v=1 job=5 frac=0.3\n", line);
	m = (struct tandem_agent_msg){ .verb = TANDEM_REQ_DONE, .job = 5, .step = 0, .task = 2,
				       .status = -9, .have = 1u << TANDEM_F_JOB | 1u << TANDEM_F_STEP |
				       1u << TANDEM_F_TASK | 1u << TANDEM_F_STATUS };
	ASSERT_GT(tandem_agent_format(&m, line, sizeof(line)), 0);
	EXPECT_STREQ("DONE v=1 job=5 step=0 task=2 status=-9\n", line);
	ASSERT_EQ(0, parse_req("DONE v=1 job=5 step=0 task=2 status=-2147483648"));
	EXPECT_EQ(INT32_MIN, msg.status);
	for (int v = TANDEM_REQ_STATUS; v <= TANDEM_REQ_SHUTDOWN; v++) {
		if (v == TANDEM_REQ_RELEASE || v == TANDEM_REQ_CANCEL || v == TANDEM_REQ_PROGRESS)
			continue;
		m = (struct tandem_agent_msg){ .verb = v };
		ASSERT_GT(tandem_agent_format(&m, line, sizeof(line)), 0);
		line[strlen(line) - 1] = '\0';
		EXPECT_EQ(0, parse_req(line));
		EXPECT_EQ(v, msg.verb);
	}
	ASSERT_EQ(0, parse_rep("HOLD id=3 until=0 reason=progress"));
	EXPECT_EQ(0, msg.until_ms);
	ASSERT_EQ(0, parse_rep("ERR code=perm msg=CANCEL%20is%20root%27s"));
	EXPECT_STREQ("CANCEL is root's", msg.msg);
	ASSERT_EQ(0, parse_rep("END"));
	ASSERT_EQ(0, parse_rep("OK"));
	/* STATUS's per-dataset line and the decision fields of TASK */
	ASSERT_EQ(0, parse_rep("DATASET dataset=/d held=1 running=2 since=1796144820381 n=3 "
			       "pred=61250 lastpred=59000 measured=60125 model=profile"));
	EXPECT_EQ(TANDEM_REP_DATASET, msg.verb);
	EXPECT_EQ(61250, msg.pred_ms);
	EXPECT_EQ(59000, msg.lastpred_ms);
	EXPECT_EQ(60125, msg.measured_ms);
	EXPECT_STREQ("profile", msg.model);
	EXPECT_EQ(-EINVAL, parse_rep("DATASET dataset=/d held=1 running=2"));
	EXPECT_EQ(-EINVAL, parse_rep("DATASET dataset=/d held=1 running=2 since=0 model=My%20file"));
	ASSERT_EQ(0, parse_rep("TASK id=1 job=2 step=batch task=0 uid=0 state=held dataset=/d "
			       "stagger=auto since=1 reason=auto pred=1500"));
	EXPECT_EQ(1500, msg.pred_ms);
	EXPECT_STREQ("auto", msg.reason);
	/* replies only: a request may not carry them */
	EXPECT_EQ(-EINVAL, parse_req("STATUS v=1 pred=1"));
}

struct bad {
	const char *line, *code, *text;
	int ret;
};

static const struct bad bad_requests[] = {
	{ "", "proto", "starts with a verb", -EINVAL },
	{ "register v=1", "proto", "starts with a verb", -EINVAL },
	{ "FROB v=1", "verb", "unknown verb 'FROB'", -EINVAL },
	{ "HOLD id=1 until=0 reason=x", "verb", "unknown verb 'HOLD'", -EINVAL },
	{ "STATUS", "arg", "starts with v=1", -EINVAL },
	{ "STATUS v=2 future=1", "version", "version 2 not supported", -EPROTO },
	{ "STATUS v=0", "arg", "field 'v' must be", -EINVAL },
	{ "CANCEL job=3 v=1", "arg", "must come first", -EINVAL },
	{ "STATUS  v=1", "proto", "key=value", -EINVAL },
	{ "STATUS v=1 ", "proto", "key=value", -EINVAL },
	{ "STATUS v", "proto", "key=value", -EINVAL },
	{ "STATUS V=1", "proto", "key=value", -EINVAL },
	{ "STATUS v=1 job=3", "arg", "STATUS takes no field 'job'", -EINVAL },
	{ "STATUS v=1 colour=3", "arg", "unknown field 'colour'", -EINVAL },
	{ "CANCEL v=1 job=3 job=4", "arg", "given twice", -EINVAL },
	{ "CANCEL v=1", "arg", "CANCEL needs field 'job'", -EINVAL },
	{ "CANCEL v=1 job=0", "arg", "from 1 to 4294967280", -EINVAL },
	{ "CANCEL v=1 job=4294967281", "arg", "from 1 to", -EINVAL },
	{ "CANCEL v=1 job=99999999999999999999999", "arg", "field 'job'", -EINVAL },
	{ "CANCEL v=1 job=007", "arg", "field 'job'", -EINVAL },
	{ "CANCEL v=1 job=-3", "arg", "field 'job'", -EINVAL },
	{ "CANCEL v=1 job=+3", "arg", "field 'job'", -EINVAL },
	{ "CANCEL v=1 job=3%00", "proto", "bad character", -EINVAL },
	{ "CANCEL v=1 job=3%4", "proto", "bad character", -EINVAL },
	{ "CANCEL v=1 job=3%G1", "proto", "bad character", -EINVAL },
	{ "CANCEL v=1 job=\x80", "proto", "bad character", -EINVAL },
	{ "CANCEL v=1 job=3\r", "proto", "CR or LF", -EINVAL },
	{ "PROGRESS v=1 job=3 frac=1.5", "arg", "fraction", -EINVAL },
	{ "PROGRESS v=1 job=3 frac=0.1234", "arg", "fraction", -EINVAL },
	{ "PROGRESS v=1 job=3 frac=.5", "arg", "fraction", -EINVAL },
	{ REG, "arg", "REGISTER needs field 'dataset'", -EINVAL },
	{ REG " dataset=data", "arg", "absolute path", -EINVAL },
	{ REG " dataset=", "arg", "absolute path", -EINVAL },
	{ REG " dataset=/a%0Ab", "arg", "absolute path", -EINVAL },
	{ REG " dataset=/a array_job=3", "arg", "go together", -EINVAL },
	{ "REGISTER v=1 job=1 step=batch task=0 uid=0 pid=0 stagger=1 maxhold=1 dataset=/",
	  "arg", "field 'pid'", -EINVAL },
	{ "REGISTER v=1 job=1 step=batch task=0 uid=0 pid=4194305 stagger=1 maxhold=1 dataset=/",
	  "arg", "field 'pid'", -EINVAL },
	{ "REGISTER v=1 job=1 step=batch task=0 uid=0 pid=1 stagger=1 maxhold=0 dataset=/",
	  "arg", "field 'maxhold'", -EINVAL },
	{ "REGISTER v=1 job=1 step=batch task=0 uid=0 pid=1 stagger=1 maxhold=86401 dataset=/",
	  "arg", "field 'maxhold'", -EINVAL },
	{ "REGISTER v=1 job=1 step=bash task=0 uid=0 pid=1 stagger=1 maxhold=1 dataset=/",
	  "arg", "field 'step'", -EINVAL },
	{ "REGISTER v=1 job=1 step=batch task=1048576 uid=0 pid=1 stagger=1 maxhold=1 dataset=/",
	  "arg", "field 'task'", -EINVAL },
	{ "REGISTER v=1 job=1 step=batch task=0 uid=4294967295 pid=1 stagger=1 maxhold=1 dataset=/",
	  "arg", "field 'uid'", -EINVAL },
};

static const char *const bad_staggers[] = {
	"86400.001", "-1", "1e3", "1.", "1.2345", "progress:0", "progress:1.001", "progress:",
	"progress:-0.5", "Auto", "auto ", "0x10", "01", "",
};

TEST(bad_requests_are_refused_with_a_reason)
{
	for (size_t i = 0; i < sizeof(bad_requests) / sizeof(bad_requests[0]); i++) {
		const struct bad *b = &bad_requests[i];

		err[0] = '\0';
		EXPECT_EQ(b->ret, parse_req(b->line)) {
			TH_LOG("'%s' -> %s", b->line, err);
		}
		EXPECT_NE(NULL, code);
		if (code) {
			EXPECT_STREQ(b->code, code) {
				TH_LOG("'%s' -> %s", b->line, err);
			}
		}
		EXPECT_NE(NULL, strstr(err, b->text)) {
			TH_LOG("'%s' -> '%s', want '%s'", b->line, err, b->text);
		}
	}
}

TEST(stagger_values)
{
	struct tandem_stagger st;
	char buf[24];

	for (size_t i = 0; i < sizeof(bad_staggers) / sizeof(bad_staggers[0]); i++) {
		EXPECT_NE(0, tandem_stagger_parse(bad_staggers[i], &st)) {
			TH_LOG("'%s' accepted", bad_staggers[i]);
		}
	}
	ASSERT_EQ(0, tandem_stagger_parse("86400", &st));
	EXPECT_EQ(86400000u, st.ms);
	ASSERT_EQ(0, tandem_stagger_parse("0", &st));
	EXPECT_EQ(0, st.ms);
	ASSERT_EQ(0, tandem_stagger_parse("0.25", &st));
	EXPECT_STREQ("0.25", tandem_stagger_str(&st, buf, sizeof(buf)));
	ASSERT_EQ(0, tandem_stagger_parse("progress:1", &st));
	EXPECT_EQ(1000, st.permille);
	EXPECT_STREQ("progress:1", tandem_stagger_str(&st, buf, sizeof(buf)));
	ASSERT_EQ(0, tandem_stagger_parse("progress:0.005", &st));
	EXPECT_STREQ("progress:0.005", tandem_stagger_str(&st, buf, sizeof(buf)));
	ASSERT_EQ(0, tandem_stagger_parse("auto", &st));
	EXPECT_EQ(TANDEM_STAGGER_AUTO, st.mode);
}

TEST(length_limits)
{
	char *line = malloc(TANDEM_AGENT_LINE_MAX + 8);
	struct tandem_agent_msg m = { 0 };
	int n;

	ASSERT_NE(NULL, line);
	/* a dataset path one byte over its limit, and one at it */
	n = sprintf(line, REG " dataset=/");
	memset(line + n, 'a', TANDEM_AGENT_DATASET_MAX);
	line[n + TANDEM_AGENT_DATASET_MAX] = '\0';
	EXPECT_EQ(-EMSGSIZE, parse_req(line));
	EXPECT_NE(NULL, strstr(err, "longer than 4095"));
	line[n + TANDEM_AGENT_DATASET_MAX - 1] = '\0';
	EXPECT_EQ(0, parse_req(line));
	/* the whole line */
	memset(line, 'A', TANDEM_AGENT_LINE_MAX);
	EXPECT_EQ(-EMSGSIZE, tandem_agent_parse(line, TANDEM_AGENT_LINE_MAX, 0, &msg, err,
						sizeof(err), &code));
	EXPECT_STREQ("proto", code);
	/* the longest fields, every byte escaped, still fit one line */
	m.verb = TANDEM_REQ_REGISTER;
	m.have = 1u << TANDEM_F_JOB | 1u << TANDEM_F_STEP | 1u << TANDEM_F_TASK |
		 1u << TANDEM_F_UID | 1u << TANDEM_F_PID | 1u << TANDEM_F_STAGGER |
		 1u << TANDEM_F_MAXHOLD | 1u << TANDEM_F_DATASET | 1u << TANDEM_F_CMD |
		 1u << TANDEM_F_ARRAY_JOB | 1u << TANDEM_F_ARRAY_TASK;
	m.job = m.array_job = m.array_task = TANDEM_AGENT_ID_MAX;
	m.step = TANDEM_AGENT_ID_MAX;
	m.task = TANDEM_AGENT_TASK_MAX;
	m.uid = 0xfffffffe;
	m.pid = TANDEM_AGENT_PID_MAX;
	m.maxhold_s = 86400;
	m.stagger = (struct tandem_stagger){ .mode = TANDEM_STAGGER_SECONDS, .ms = 86399999 };
	m.dataset[0] = '/';
	memset(m.dataset + 1, ' ', TANDEM_AGENT_DATASET_MAX - 1);
	memset(m.cmd, '%', TANDEM_AGENT_CMD_MAX);
	n = tandem_agent_format(&m, line, TANDEM_AGENT_LINE_MAX + 8);
	ASSERT_GT(n, 0);
	EXPECT_LE(n, TANDEM_AGENT_LINE_MAX);
	EXPECT_EQ(0, tandem_agent_parse(line, (size_t)n - 1, 0, &msg, err, sizeof(err), &code)) {
		TH_LOG("%s", err);
	}
	free(line);
}

TEST(format_refuses_what_the_parser_would)
{
	struct tandem_agent_msg m = { .verb = TANDEM_REQ_CANCEL };
	char line[256];

	EXPECT_EQ(-EINVAL, tandem_agent_format(&m, line, sizeof(line)));	/* no job */
	m.have = 1u << TANDEM_F_JOB;
	EXPECT_EQ(-EINVAL, tandem_agent_format(&m, line, sizeof(line)));	/* job=0 */
	m.job = 3;
	m.have |= 1u << TANDEM_F_CMD;
	EXPECT_EQ(-EINVAL, tandem_agent_format(&m, line, sizeof(line)));	/* cmd not CANCEL's */
	m.have = 1u << TANDEM_F_JOB;
	EXPECT_EQ(-ENOSPC, tandem_agent_format(&m, line, 8));
	EXPECT_GT(tandem_agent_format(&m, line, sizeof(line)), 0);
	m = (struct tandem_agent_msg){ .verb = TANDEM_REP_HOLD, .id = 1,
				       .have = 1u << TANDEM_F_ID | 1u << TANDEM_F_UNTIL |
					       1u << TANDEM_F_REASON };
	strcpy(m.reason, "Not A Word");
	EXPECT_EQ(-EINVAL, tandem_agent_format(&m, line, sizeof(line)));
}

/* random bytes flipped, cut or duplicated in valid lines: parse or refuse, never crash */
TEST(mutations_never_crash)
{
	static const char *const seeds[] = {
		REG " dataset=/data/x cmd=a%20b array_job=3 array_task=4",
		"DONE v=1 job=5 step=0 task=2 status=-9",
		"PROGRESS v=1 job=5 frac=0.3",
		"TASK id=1 job=2 step=batch task=0 uid=0 state=held stagger=auto since=5 dataset=/x",
	};
	static const char alphabet[] = "AZaz09=% _-./:\n\r\x80\xff";
	char line[512];
	unsigned int seed = 12345, ok = 0, refused = 0;

	for (int i = 0; i < 20000; i++) {
		const char *s = seeds[i % 4];
		size_t n = strlen(s);
		int ret;

		memcpy(line, s, n);
		for (int k = 0; k < 1 + i % 4 && n; k++) {
			size_t at = (size_t)rand_r(&seed) % n;

			switch (rand_r(&seed) % 3) {
			case 0:
				line[at] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
				break;
			case 1:
				n = at;
				break;
			default:
				if (n < sizeof(line) - 1) {
					memmove(line + at + 1, line + at, n - at);
					n++;
				}
			}
		}
		code = NULL;
		err[0] = '\0';
		ret = tandem_agent_parse(line, n, i % 4 == 3, &msg, err, sizeof(err), &code);
		if (ret) {
			refused++;
			EXPECT_NE(NULL, code);
			EXPECT_NE('\0', err[0]);
		} else {
			ok++;
		}
	}
	TH_LOG("%u parsed, %u refused", ok, refused);
	EXPECT_GT(refused, 10000);
	EXPECT_GT(ok, 100);
}

TEST_HARNESS_MAIN
