#include "util/afile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int afile_open(struct afile *a, const char *path)
{
	memset(a, 0, sizeof *a);
	if (strcmp(path, "-") == 0) {
		a->f = stdout;
		return 0;
	}
	a->path = strdup(path);
	size_t n = strlen(path) + 32;
	a->tmp_path = malloc(n);
	if (!a->path || !a->tmp_path) {
		afile_abort(a);
		return -ENOMEM;
	}
	snprintf(a->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
	a->f = fopen(a->tmp_path, "w");
	if (!a->f) {
		int e = errno;
		free(a->path);
		free(a->tmp_path);
		memset(a, 0, sizeof *a);
		return -e;
	}
	return 0;
}

int afile_commit(struct afile *a)
{
	if (a->f == stdout) {
		int rc = fflush(stdout) ? -errno : 0;
		memset(a, 0, sizeof *a);
		return rc;
	}
	int rc = 0;
	if (fflush(a->f) != 0 || ferror(a->f))
		rc = -(errno ? errno : EIO);
	if (!rc && fsync(fileno(a->f)) != 0)
		rc = -errno;
	if (fclose(a->f) != 0 && !rc)
		rc = -errno;
	a->f = NULL;
	if (!rc && rename(a->tmp_path, a->path) != 0)
		rc = -errno;
	if (rc)
		unlink(a->tmp_path);
	free(a->path);
	free(a->tmp_path);
	memset(a, 0, sizeof *a);
	return rc;
}

void afile_abort(struct afile *a)
{
	if (a->f && a->f != stdout) {
		fclose(a->f);
		unlink(a->tmp_path);
	}
	free(a->path);
	free(a->tmp_path);
	memset(a, 0, sizeof *a);
}
