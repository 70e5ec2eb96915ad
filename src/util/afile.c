#include "util/afile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define PROC_FS_MAGIC 0x9fa0 /* statfs f_type of /proc (linux/magic.h) */
#define AFILE_PENDING 32     /* temporaries known at once (afile_pending_add) */

/* The temporaries being written, for afile_unlink_pending (a signal
 * handler's): a slot is taken before the file is created and given back
 * once it is renamed or removed, before its path is freed. Atomic, so
 * that any thread may take one and a handler always reads a whole one. */
static _Atomic(const char *) pending[AFILE_PENDING];

int afile_pending_add(const char *path)
{
	for (size_t i = 0; i < AFILE_PENDING; i++) {
		const char *none = NULL;
		if (atomic_compare_exchange_strong(&pending[i], &none, path))
			return 0;
	}
	return -ENOSPC;
}

void afile_pending_forget(const char *path)
{
	for (size_t i = 0; i < AFILE_PENDING; i++) {
		const char *p = path;
		if (atomic_compare_exchange_strong(&pending[i], &p, NULL))
			return;
	}
}

int afile_unlink_pending(void)
{
	int n = 0;
	for (size_t i = 0; i < AFILE_PENDING; i++) {
		const char *p = atomic_load(&pending[i]);
		if (p) {
			unlink(p);
			n++;
		}
	}
	/* then the folders, emptied of their files by the pass above */
	for (size_t i = 0; i < AFILE_PENDING; i++) {
		const char *p = atomic_load(&pending[i]);
		if (p)
			rmdir(p);
	}
	return n;
}

#define MAX_LINKS 40

#define AFILE_HELD 8 /* FIFOs afile_check found a reader on, kept open */

/* A FIFO afile_check opened (without blocking: it has a reader) is kept
 * open until afile_open takes it, so that its reader is never handed an
 * end of file in between. */
static struct {
	char *path;
	int fd;
} held[AFILE_HELD];

/* The descriptor held for path (no longer held), or -1. */
static int held_take(const char *path)
{
	for (size_t i = 0; i < AFILE_HELD; i++)
		if (held[i].path && strcmp(held[i].path, path) == 0) {
			int fd = held[i].fd;
			free(held[i].path);
			held[i].path = NULL;
			return fd;
		}
	return -1;
}

/* FIFO path opened for writing without waiting for a reader: the
 * descriptor (blocking again), or -ENXIO when no process has it open to
 * read (a plain open would wait for one, for ever), or -errno. */
static int fifo_open(const char *path)
{
	int fd = held_take(path);
	if (fd < 0)
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* The folder part of p into d[cap] ("." when p has no slash). */
static int dir_of(const char *p, char *d, size_t cap)
{
	const char *s = strrchr(p, '/');
	if (!s)
		return snprintf(d, cap, ".") >= (int)cap ? -ENAMETOOLONG : 0;
	size_t n = s == p ? 1 : (size_t)(s - p);
	if (n >= cap)
		return -ENAMETOOLONG;
	memcpy(d, p, n);
	d[n] = '\0';
	return 0;
}

/* Whether the link p is /proc/<this process>/fd/N (or /proc/self/fd/N,
 * /dev/fd/N): *fd = N. Any other process's descriptor is not ours. */
static bool own_fd_link(const char *p, int *fd)
{
	char d[PATH_MAX];
	struct statfs sf;
	if (dir_of(p, d, sizeof d) || statfs(d, &sf) != 0 || sf.f_type != PROC_FS_MAGIC)
		return false;
	const char *base = strrchr(p, '/');
	base = base ? base + 1 : p;
	char *end;
	errno = 0;
	long n = strtol(base, &end, 10);
	if (!*base || *end || errno || n < 0 || n > INT_MAX)
		return false;
	char real[PATH_MAX], want[64];
	if (!realpath(d, real))
		return false;
	snprintf(want, sizeof want, "/proc/%ld/fd", (long)getpid());
	if (strcmp(real, want) != 0)
		return false;
	*fd = (int)n;
	return true;
}

int afile_how(const char *path, enum afile_how *how, char *buf, size_t cap, int *fd)
{
	if (strcmp(path, "-") == 0) {
		*how = AFILE_STDOUT;
		*fd = STDOUT_FILENO;
		return snprintf(buf, cap, "-") >= (int)cap ? -ENAMETOOLONG : 0;
	}
	char cur[PATH_MAX];
	if (!*path || snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
		return *path ? -ENAMETOOLONG : -ENOENT;
	for (int hop = 0; hop <= MAX_LINKS; hop++) {
		struct stat st;
		if (lstat(cur, &st) != 0) {
			if (errno != ENOENT)
				return -errno;
			/* /dev/fd/N of a closed descriptor: nothing can be made there */
			char d[PATH_MAX];
			struct statfs sf;
			if (!dir_of(cur, d, sizeof d) && statfs(d, &sf) == 0 &&
			    sf.f_type == PROC_FS_MAGIC)
				return -EBADF;
			*how = AFILE_ATOMIC; /* a new name (perhaps a dangling link's) */
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			if (own_fd_link(cur, fd)) {
				*how = AFILE_FD;
				break;
			}
			char to[PATH_MAX], d[PATH_MAX];
			ssize_t n = readlink(cur, to, sizeof to - 1);
			if (n < 0)
				return -errno;
			to[n] = '\0';
			if (to[0] == '/') {
				memcpy(cur, to, (size_t)n + 1);
			} else {
				int rc = dir_of(cur, d, sizeof d);
				if (rc)
					return rc;
				if (snprintf(cur, sizeof cur, "%s/%s", d, to) >= (int)sizeof cur)
					return -ENAMETOOLONG;
			}
			if (hop == MAX_LINKS)
				return -ELOOP;
			continue;
		}
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		*how = S_ISREG(st.st_mode) ? AFILE_ATOMIC : AFILE_IN_PLACE;
		break;
	}
	return snprintf(buf, cap, "%s", cur) >= (int)cap ? -ENAMETOOLONG : 0;
}

int afile_check(const char *path)
{
	enum afile_how how;
	char p[PATH_MAX], d[PATH_MAX];
	int fd = -1;
	int rc = afile_how(path, &how, p, sizeof p, &fd);
	if (rc)
		return rc;
	switch (how) {
	case AFILE_STDOUT:
	case AFILE_FD: {
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0)
			return -errno;
		return (fl & O_ACCMODE) == O_RDONLY ? -EBADF : 0;
	}
	case AFILE_IN_PLACE: {
		if (access(p, W_OK))
			return -errno;
		struct stat fst;
		if (stat(p, &fst) != 0 || !S_ISFIFO(fst.st_mode))
			return 0;
		/* a FIFO: it has a reader now, and keeps one until written */
		int hfd = fifo_open(p);
		if (hfd < 0)
			return hfd;
		for (size_t i = 0; i < AFILE_HELD; i++)
			if (!held[i].path && (held[i].path = strdup(p))) {
				held[i].fd = hfd;
				return 0;
			}
		close(hfd); /* none left to hold it: checked, not kept */
		return 0;
	}
	case AFILE_ATOMIC:
		break;
	}
	if ((rc = dir_of(p, d, sizeof d)))
		return rc;
	struct stat st;
	if (stat(d, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(d, W_OK | X_OK))
		return -errno;
	/* the sure test, for root too: the temporary afile_open would make,
	 * made and removed (/proc lets root pass access() and create nothing) */
	char t[PATH_MAX + 32];
	if ((size_t)snprintf(t, sizeof t, "%s.tmp.%ld", p, (long)getpid()) >= sizeof t)
		return -ENAMETOOLONG;
	bool known = afile_pending_add(t) == 0;
	int tfd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	/* ENOENT with the folder there: nothing can be made in it (/proc) */
	rc = tfd >= 0 || errno == EEXIST ? 0 : errno == ENOENT ? -EACCES : -errno;
	if (tfd >= 0) {
		close(tfd);
		unlink(t);
	}
	if (known)
		afile_pending_forget(t);
	return rc;
}

bool afile_is_stdout(const char *path)
{
	enum afile_how how;
	char p[PATH_MAX];
	int fd = -1;
	if (!path || afile_how(path, &how, p, sizeof p, &fd))
		return false;
	return how == AFILE_STDOUT || (how == AFILE_FD && fd == STDOUT_FILENO);
}

int afile_open(struct afile *a, const char *path)
{
	memset(a, 0, sizeof *a);
	enum afile_how how;
	char p[PATH_MAX];
	int fd = -1;
	int rc = afile_how(path, &how, p, sizeof p, &fd);
	if (rc)
		return rc;
	if (how == AFILE_STDOUT) {
		a->f = stdout;
		return 0;
	}
	if (how == AFILE_FD) {
		fflush(NULL); /* what went to the same file through stdio first stays first */
		int d = dup(fd);
		if (d < 0)
			return -errno;
		a->f = fdopen(d, "w");
		if (!a->f) {
			int e = errno;
			close(d);
			return -e;
		}
		return 0;
	}
	if (how == AFILE_IN_PLACE) {
		struct stat fst;
		if (stat(p, &fst) == 0 && S_ISFIFO(fst.st_mode)) {
			int ffd = fifo_open(p);
			if (ffd < 0)
				return ffd;
			a->f = fdopen(ffd, "w");
			if (!a->f) {
				int e = errno;
				close(ffd);
				return -e;
			}
			return 0;
		}
		a->f = fopen(p, "w");
		return a->f ? 0 : -errno;
	}
	a->path = strdup(p);
	size_t n = strlen(p) + 32;
	a->tmp_path = malloc(n);
	if (!a->path || !a->tmp_path) {
		afile_abort(a);
		return -ENOMEM;
	}
	snprintf(a->tmp_path, n, "%s.tmp.%ld", p, (long)getpid());
	/* the file replaced keeps its permissions (a result kept 0600 stays
	 * 0600); a new one gets 0666 less the umask. The temporary is made
	 * with them, so it is never more readable than the file it becomes,
	 * and never through a link left at its name. */
	struct stat st;
	bool keep = stat(p, &st) == 0 && S_ISREG(st.st_mode);
	mode_t mode = keep ? st.st_mode & 07777 : 0666;
	/* known before it exists: a signal that ends pacer from here on
	 * removes it (none known, when too many are open: it is still written) */
	bool known = afile_pending_add(a->tmp_path) == 0;
	int tfd = -1;
	for (int tries = 0; tfd < 0 && tries < 2; tries++) {
		tfd = open(a->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			  keep ? (mode & 0600) : mode);
		if (tfd < 0 && errno == EEXIST && tries == 0)
			unlink(a->tmp_path); /* left by a process of the same id */
		else if (tfd < 0)
			break;
	}
	if (tfd >= 0 && keep && fchmod(tfd, mode) != 0) {
		int e = errno;
		close(tfd);
		unlink(a->tmp_path);
		tfd = -1;
		errno = e;
	}
	a->f = tfd >= 0 ? fdopen(tfd, "w") : NULL;
	if (!a->f) {
		int e = errno;
		if (tfd >= 0) {
			close(tfd);
			unlink(a->tmp_path);
		}
		if (known)
			afile_pending_forget(a->tmp_path);
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
	if (!rc && a->tmp_path && fsync(fileno(a->f)) != 0)
		rc = -errno;
	if (fclose(a->f) != 0 && !rc)
		rc = -errno;
	a->f = NULL;
	if (a->tmp_path) {
		if (!rc && rename(a->tmp_path, a->path) != 0)
			rc = -errno;
		if (rc)
			unlink(a->tmp_path);
		afile_pending_forget(a->tmp_path);
	}
	free(a->path);
	free(a->tmp_path);
	memset(a, 0, sizeof *a);
	return rc;
}

void afile_abort(struct afile *a)
{
	if (a->f && a->f != stdout) {
		fclose(a->f);
		if (a->tmp_path) {
			unlink(a->tmp_path);
			afile_pending_forget(a->tmp_path);
		}
	}
	free(a->path);
	free(a->tmp_path);
	memset(a, 0, sizeof *a);
}
