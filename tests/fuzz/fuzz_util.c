// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "fuzz_util.h"

static FILE *devnull, *saved;

int fuzz__memfd(const void *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("fuzz", 0);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

void fuzz__quiet(void)
{
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	saved = stderr;
	stderr = devnull;
}

void fuzz__loud(void)
{
	if (saved)
		stderr = saved;
}

size_t fuzz__split(const uint8_t *data, size_t size, struct fuzz_part *parts, size_t max)
{
	size_t n = 0, i;

	for (i = 0; i < max; i++)
		parts[i] = (struct fuzz_part){ 0 };
	while (n < max && size >= 4) {
		uint32_t len = data[0] | data[1] << 8 | data[2] << 16 | (uint32_t)data[3] << 24;

		data += 4;
		size -= 4;
		if (len > size)
			len = size;
		parts[n].p = data;
		parts[n++].len = len;
		data += len;
		size -= len;
	}
	return n;
}
