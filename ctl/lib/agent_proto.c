// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's line protocol: one table of fields, one table of verbs with
 * the fields each requires and allows, and one parser and one formatter over
 * both, so a field is checked the same way wherever it appears.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lib/agent_proto.h"

enum ftype {
	FT_U32,		/* decimal, [min, max] */
	FT_U64,
	FT_I32,		/* optional '-' */
	FT_STEP,	/* batch | extern | interactive | U32 */
	FT_STAGGER,
	FT_FRAC,	/* 0 .. 1, up to 3 decimals: permille */
	FT_WORD,	/* [a-z_]+ */
	FT_PATH,	/* absolute, no control characters */
	FT_TEXT,	/* anything but NUL */
};

struct field_def {
	const char *key;
	enum ftype type;
	uint64_t min, max;	/* numbers; strings: max decoded bytes */
	size_t off;
};

#define OFF(f) offsetof(struct tandem_agent_msg, f)
static const struct field_def fields[TANDEM_F_COUNT] = {
	[TANDEM_F_V] = { "v", FT_U32, 1, 255, OFF(v) },
	[TANDEM_F_JOB] = { "job", FT_U32, 1, TANDEM_AGENT_ID_MAX, OFF(job) },
	[TANDEM_F_STEP] = { "step", FT_STEP, 0, TANDEM_AGENT_ID_MAX, OFF(step) },
	[TANDEM_F_TASK] = { "task", FT_U32, 0, TANDEM_AGENT_TASK_MAX, OFF(task) },
	[TANDEM_F_ARRAY_JOB] = { "array_job", FT_U32, 1, TANDEM_AGENT_ID_MAX, OFF(array_job) },
	[TANDEM_F_ARRAY_TASK] = { "array_task", FT_U32, 0, TANDEM_AGENT_ID_MAX, OFF(array_task) },
	[TANDEM_F_UID] = { "uid", FT_U32, 0, 0xfffffffeu, OFF(uid) },
	[TANDEM_F_PID] = { "pid", FT_U32, 1, TANDEM_AGENT_PID_MAX, OFF(pid) },
	[TANDEM_F_STAGGER] = { "stagger", FT_STAGGER, 0, 0, OFF(stagger) },
	[TANDEM_F_MAXHOLD] = { "maxhold", FT_U32, 1, TANDEM_AGENT_HOLD_MAX_S, OFF(maxhold_s) },
	[TANDEM_F_DATASET] = { "dataset", FT_PATH, 0, TANDEM_AGENT_DATASET_MAX, OFF(dataset) },
	[TANDEM_F_CMD] = { "cmd", FT_TEXT, 0, TANDEM_AGENT_CMD_MAX, OFF(cmd) },
	[TANDEM_F_STATUS] = { "status", FT_I32, 0, 0, OFF(status) },
	[TANDEM_F_FRAC] = { "frac", FT_FRAC, 0, 1000, OFF(frac_permille) },
	[TANDEM_F_ID] = { "id", FT_U64, 1, UINT64_MAX >> 1, OFF(id) },
	[TANDEM_F_UNTIL] = { "until", FT_U64, 0, UINT64_MAX >> 1, OFF(until_ms) },
	[TANDEM_F_SINCE] = { "since", FT_U64, 0, UINT64_MAX >> 1, OFF(since_ms) },
	[TANDEM_F_REASON] = { "reason", FT_WORD, 0, TANDEM_AGENT_WORD_MAX, OFF(reason) },
	[TANDEM_F_CODE] = { "code", FT_WORD, 0, TANDEM_AGENT_WORD_MAX, OFF(code) },
	[TANDEM_F_MSG] = { "msg", FT_TEXT, 0, TANDEM_AGENT_MSG_MAX, OFF(msg) },
	[TANDEM_F_STATE] = { "state", FT_WORD, 0, TANDEM_AGENT_WORD_MAX, OFF(state) },
	[TANDEM_F_N] = { "n", FT_U32, 0, UINT32_MAX, OFF(n) },
	[TANDEM_F_HELD] = { "held", FT_U32, 0, UINT32_MAX, OFF(held) },
	[TANDEM_F_RUNNING] = { "running", FT_U32, 0, UINT32_MAX, OFF(running) },
	[TANDEM_F_PRED] = { "pred", FT_U64, 0, UINT64_MAX >> 1, OFF(pred_ms) },
	[TANDEM_F_LASTPRED] = { "lastpred", FT_U64, 0, UINT64_MAX >> 1, OFF(lastpred_ms) },
	[TANDEM_F_MEASURED] = { "measured", FT_U64, 0, UINT64_MAX >> 1, OFF(measured_ms) },
	[TANDEM_F_MODEL] = { "model", FT_WORD, 0, TANDEM_AGENT_WORD_MAX, OFF(model) },
};

#define B(f) (1u << TANDEM_F_##f)
struct verb_def {
	const char *name;
	int reply;
	uint32_t required, optional;
};

static const struct verb_def verbs[TANDEM_VERB_COUNT] = {
	[TANDEM_REQ_REGISTER] = { "REGISTER", 0,
		B(V) | B(JOB) | B(STEP) | B(TASK) | B(UID) | B(PID) | B(STAGGER) |
		B(MAXHOLD) | B(DATASET), B(ARRAY_JOB) | B(ARRAY_TASK) | B(CMD) },
	[TANDEM_REQ_DONE] = { "DONE", 0, B(V) | B(JOB) | B(STEP) | B(TASK) | B(STATUS), 0 },
	[TANDEM_REQ_STATUS] = { "STATUS", 0, B(V), 0 },
	[TANDEM_REQ_RELEASE] = { "RELEASE", 0, B(V) | B(JOB), 0 },
	[TANDEM_REQ_CANCEL] = { "CANCEL", 0, B(V) | B(JOB), 0 },
	[TANDEM_REQ_PROGRESS] = { "PROGRESS", 0, B(V) | B(JOB) | B(FRAC), 0 },
	[TANDEM_REQ_SHUTDOWN] = { "SHUTDOWN", 0, B(V), 0 },
	[TANDEM_REP_OK] = { "OK", 1, 0, B(N) | B(HELD) | B(RUNNING) | B(ID) },
	[TANDEM_REP_HOLD] = { "HOLD", 1, B(ID) | B(UNTIL) | B(REASON), 0 },
	[TANDEM_REP_RELEASE] = { "RELEASE", 1, B(ID) | B(REASON), 0 },
	[TANDEM_REP_CANCEL] = { "CANCEL", 1, B(ID) | B(REASON), 0 },
	[TANDEM_REP_ERR] = { "ERR", 1, B(CODE) | B(MSG), 0 },
	[TANDEM_REP_TASK] = { "TASK", 1,
		B(ID) | B(JOB) | B(STEP) | B(TASK) | B(UID) | B(STATE) | B(DATASET) |
		B(STAGGER) | B(SINCE),
		B(ARRAY_JOB) | B(ARRAY_TASK) | B(PID) | B(UNTIL) | B(FRAC) | B(REASON) |
		B(PRED) | B(CMD) },
	[TANDEM_REP_END] = { "END", 1, 0, 0 },
	[TANDEM_REP_DATASET] = { "DATASET", 1, B(DATASET) | B(HELD) | B(RUNNING) | B(SINCE),
		B(N) | B(PRED) | B(LASTPRED) | B(MEASURED) | B(MODEL) },
};

static const struct { const char *name; uint32_t step; } step_names[] = {
	{ "batch", TANDEM_STEP_BATCH },
	{ "extern", TANDEM_STEP_EXTERN },
	{ "interactive", TANDEM_STEP_INTERACTIVE },
};

const char *tandem_agent_verb_name(enum tandem_agent_verb verb)
{
	if ((unsigned int)verb >= TANDEM_VERB_COUNT)
		return NULL;
	return verbs[verb].name;
}

static int unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("-._~/:,+@", c);
}

int tandem_agent_escape(const char *src, size_t n, char *dst, size_t dstlen)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)src[i];

		if (c && unreserved(c)) {
			if (o + 1 >= dstlen)
				return -ENOSPC;
			dst[o++] = (char)c;
			continue;
		}
		if (o + 3 >= dstlen)
			return -ENOSPC;
		dst[o++] = '%';
		dst[o++] = hex[c >> 4];
		dst[o++] = hex[c & 15];
	}
	if (o >= dstlen)
		return -ENOSPC;
	dst[o] = '\0';
	return (int)o;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t n = strlen(s);

	if (!n || n > 20 || (s[0] == '0' && n > 1))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

const char *tandem_step_str(uint32_t step, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(step_names) / sizeof(step_names[0]); i++)
		if (step == step_names[i].step)
			return step_names[i].name;
	snprintf(buf, len, "%" PRIu32, step);
	return buf;
}

/* decode value (vlen raw bytes) into out (at most max decoded bytes) */
static int decode(const char *val, size_t vlen, char *out, size_t max, size_t *olen)
{
	size_t o = 0;

	for (size_t i = 0; i < vlen; i++) {
		int c = (unsigned char)val[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= vlen)
				return -EINVAL;
			hi = hexval(val[i + 1]);
			lo = hexval(val[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return -EINVAL;
			c = hi << 4 | lo;
			i += 2;
		} else if (!unreserved((unsigned char)c)) {
			return -EINVAL;
		}
		if (o >= max)
			return -EMSGSIZE;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	*olen = o;
	return 0;
}

/* a number field (FT_U32, FT_U64, FT_I32, FT_STEP: a step's name or number) into dst */
static int parse_number(const struct field_def *fd, const char *s, char *dst)
{
	uint64_t v;
	int err;

	switch (fd->type) {
	case FT_I32:
		err = parse_u64(s + (*s == '-'), *s == '-' ? 1 : 0,
				*s == '-' ? (uint64_t)INT32_MAX + 1 : INT32_MAX, &v);
		if (err)
			return err;
		*(int32_t *)(void *)dst = *s == '-' ? (int32_t)(-(int64_t)v) : (int32_t)v;
		return 0;
	case FT_STEP:
		for (size_t i = 0; i < sizeof(step_names) / sizeof(step_names[0]); i++) {
			if (!strcmp(s, step_names[i].name)) {
				*(uint32_t *)(void *)dst = step_names[i].step;
				return 0;
			}
		}
		break;
	default:
		break;
	}
	err = parse_u64(s, fd->min, fd->max, &v);
	if (err)
		return err;
	if (fd->type == FT_U64)
		*(uint64_t *)(void *)dst = v;
	else
		*(uint32_t *)(void *)dst = (uint32_t)v;
	return 0;
}

/* the N bytes of a string field are what its type allows (FT_TEXT: anything) */
static bool text_ok(enum ftype type, const char *s, size_t n)
{
	switch (type) {
	case FT_WORD:
		if (!n)
			return false;
		for (size_t i = 0; i < n; i++)
			if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_'))
				return false;
		return true;
	case FT_PATH:
		if (s[0] != '/')
			return false;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
				return false;
		return true;
	default:
		return true;
	}
}

static int parse_value(const struct field_def *fd, const char *s, size_t n,
		       struct tandem_agent_msg *m)
{
	char *dst = (char *)m + fd->off;
	uint64_t v;
	int err;

	switch (fd->type) {
	case FT_U32:
	case FT_U64:
	case FT_I32:
	case FT_STEP:
		return parse_number(fd, s, dst);
	case FT_STAGGER:
		return tandem_stagger_parse(s, (struct tandem_stagger *)(void *)dst);
	case FT_FRAC:
		err = tandem_milli_parse(s, 1000, &v);
		if (!err)
			*(uint16_t *)(void *)dst = (uint16_t)v;
		return err;
	case FT_WORD:
	case FT_PATH:
	case FT_TEXT:
		if (!text_ok(fd->type, s, n))
			return -EINVAL;
		break;
	}
	memcpy(dst, s, n + 1);
	return 0;
}

static const char *range_text(const struct field_def *fd, char *buf, size_t len)
{
	switch (fd->type) {
	case FT_U32:
	case FT_U64:
		snprintf(buf, len, "a number from %" PRIu64 " to %" PRIu64, fd->min, fd->max);
		break;
	case FT_I32:
		snprintf(buf, len, "a 32-bit signed number");
		break;
	case FT_STEP:
		snprintf(buf, len, "batch, extern, interactive or a number up to %" PRIu64, fd->max);
		break;
	case FT_STAGGER:
		snprintf(buf, len, "auto, SECONDS (0 to %d, 3 decimals) or progress:F (0 < F <= 1)",
			 TANDEM_AGENT_HOLD_MAX_S);
		break;
	case FT_FRAC:
		snprintf(buf, len, "a fraction from 0 to 1 with up to 3 decimals");
		break;
	case FT_WORD:
		snprintf(buf, len, "a word of a-z and _");
		break;
	case FT_PATH:
		snprintf(buf, len, "an absolute path without control characters");
		break;
	case FT_TEXT:
		snprintf(buf, len, "text");
		break;
	}
	return buf;
}

static int find_verb(const char *s, size_t n, int replies)
{
	for (int i = 0; i < TANDEM_VERB_COUNT; i++)
		if (verbs[i].reply == !!replies && strlen(verbs[i].name) == n &&
		    !memcmp(verbs[i].name, s, n))
			return i;
	return -1;
}

static int find_field(const char *s, size_t n)
{
	for (int i = 0; i < TANDEM_F_COUNT; i++)
		if (strlen(fields[i].key) == n && !memcmp(fields[i].key, s, n))
			return i;
	return -1;
}

struct parse_ctx {
	const char *line;
	size_t len, pos;
	const struct verb_def *vd;
	struct tandem_agent_msg *m;
	char *err;
	size_t errlen;
	const char **code;
	char val[TANDEM_AGENT_LINE_MAX];
};

static int fail(struct parse_ctx *c, int ret, const char *code, const char *fmt, ...)
{
	va_list ap;

	if (c->err && c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	if (c->code)
		*c->code = code;
	return ret;
}

/* one " key=value" at c->pos */
static int parse_field(struct parse_ctx *c, int first)
{
	const char *p = c->line + c->pos, *end = c->line + c->len;
	const char *key = p + 1, *eq, *val, *vend;
	const struct field_def *fd;
	char want[96];
	size_t dlen;
	int f, err;

	if (*p != ' ')
		return fail(c, -EINVAL, "proto", "expected a space at byte %zu", c->pos);
	for (eq = key; eq < end && *eq >= 'a' && *eq <= 'z'; eq++)
		;
	for (; eq < end && ((*eq >= 'a' && *eq <= 'z') || *eq == '_'); eq++)
		;
	if (eq == key || eq == end || *eq != '=' || eq - key > 16)
		return fail(c, -EINVAL, "proto", "expected key=value at byte %zu", c->pos + 1);
	f = find_field(key, (size_t)(eq - key));
	if (f < 0)
		return fail(c, -EINVAL, "arg", "unknown field '%.*s'", (int)(eq - key), key);
	fd = &fields[f];
	if (!((c->vd->required | c->vd->optional) & (1u << f)))
		return fail(c, -EINVAL, "arg", "%s takes no field '%s'", c->vd->name, fd->key);
	if (c->m->have & (1u << f))
		return fail(c, -EINVAL, "arg", "field '%s' given twice", fd->key);
	val = eq + 1;
	vend = memchr(val, ' ', (size_t)(end - val));
	if (!vend)
		vend = end;
	c->pos = (size_t)(vend - c->line);
	err = decode(val, (size_t)(vend - val), c->val,
		     fd->type == FT_PATH || fd->type == FT_TEXT || fd->type == FT_WORD ?
		     fd->max : 64, &dlen);
	if (err == -EMSGSIZE)
		return fail(c, -EMSGSIZE, "arg", "field '%s' longer than %" PRIu64 " bytes",
			    fd->key, fd->type == FT_PATH || fd->type == FT_TEXT ||
			    fd->type == FT_WORD ? fd->max : 64);
	if (err)
		return fail(c, -EINVAL, "proto", "field '%s': bad character or %%-escape", fd->key);
	if (!first && f == TANDEM_F_V)
		return fail(c, -EINVAL, "arg", "field 'v' must come first");
	err = parse_value(fd, c->val, dlen, c->m);
	if (err)
		return fail(c, -EINVAL, "arg", "field '%s' must be %s", fd->key,
			    range_text(fd, want, sizeof(want)));
	c->m->have |= 1u << f;
	if (f == TANDEM_F_V && c->m->v != TANDEM_AGENT_PROTO_VERSION)
		return fail(c, -EPROTO, "version", "protocol version %" PRIu32
			    " not supported (this agent speaks %d)", c->m->v,
			    TANDEM_AGENT_PROTO_VERSION);
	return 0;
}

int tandem_agent_parse(const char *line, size_t len, int replies,
		       struct tandem_agent_msg *m, char *err, size_t errlen,
		       const char **code)
{
	struct parse_ctx c;
	uint32_t missing;
	size_t n;
	int v, ret;

	c = (struct parse_ctx){ .line = line, .len = len, .m = m, .err = err,
				.errlen = errlen, .code = code };
	memset(m, 0, sizeof(*m));
	if (code)
		*code = NULL;
	if (len >= TANDEM_AGENT_LINE_MAX)
		return fail(&c, -EMSGSIZE, "proto", "message longer than %d bytes",
			    TANDEM_AGENT_LINE_MAX - 1);
	if (memchr(line, '\0', len) || memchr(line, '\n', len) || memchr(line, '\r', len))
		return fail(&c, -EINVAL, "proto", "NUL, CR or LF inside the message");
	for (n = 0; n < len && line[n] >= 'A' && line[n] <= 'Z'; n++)
		;
	if (!n || (n < len && line[n] != ' '))
		return fail(&c, -EINVAL, "proto", "a message starts with a verb in capitals");
	v = find_verb(line, n, replies);
	if (v < 0)
		return fail(&c, -EINVAL, "verb", "unknown %s '%.*s'", replies ? "reply" : "verb",
			    (int)(n > 16 ? 16 : n), line);
	c.vd = &verbs[v];
	m->verb = (enum tandem_agent_verb)v;
	for (c.pos = n; c.pos < len;) {
		ret = parse_field(&c, c.pos == n);
		if (ret)
			return ret;
	}
	if (!replies && !(m->have & B(V)))
		return fail(&c, -EINVAL, "arg", "a request starts with v=%d", TANDEM_AGENT_PROTO_VERSION);
	missing = c.vd->required & ~m->have;
	if (missing)
		return fail(&c, -EINVAL, "arg", "%s needs field '%s'", c.vd->name,
			    fields[__builtin_ctz(missing)].key);
	if (!!(m->have & B(ARRAY_JOB)) != !!(m->have & B(ARRAY_TASK)))
		return fail(&c, -EINVAL, "arg", "array_job and array_task go together");
	return 0;
}

static int fmt_value(const struct field_def *fd, const struct tandem_agent_msg *m,
		     char *out, size_t len)
{
	const char *src = (const char *)m + fd->off;
	char tmp[32];
	uint64_t v;

	switch (fd->type) {
	case FT_U32:
	case FT_U64:
		v = fd->type == FT_U32 ? *(const uint32_t *)(const void *)src :
					 *(const uint64_t *)(const void *)src;
		if (v < fd->min || v > fd->max)
			return -EINVAL;
		return snprintf(out, len, "%" PRIu64, v) < (int)len ? 0 : -ENOSPC;
	case FT_I32:
		return snprintf(out, len, "%" PRId32, *(const int32_t *)(const void *)src) <
		       (int)len ? 0 : -ENOSPC;
	case FT_STEP:
		v = *(const uint32_t *)(const void *)src;
		if (v > fd->max && v != TANDEM_STEP_BATCH && v != TANDEM_STEP_EXTERN &&
		    v != TANDEM_STEP_INTERACTIVE)
			return -EINVAL;
		snprintf(out, len, "%s", tandem_step_str((uint32_t)v, tmp, sizeof(tmp)));
		return 0;
	case FT_STAGGER:
		snprintf(out, len, "%s", tandem_stagger_str((const void *)src, tmp, sizeof(tmp)));
		return 0;
	case FT_FRAC:
		v = *(const uint16_t *)(const void *)src;
		if (v > 1000)
			return -EINVAL;
		tandem_milli_str(v, out, len);
		return 0;
	default:
		if (strlen(src) > fd->max || (fd->type == FT_PATH && src[0] != '/') ||
		    (fd->type == FT_WORD && (!src[0] || strspn(src, "abcdefghijklmnopqrstuvwxyz_") !=
					      strlen(src))))
			return -EINVAL;
		return tandem_agent_escape(src, strlen(src), out, len) < 0 ? -ENOSPC : 0;
	}
}

int tandem_agent_format(const struct tandem_agent_msg *m, char *buf, size_t len)
{
	char val[TANDEM_AGENT_LINE_MAX];
	const struct verb_def *vd;
	uint32_t have = m->have;
	size_t o;
	int n;

	if ((unsigned int)m->verb >= TANDEM_VERB_COUNT)
		return -EINVAL;
	vd = &verbs[m->verb];
	if (!vd->reply)
		have |= B(V);
	if ((have & ~(vd->required | vd->optional)) || (vd->required & ~have) ||
	    !!(have & B(ARRAY_JOB)) != !!(have & B(ARRAY_TASK)))
		return -EINVAL;
	n = snprintf(buf, len, "%s", vd->name);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	o = (size_t)n;
	for (int f = 0; f < TANDEM_F_COUNT; f++) {
		int err;

		if (!(have & (1u << f)))
			continue;
		if (f == TANDEM_F_V)
			err = snprintf(val, sizeof(val), "%d", TANDEM_AGENT_PROTO_VERSION) < 0;
		else
			err = fmt_value(&fields[f], m, val, sizeof(val));
		if (err)
			return err < 0 ? err : -EINVAL;
		n = snprintf(buf + o, len - o, " %s=%s", fields[f].key, val);
		if (n < 0 || (size_t)n >= len - o)
			return -ENOSPC;
		o += (size_t)n;
	}
	if (o + 2 > len || o + 1 > TANDEM_AGENT_LINE_MAX)
		return -ENOSPC;
	buf[o++] = '\n';
	buf[o] = '\0';
	return (int)o;
}
