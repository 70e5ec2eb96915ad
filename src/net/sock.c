#include "net/sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <sys/un.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"

int net_resolve(const char *host, uint16_t port, struct net_addr *out, const char **why)
{
	memset(out, 0, sizeof *out);
	struct sockaddr_in *a4 = (struct sockaddr_in *)&out->ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&out->ss;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		out->len = sizeof *a4;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		out->len = sizeof *a6;
		return 0;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0 || !res) {
		if (why)
			*why = gai_strerror(rc);
		return PACER_ERESOLVE;
	}
	memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
	out->len = res->ai_addrlen;
	if (out->ss.ss_family == AF_INET)
		a4->sin_port = htons(port);
	else
		a6->sin6_port = htons(port);
	freeaddrinfo(res);
	return 0;
}

int net_addr_unix(const char *path, struct net_addr *out)
{
	memset(out, 0, sizeof *out);
	struct sockaddr_un *un = (struct sockaddr_un *)&out->ss;
	size_t n = strlen(path);
	if (n == 0)
		return -EINVAL;
	if (n >= sizeof un->sun_path)
		return -ENAMETOOLONG;
	un->sun_family = AF_UNIX;
	memcpy(un->sun_path, path, n + 1);
	out->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

int net_connect_start(const struct net_addr *a)
{
	int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	if (a->ss.ss_family != AF_UNIX)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (const struct sockaddr *)&a->ss, a->len) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

bool net_rx_timestamps(int fd, const struct net_addr *a)
{
	if (a->ss.ss_family != AF_INET && a->ss.ss_family != AF_INET6)
		return false;
	int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) == 0;
}

ssize_t net_recv_ts(int fd, void *buf, size_t cap, uint64_t *rx_rt_ns)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct scm_timestamping))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = cap};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;
	do {
		m.msg_control = ctl.buf;
		m.msg_controllen = sizeof ctl.buf;
		n = recvmsg(fd, &m, 0);
	} while (n < 0 && errno == EINTR);
	*rx_rt_ns = 0;
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING) {
			struct scm_timestamping ts;
			memcpy(&ts, CMSG_DATA(c), sizeof ts);
			*rx_rt_ns = (uint64_t)ts.ts[0].tv_sec * 1000000000u + (uint64_t)ts.ts[0].tv_nsec;
		}
	}
	return n;
}

int net_connect_result(int fd)
{
	int err = 0;
	socklen_t len = sizeof err;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return -errno;
	return -err;
}

int net_probe(const struct net_addr *a, uint64_t timeout_ns)
{
	int fd = net_connect_start(a);
	if (fd < 0)
		return fd;
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int ms = (int)(timeout_ns / 1000000ull);
	int rc = poll(&p, 1, ms > 0 ? ms : 1);
	if (rc == 0)
		rc = -ETIMEDOUT;
	else if (rc < 0)
		rc = -errno;
	else
		rc = net_connect_result(fd);
	close(fd);
	return rc;
}

int net_listen(const struct net_addr *a, int backlog, bool reuseport)
{
	int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (reuseport)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) < 0 || listen(fd, backlog) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int net_local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

bool net_addr_is_loopback(const struct net_addr *a)
{
	if (a->ss.ss_family == AF_UNIX)
		return true;
	if (a->ss.ss_family == AF_INET) {
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)&a->ss;
		return (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
	}
	if (a->ss.ss_family != AF_INET6)
		return false;
	const struct in6_addr *a6 = &((const struct sockaddr_in6 *)&a->ss)->sin6_addr;
	return IN6_IS_ADDR_LOOPBACK(a6) || (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
}

char *net_addr_str(const struct net_addr *a, char *out, size_t cap)
{
	char host[INET6_ADDRSTRLEN] = "?";
	if (a->ss.ss_family == AF_UNIX) {
		snprintf(out, cap, "unix:%s", ((const struct sockaddr_un *)&a->ss)->sun_path);
	} else if (a->ss.ss_family == AF_INET) {
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)&a->ss;
		inet_ntop(AF_INET, &a4->sin_addr, host, sizeof host);
		snprintf(out, cap, "%s:%u", host, ntohs(a4->sin_port));
	} else {
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&a->ss;
		inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof host);
		snprintf(out, cap, "[%s]:%u", host, ntohs(a6->sin6_port));
	}
	return out;
}
