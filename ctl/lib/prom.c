// SPDX-License-Identifier: GPL-2.0
/* Prometheus text exposition format into a textfile-collector file. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/prom.h"

static int fail(struct tandem_prom *p, int err)
{
	if (!p->err)
		p->err = err;
	return p->err;
}

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n <= 7 || n >= TANDEM_PROM_NAME_MAX || strncmp(s, "tandem_", 7) || s[n - 1] == '_')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return !strstr(s, "__");
}

static int label_name_ok(const char *s)
{
	if (!s || !*s || (s[0] >= '0' && s[0] <= '9') || !strncmp(s, "__", 2))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* length of the valid UTF-8 sequence at s (1..4), 0 when invalid */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/* escape for HELP (quotes: 0) or a label value (quotes: 1) */
static void put_escaped(FILE *f, const char *s, int quotes)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		size_t n = utf8_len(u);

		if (!n) {
			fputs("\xef\xbf\xbd", f);	/* U+FFFD */
			u++;
		} else if (*u == '\\') {
			fputs("\\\\", f), u++;
		} else if (*u == '\n') {
			fputs("\\n", f), u++;
		} else if (*u == '"' && quotes) {
			fputs("\\\"", f), u++;
		} else {
			fwrite(u, 1, n, f);
			u += n;
		}
	}
}

int tandem_prom_open(struct tandem_prom *p, const char *dir, const char *name)
{
	int fd, err;

	memset(p, 0, sizeof(*p));
	if (!ends_with(name, ".prom") || strchr(name, '/') || name[0] == '.')
		return p->err = -EINVAL;
	if (asprintf(&p->path, "%s/%s", dir, name) < 0 ||
	    asprintf(&p->tmp, "%s/.%s.XXXXXX", dir, name) < 0) {
		free(p->path);
		p->path = NULL;
		return p->err = -ENOMEM;
	}
	fd = mkostemp(p->tmp, O_CLOEXEC);
	if (fd < 0)
		goto err_free;
	p->f = fdopen(fd, "w");
	if (!p->f) {
		close(fd);
		unlink(p->tmp);
		goto err_free;
	}
	return 0;
err_free:
	err = -errno;
	free(p->path);
	free(p->tmp);
	p->path = p->tmp = NULL;
	return p->err = err;
}

int tandem_prom_family(struct tandem_prom *p, const char *name, enum tandem_prom_type type,
		       const char *help)
{
	if (p->err)
		return p->err;
	if (!name_ok(name) || !help || !*help ||
	    (type == TANDEM_PROM_COUNTER) != ends_with(name, "_total") ||
	    (type != TANDEM_PROM_COUNTER && type != TANDEM_PROM_GAUGE))
		return fail(p, -EINVAL);
	for (size_t i = 0; i < p->nseen; i++)
		if (!strcmp(p->seen[i], name))
			return fail(p, -EEXIST);
	if (p->nseen == TANDEM_PROM_FAMILIES_MAX)
		return fail(p, -ENOSPC);
	p->seen[p->nseen] = strdup(name);
	if (!p->seen[p->nseen])
		return fail(p, -ENOMEM);
	p->nseen++;
	snprintf(p->family, sizeof(p->family), "%s", name);
	p->type = type;
	fprintf(p->f, "# HELP %s ", name);
	put_escaped(p->f, help, 0);
	fprintf(p->f, "\n# TYPE %s %s\n", name, type == TANDEM_PROM_COUNTER ? "counter" : "gauge");
	return 0;
}

static void put_value(FILE *f, double v)
{
	char buf[32];

	if (isnan(v)) {
		fputs("NaN", f);
		return;
	}
	if (isinf(v)) {
		fputs(v > 0 ? "+Inf" : "-Inf", f);
		return;
	}
	/* the shortest of %.15g and %.17g that reads back the same */
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, f);
}

int tandem_prom_sample(struct tandem_prom *p, const struct tandem_prom_label *labels,
		       size_t nlabels, double value)
{
	if (p->err)
		return p->err;
	if (!p->family[0] || (nlabels && !labels))
		return fail(p, -EINVAL);
	if (p->type == TANDEM_PROM_COUNTER && (!isfinite(value) || value < 0))
		return fail(p, -ERANGE);
	for (size_t i = 0; i < nlabels; i++) {
		if (!label_name_ok(labels[i].name) || !labels[i].value)
			return fail(p, -EINVAL);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(labels[i].name, labels[j].name))
				return fail(p, -EINVAL);
	}
	fputs(p->family, p->f);
	for (size_t i = 0; i < nlabels; i++) {
		fprintf(p->f, "%c%s=\"", i ? ',' : '{', labels[i].name);
		put_escaped(p->f, labels[i].value, 1);
		fputc('"', p->f);
	}
	fputs(nlabels ? "} " : " ", p->f);
	put_value(p->f, value);
	fputc('\n', p->f);
	return 0;
}

static void prom_free(struct tandem_prom *p)
{
	for (size_t i = 0; i < p->nseen; i++)
		free(p->seen[i]);
	free(p->path);
	free(p->tmp);
	p->nseen = 0;
	p->path = p->tmp = NULL;
}

void tandem_prom_abort(struct tandem_prom *p)
{
	if (p->f && p->stream) {
		p->f = NULL;
	} else if (p->f) {
		fclose(p->f);
		unlink(p->tmp);
		p->f = NULL;
	}
	prom_free(p);
}

int tandem_prom_open_stream(struct tandem_prom *p, FILE *f)
{
	memset(p, 0, sizeof(*p));
	p->f = f;
	p->stream = 1;
	return 0;
}

int tandem_prom_commit(struct tandem_prom *p)
{
	int err = p->err;

	if (!p->f) {
		prom_free(p);
		return err ? err : -EINVAL;
	}
	if (p->stream) {
		/* the caller's stream: flushed, not closed */
		if (fflush(p->f) && !err)
			err = -errno;
		p->f = NULL;
		prom_free(p);
		return err;
	}
	if (!err && (fflush(p->f) || fsync(fileno(p->f)) || fchmod(fileno(p->f), 0644)))
		err = -errno;
	if (fclose(p->f) && !err)
		err = -errno;
	p->f = NULL;
	if (!err && rename(p->tmp, p->path))
		err = -errno;
	if (err)
		unlink(p->tmp);
	prom_free(p);
	return err;
}
