/* pacer — atomic file writes: write to a temporary file beside the target,
 * then rename over it, so a crash or Ctrl-C never leaves a half-written file. */
#ifndef PACER_UTIL_AFILE_H
#define PACER_UTIL_AFILE_H

#include <stdio.h>

struct afile {
	FILE *f;         /* write here */
	char *path;      /* final path (owned) */
	char *tmp_path;  /* temporary path (owned) */
};

/* Create the temporary file. 0 or -errno. "-" means stdout (no rename). */
int afile_open(struct afile *a, const char *path);
/* Flush, fsync, close and rename into place. 0 or -errno (the temporary is
 * removed on failure). Frees a's memory either way. */
int afile_commit(struct afile *a);
/* Close and remove the temporary; the target is untouched. */
void afile_abort(struct afile *a);

#endif
