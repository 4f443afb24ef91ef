// SPDX-License-Identifier: GPL-2.0
/* Errors, file reading, CRC-32 and random numbers for the predictor. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static __thread char errbuf[512];

const char *tp_errmsg(void)
{
	return errbuf;
}

void tp_clear_error(void)
{
	errbuf[0] = '\0';
}

int tp_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return err;
}

static int read_all(int fd, uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = read(fd, buf + done, len - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		done += (size_t)r;
	}
	return 0;
}

int tp_read_file(const char *path, size_t max, uint8_t **out, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tp_fail(-errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		err = tp_fail(-errno, "%s: %s", path, strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		err = tp_fail(-EINVAL, "%s: not a regular file", path);
		goto out_close;
	}
	if ((uint64_t)st.st_size > max) {
		err = tp_fail(-EFBIG, "%s: %lld bytes, more than the limit of %zu",
			      path, (long long)st.st_size, max);
		goto out_close;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		err = tp_fail(-ENOMEM, "%s: out of memory", path);
		goto out_close;
	}
	err = read_all(fd, buf, (size_t)st.st_size);
	if (err) {
		free(buf);
		err = tp_fail(err, "%s: read failed: %s", path, strerror(-err));
		goto out_close;
	}
	*out = buf;
	*len = (size_t)st.st_size;
out_close:
	close(fd);
	return err;
}

/* CRC-32 (IEEE 802.3, as zlib.crc32), bitwise: model files are small. */
uint32_t tp_crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

void tp_rng_seed(struct tp_rng *r, uint64_t seed)
{
	/* splitmix64 so that small seeds give unrelated streams */
	uint64_t z = seed + 0x9E3779B97F4A7C15ull;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	r->s = (z ^ (z >> 31)) | 1;
}

uint64_t tp_rng_u64(struct tp_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1Dull;
}

double tp_rng_uniform(struct tp_rng *r)
{
	return (double)(tp_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

double tp_rng_normal(struct tp_rng *r)
{
	double u1 = tp_rng_uniform(r), u2 = tp_rng_uniform(r);

	return sqrt(-2.0 * log(u1 + 1e-300)) * cos(2.0 * M_PI * u2);
}
