/* pacer — signals around a measurement and its outputs (cli/signals.h). */
#include "cli/signals.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/afile.h"

/* SIGINT and SIGTERM taken as an interrupt of the measurement. */
static volatile sig_atomic_t signals_taken;
/* And those the handler has seen while the results are written. */
static volatile sig_atomic_t signals_writing;

static void say(const char *msg)
{
	ssize_t w = write(STDERR_FILENO, msg, strlen(msg));
	(void)w;
}

/* End the process by sig, as its default action would (the status says
 * which signal), once the handler returns. */
static void die_by(int sig)
{
	signal(sig, SIG_DFL);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	raise(sig);
}

/* SIGINT or SIGTERM at any other time: the default action, after the
 * temporaries of the writes under way are removed. */
static void on_signal(int sig)
{
	if (afile_unlink_pending())
		say("\npacer: interrupted while writing a file: stopped; it is left as it was\n");
	die_by(sig);
}

/* SIGINT or SIGTERM once the load is over: the first of the run is said
 * and otherwise ignored, so the results are written; the next removes the
 * temporary files of the writes under way and ends pacer by the signal. */
static void on_signal_writing(int sig)
{
	if (signals_taken + ++signals_writing < 2) {
		say("\npacer: interrupted while writing the results: finishing them "
		    "(again to stop at once, without those not yet written)\n");
		return;
	}
	afile_unlink_pending();
	say("\npacer: interrupted again: stopped; the results not yet written are not, "
	    "and their files are left as they were\n");
	die_by(sig);
}

static void catch_with(void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	static const int sigs[] = {SIGINT, SIGTERM};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction was;
		/* one ignored when pacer started (nohup, a shell's `&`) stays so */
		if (sigaction(sigs[i], NULL, &was) == 0 && was.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

void cli_signals_init(void)
{
	catch_with(on_signal);
}

void cli_signals_block(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, old);
	signal(SIGPIPE, SIG_IGN);
}

void cli_signals_restore(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

void cli_signal_taken(void)
{
	signals_taken++;
}

void cli_outputs_guard(const sigset_t *old)
{
	catch_with(on_signal_writing);
	cli_signals_restore(old);
}

void cli_test_signal(const char *point)
{
	const char *at = getenv("PACER_TEST_SIGNAL_AT");
	size_t n = strlen(point);
	for (const char *p = at; p && (p = strstr(p, point)); p += n)
		if ((p == at || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			raise(SIGINT);
}
