#include "util/file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/err.h"

const char *file_shown(const char *path)
{
	return strcmp(path, "-") ? path : "stdin";
}

int file_read_all(const char *path, size_t cap, char **out, size_t *len)
{
	bool in = !strcmp(path, "-");
	FILE *f = in ? stdin : fopen(path, "rb");
	if (!f)
		return -errno;
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		if (!in)
			fclose(f); /* fopen opens a folder; reading it fails with EISDIR, shown as EIO */
		return -EISDIR;
	}
	size_t size = cap < 4096 ? cap : 4096, n = 0;
	char *buf = malloc(size + 1);
	int rc = buf ? 0 : -ENOMEM;
	while (!rc) {
		if (n == size) {
			if (size >= cap) {
				/* exactly cap bytes is fine; one more is not */
				if (fgetc(f) != EOF)
					rc = PACER_ETOOBIG;
				break;
			}
			size = size * 2 > cap ? cap : size * 2;
			char *nb = realloc(buf, size + 1);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
		}
		size_t r = fread(buf + n, 1, size - n, f);
		n += r;
		if (r == 0) {
			if (ferror(f))
				rc = -EIO;
			break;
		}
	}
	if (!in)
		fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int file_mkdir_p(const char *dir)
{
	size_t n = strlen(dir);
	char *p = malloc(n + 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, dir, n + 1);
	int rc = 0;
	for (size_t i = 1; i <= n && !rc; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		char save = p[i];
		p[i] = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST)
			rc = -errno;
		p[i] = save;
	}
	free(p);
	if (!rc) {
		struct stat st;
		if (stat(dir, &st) != 0)
			rc = -errno;
		else if (!S_ISDIR(st.st_mode))
			rc = -ENOTDIR;
	}
	return rc;
}
