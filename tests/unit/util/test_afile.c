/* Tests of the output writer (src/util/afile.c): atomic replacement of
 * regular files and new names only; devices, FIFOs, links to them and
 * descriptor paths written in place, their node never renamed over; the
 * checks made before a load. Everything happens in a fresh folder under
 * /tmp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/tmpdir.h"
#include "util/afile.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "afile");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

static void at(char *buf, size_t cap, const char *name)
{
	tmpdir_path(buf, cap, dir, name);
}

static void write_all(const char *path, const char *text)
{
	struct afile a;
	assert_int_equal(afile_open(&a, path), 0);
	assert_true(fputs(text, a.f) >= 0);
	assert_int_equal(afile_commit(&a), 0);
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A new name and a regular file: written through a temporary and renamed,
 * so the file is a new inode and no temporary is left. */
static void test_regular_atomic(void **state)
{
	(void)state;
	char p[PATH_MAX], got[PATH_MAX];
	at(p, sizeof p, "r.json");
	enum afile_how how;
	int fd = -1;
	assert_int_equal(afile_how(p, &how, got, sizeof got, &fd), 0);
	assert_int_equal(how, AFILE_ATOMIC);
	write_all(p, "one");
	struct stat a, b;
	assert_int_equal(stat(p, &a), 0);
	assert_int_equal(afile_how(p, &how, got, sizeof got, &fd), 0);
	assert_int_equal(how, AFILE_ATOMIC);
	assert_string_equal(got, p);
	write_all(p, "two");
	assert_int_equal(stat(p, &b), 0);
	assert_true(S_ISREG(b.st_mode));
	assert_true(a.st_ino != b.st_ino);
	assert_string_equal(slurp(p), "two");
	char tmp[PATH_MAX + 40];
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
	assert_int_equal(access(tmp, F_OK), -1);
	/* an abort leaves the old file as it was */
	struct afile af;
	assert_int_equal(afile_open(&af, p), 0);
	fputs("three", af.f);
	afile_abort(&af);
	assert_string_equal(slurp(p), "two");
}

/* A file replaced keeps its permissions: a result kept 0600 (it may hold
 * what --no-redact shows) is not made readable by others by a new run; a
 * new file gets 0666 less the umask; a link left at the temporary's name
 * is not followed. */
static void test_mode_kept(void **state)
{
	(void)state;
	char p[PATH_MAX], q[PATH_MAX], tmp[PATH_MAX + 40];
	at(p, sizeof p, "secret.json");
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(p, 0600), 0);
	write_all(p, "one");
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(chmod(p, 0640), 0);
	write_all(p, "two");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	mode_t um = umask(022);
	at(q, sizeof q, "new.json");
	write_all(q, "x");
	assert_int_equal(stat(q, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	umask(um);
	/* a link at the temporary's name (another user's trap in a shared
	 * folder) is replaced, never written through */
	char victim[PATH_MAX];
	at(victim, sizeof victim, "victim");
	write_all(victim, "keep");
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
	assert_int_equal(symlink(victim, tmp), 0);
	write_all(p, "three");
	assert_string_equal(slurp(victim), "keep");
	assert_string_equal(slurp(p), "three");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
}

/* A FIFO is written in place: its reader gets the bytes and the FIFO is
 * still a FIFO afterwards (not replaced by a regular file). */
static void test_fifo_in_place(void **state)
{
	(void)state;
	char p[PATH_MAX], got[PATH_MAX];
	at(p, sizeof p, "fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	enum afile_how how;
	int fd = -1;
	assert_int_equal(afile_how(p, &how, got, sizeof got, &fd), 0);
	assert_int_equal(how, AFILE_IN_PLACE);
	/* no reader: refused at once, by the check and by the open (a plain
	 * open would wait for one for ever) */
	assert_int_equal(afile_check(p), -ENXIO);
	struct afile a;
	assert_int_equal(afile_open(&a, p), -ENXIO);
	int r = open(p, O_RDONLY | O_NONBLOCK);
	assert_true(r >= 0);
	/* a reader: the check keeps the FIFO open until it is written, so the
	 * reader sees no end of file in between */
	assert_int_equal(afile_check(p), 0);
	char buf[64];
	assert_int_equal(read(r, buf, sizeof buf), -1);
	assert_int_equal(errno, EAGAIN); /* a writer is there: no data yet, not EOF */
	write_all(p, "{\"x\":1}");
	ssize_t n = read(r, buf, sizeof buf - 1);
	assert_int_equal(n, 7);
	buf[n] = '\0';
	assert_string_equal(buf, "{\"x\":1}");
	assert_int_equal(read(r, buf, sizeof buf), 0); /* written and closed: no copy kept */
	close(r);
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
}

/* A symbolic link to /dev/null: written in place, the link stays a link
 * to /dev/null and /dev/null stays a character device. */
static void test_link_to_dev_null(void **state)
{
	(void)state;
	char p[PATH_MAX], got[PATH_MAX];
	at(p, sizeof p, "null");
	assert_int_equal(symlink("/dev/null", p), 0);
	enum afile_how how;
	int fd = -1;
	assert_int_equal(afile_how(p, &how, got, sizeof got, &fd), 0);
	assert_int_equal(how, AFILE_IN_PLACE);
	assert_string_equal(got, "/dev/null");
	assert_int_equal(afile_check(p), 0);
	write_all(p, "discarded");
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	char to[64];
	ssize_t n = readlink(p, to, sizeof to - 1);
	assert_true(n > 0);
	to[n] = '\0';
	assert_string_equal(to, "/dev/null");
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

/* A relative link to a regular file: the target is replaced atomically and
 * the link kept. */
static void test_link_to_regular(void **state)
{
	(void)state;
	char p[PATH_MAX], t[PATH_MAX], got[PATH_MAX];
	at(p, sizeof p, "latest.json");
	at(t, sizeof t, "run-1.json");
	write_all(t, "old");
	assert_int_equal(symlink("run-1.json", p), 0);
	enum afile_how how;
	int fd = -1;
	assert_int_equal(afile_how(p, &how, got, sizeof got, &fd), 0);
	assert_int_equal(how, AFILE_ATOMIC);
	assert_string_equal(got, t);
	write_all(p, "new");
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_string_equal(slurp(t), "new");
}

/* /dev/fd/N of a pipe (what a shell's >(cmd) passes): our descriptor,
 * written through a duplicate; the pipe's reader gets the bytes. */
static void test_dev_fd_pipe(void **state)
{
	(void)state;
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	char p[64], got[PATH_MAX];
	snprintf(p, sizeof p, "/dev/fd/%d", pfd[1]);
	enum afile_how how;
	int fd = -1;
	assert_int_equal(afile_how(p, &how, got, sizeof got, &fd), 0);
	assert_int_equal(how, AFILE_FD);
	assert_int_equal(fd, pfd[1]);
	assert_int_equal(afile_check(p), 0);
	write_all(p, "piped");
	close(pfd[1]);
	char buf[32];
	ssize_t n = read(pfd[0], buf, sizeof buf - 1);
	assert_int_equal(n, 5);
	buf[n] = '\0';
	assert_string_equal(buf, "piped");
	/* the read end is not writable, a closed descriptor is not there:
	 * both refused before any load */
	snprintf(p, sizeof p, "/dev/fd/%d", pfd[0]);
	assert_int_equal(afile_check(p), -EBADF);
	close(pfd[0]);
	assert_int_equal(afile_check(p), -EBADF);
}

static void test_stdout_names(void **state)
{
	(void)state;
	assert_true(afile_is_stdout("-"));
	assert_true(afile_is_stdout("/dev/stdout"));
	assert_true(afile_is_stdout("/dev/fd/1"));
	assert_false(afile_is_stdout("/dev/stderr"));
	assert_false(afile_is_stdout("/dev/null"));
	char p[PATH_MAX];
	at(p, sizeof p, "x.json");
	assert_false(afile_is_stdout(p));
	enum afile_how how;
	int fd = -1;
	char got[PATH_MAX];
	assert_int_equal(afile_how("/dev/stdout", &how, got, sizeof got, &fd), 0);
	assert_int_equal(how, AFILE_FD);
	assert_int_equal(fd, 1);
}

/* What is refused before a load: a missing folder, a folder, a path
 * through a regular file, a folder that cannot be written. */
static void test_check_refuses(void **state)
{
	(void)state;
	char p[PATH_MAX];
	at(p, sizeof p, "no/such/dir/r.json");
	assert_int_equal(afile_check(p), -ENOENT);
	assert_int_equal(afile_check(dir), -EISDIR);
	at(p, sizeof p, "file");
	write_all(p, "x");
	at(p, sizeof p, "file/r.json");
	assert_int_equal(afile_check(p), -ENOTDIR);
	at(p, sizeof p, "new.json");
	assert_int_equal(afile_check(p), 0);
	assert_int_equal(access(p, F_OK), -1); /* checking creates nothing */
	char tmp[PATH_MAX + 40];
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
	assert_int_equal(access(tmp, F_OK), -1); /* and leaves no temporary */
	/* a file of /proc: no temporary can be made beside it, root or not */
	assert_true(afile_check("/proc/version") < 0);
	assert_true(afile_check("/proc/new.json") < 0);
	if (geteuid() != 0) {                  /* root writes any folder */
		char ro[PATH_MAX];
		at(ro, sizeof ro, "ro");
		assert_int_equal(mkdir(ro, 0500), 0);
		at(p, sizeof p, "ro/r.json");
		assert_int_equal(afile_check(p), -EACCES);
	}
}

/* What a signal ending pacer removes (afile_unlink_pending): the
 * temporary of an atomic write under way and what a caller named (a
 * folder with a file in it), never the target; nothing once committed,
 * aborted or forgotten; past 32 names the write still goes on. */
static void test_pending_removed(void **state)
{
	(void)state;
	char p[PATH_MAX], tmp[PATH_MAX + 40], d[PATH_MAX], f[PATH_MAX + 8];
	at(p, sizeof p, "pending.json");
	write_all(p, "old");
	assert_int_equal(afile_unlink_pending(), 0);
	struct afile af;
	assert_int_equal(afile_open(&af, p), 0);
	fputs("new", af.f);
	fflush(af.f);
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
	assert_int_equal(access(tmp, F_OK), 0);
	at(d, sizeof d, "pending.d");
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(f, sizeof f, "%s/a", d);
	write_all(f, "a");
	assert_int_equal(afile_pending_add(d), 0);
	assert_int_equal(afile_pending_add(f), 0);
	assert_int_equal(afile_unlink_pending(), 3);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(access(f, F_OK), -1);
	assert_int_equal(access(d, F_OK), -1);
	assert_string_equal(slurp(p), "old");
	afile_abort(&af);
	afile_pending_forget(f);
	afile_pending_forget(d);
	assert_int_equal(afile_unlink_pending(), 0);
	/* committed: forgotten */
	assert_int_equal(afile_open(&af, p), 0);
	assert_int_equal(afile_commit(&af), 0);
	assert_int_equal(afile_unlink_pending(), 0);
	/* full: -ENOSPC, and an afile is still written */
	static char names[32][32];
	for (int i = 0; i < 32; i++) {
		snprintf(names[i], sizeof names[i], "/nonexistent%d", i);
		assert_int_equal(afile_pending_add(names[i]), 0);
	}
	assert_int_equal(afile_pending_add("/nonexistent"), -ENOSPC);
	write_all(p, "full");
	assert_string_equal(slurp(p), "full");
	for (int i = 0; i < 32; i++)
		afile_pending_forget(names[i]);
	assert_int_equal(afile_unlink_pending(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regular_atomic),   cmocka_unit_test(test_fifo_in_place),
		cmocka_unit_test(test_link_to_dev_null), cmocka_unit_test(test_link_to_regular),
		cmocka_unit_test(test_dev_fd_pipe),      cmocka_unit_test(test_stdout_names),
		cmocka_unit_test(test_check_refuses),    cmocka_unit_test(test_mode_kept),
		cmocka_unit_test(test_pending_removed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
