/* pacer unit tests — a private temporary folder: made fresh under /tmp with
 * a tag in its name, paths in it, and removed with everything in it. Most
 * tests keep one in a `static char dir[...]` made by their setup() and
 * removed by their teardown(). */
#ifndef PACER_TESTS_COMMON_TMPDIR_H
#define PACER_TESTS_COMMON_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Make a new folder /tmp/pacer-TAG-XXXXXX, its path in dir[cap]. 0, or -1
 * (it does not fit, or mkdtemp failed: errno says why). */
static inline int tmpdir_make(char *dir, size_t cap, const char *tag)
{
	int n = snprintf(dir, cap, "/tmp/pacer-%s-XXXXXX", tag);
	if (n < 0 || (size_t)n >= cap)
		return -1;
	return mkdtemp(dir) ? 0 : -1;
}

/* path[cap] = dir/name (cut to fit). */
static inline void tmpdir_path(char *path, size_t cap, const char *dir, const char *name)
{
	snprintf(path, cap, "%s/%s", dir, name);
}

static inline int tmpdir_remove_one(const char *path, const struct stat *st, int flag,
				    struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) == 0 ? 0 : -1;
}

/* Remove dir and everything in it (symbolic links are removed, not
 * followed). 0, or -1 when something could not be removed. */
static inline int tmpdir_remove(const char *dir)
{
	return nftw(dir, tmpdir_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
