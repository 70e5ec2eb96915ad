/* pacer — writing an output file: atomically (a temporary file beside the
 * target, then rename over it) where the path is a regular file or a new
 * name, so a crash or Ctrl-C never leaves a half-written file; in place
 * where it is anything else (a character device such as /dev/null, a FIFO,
 * /dev/stdout, a process substitution's /dev/fd/N), whose node is never
 * renamed over. Symbolic links are followed: a link to a regular file has
 * its target replaced atomically and the link kept. */
#ifndef PACER_UTIL_AFILE_H
#define PACER_UTIL_AFILE_H

#include <stdbool.h>
#include <stdio.h>

struct afile {
	FILE *f;         /* write here */
	char *path;      /* final path (owned); NULL when written in place */
	char *tmp_path;  /* temporary path (owned); NULL when written in place */
};

/* How a path is written (afile_how). */
enum afile_how {
	AFILE_STDOUT,   /* "-": the process's stdout */
	AFILE_FD,       /* /dev/fd/N, /proc/self/fd/N, /dev/stdout...: our open fd N */
	AFILE_IN_PLACE, /* a character device, FIFO or socket: opened and written */
	AFILE_ATOMIC,   /* a regular file or a new name: temporary file + rename */
};

/* Where and how path would be written: *how, the final path after
 * symbolic links (into buf[cap]; for AFILE_ATOMIC the name renamed over)
 * and, for AFILE_FD, the descriptor in *fd. Touches nothing. 0, or -errno:
 * -EISDIR for a folder, -EBADF for /dev/fd/N of a closed descriptor,
 * -ELOOP for too many links, -ENAMETOOLONG. */
int afile_how(const char *path, enum afile_how *how, char *buf, size_t cap, int *fd);

/* Whether path could be written now: for a new or regular file a folder
 * that exists and can be written, where the temporary afile_open makes is
 * made and removed at once (the one sure test: /proc lets root pass the
 * permission checks yet creates nothing); write permission on a device;
 * for a FIFO a reader: it is opened without waiting (-ENXIO: no process
 * reads it) and kept open for afile_open, so that its reader never sees an
 * end of file in between; a descriptor open for writing for /dev/fd/N. 0,
 * or -errno (-ENOENT: no such folder; -EACCES; -EISDIR; -EBADF: the fd is
 * not open for writing; -ENXIO). The target itself is never created or
 * changed. */
int afile_check(const char *path);

/* Whether path names this process's standard output: "-", /dev/stdout,
 * /dev/fd/1, /proc/self/fd/1 (not another descriptor on the same file). */
bool afile_is_stdout(const char *path);

/* Open path for writing as afile_how says: "-" is stdout (not closed), fd
 * N a duplicate of it, in place a fopen of the node (a FIFO: the
 * descriptor afile_check kept, or one opened without waiting for a reader:
 * -ENXIO when it has none, never a wait for ever), atomic a temporary
 * file beside the final path, created afresh (a link left at its name is
 * replaced, not followed) with the permissions of the file it replaces (a
 * result kept 0600 stays 0600; owner-only until they are set) or, for a
 * new name, 0666 less the umask. 0 or -errno. */
int afile_open(struct afile *a, const char *path);
/* Flush and close; atomic: fsync and rename into place. 0 or -errno (the
 * temporary is removed on failure). Frees a's memory either way. */
int afile_commit(struct afile *a);
/* Close and, atomic, remove the temporary: the target is untouched (written
 * in place, what was written stays). */
void afile_abort(struct afile *a);

/* The temporaries a signal ending pacer removes: afile_open names each
 * it creates here until it is renamed into place or removed; a caller
 * names others (a folder written before it is renamed into place, the
 * files in it) with afile_pending_add, keeping path's memory until
 * afile_pending_forget. 0, or -ENOSPC when 32 are named already (the
 * write goes on; a signal would leave that one). Any thread. */
int afile_pending_add(const char *path);
void afile_pending_forget(const char *path);
/* Remove the temporaries named (files first, then folders emptied so),
 * leaving their targets as they were: for a signal handler about to end
 * the process (async-signal-safe: unlink and rmdir only). How many were
 * named. */
int afile_unlink_pending(void);

#endif
