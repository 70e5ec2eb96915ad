/* pacer — the --h2c check before a run (h2probe.h). */
#include "net/h2probe.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "net/sock.h"
#include "util/clock.h"

/* Wait for ev on fd until deadline: 0, -ETIMEDOUT or -errno. */
static int wait_fd(int fd, short ev, uint64_t deadline)
{
	for (;;) {
		uint64_t now = clock_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd p = {.fd = fd, .events = ev};
		int ms = (int)((deadline - now + NS_PER_MS - 1) / NS_PER_MS);
		int rc = poll(&p, 1, ms);
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
}

int net_h2c_probe(const struct net_addr *a, uint64_t timeout_ns, char *reason, size_t cap)
{
	static const char hello[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
				    "\0\0\0\4\0\0\0\0\0"; /* SETTINGS, empty */
	uint64_t deadline = clock_now_ns() + timeout_ns;
	reason[0] = '\0';
	int fd = net_connect_start(a);
	if (fd < 0)
		return fd;
	int rc = wait_fd(fd, POLLOUT, deadline);
	if (!rc)
		rc = net_connect_result(fd);
	size_t off = 0, len = sizeof hello - 1;
	while (!rc && off < len) {
		ssize_t n = write(fd, hello + off, len - off);
		if (n > 0)
			off += (size_t)n;
		else if (n < 0 && (errno == EAGAIN || errno == EINTR))
			rc = wait_fd(fd, POLLOUT, deadline);
		else
			rc = -errno;
	}
	unsigned char got[9];
	size_t have = 0;
	while (!rc && have < sizeof got) {
		ssize_t n = read(fd, got + have, sizeof got - have);
		if (n > 0) {
			have += (size_t)n;
		} else if (n == 0) {
			break;
		} else if (errno == EAGAIN || errno == EINTR) {
			rc = wait_fd(fd, POLLIN, deadline);
		} else {
			rc = -errno;
		}
	}
	close(fd);
	if (rc)
		return rc;
	if (have == sizeof got && got[3] == 4 && !(got[4] & 1) && !got[5] && !got[6] && !got[7] &&
	    !got[8])
		return 0;
	if (have >= 5 && memcmp(got, "HTTP/", 5) == 0)
		snprintf(reason, cap, "the server answered in HTTP/1.x: it does not speak HTTP/2 "
				      "with prior knowledge (drop --h2c)");
	else if (have < sizeof got)
		snprintf(reason, cap, "the server closed the connection after the HTTP/2 preface");
	else
		snprintf(reason, cap, "the server's first frame is not HTTP/2 SETTINGS");
	return -EPROTO;
}
