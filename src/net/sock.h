/* pacer — socket helpers: name resolution, non-blocking TCP connect,
 * listening sockets. Return a file descriptor / 0, or a negative errno or
 * PACER_E* code. */
#ifndef PACER_NET_SOCK_H
#define PACER_NET_SOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

struct net_addr {
	struct sockaddr_storage ss;
	socklen_t len;
};

/* Resolve host:port to the first usable TCP address (IPv4 or IPv6
 * literals, or a name through getaddrinfo). PACER_ERESOLVE when the name does
 * not resolve; *why (if not NULL) gets the resolver's message. */
int net_resolve(const char *host, uint16_t port, struct net_addr *out, const char **why);

/* A Unix-domain stream socket at path (--unix-socket). 0, or -EINVAL for
 * an empty path, -ENAMETOOLONG when it does not fit sun_path. */
int net_addr_unix(const char *path, struct net_addr *out);

/* Start a non-blocking connect with TCP_NODELAY (for TCP). Returns the fd (the connect
 * may still be in progress: wait for writability, then net_connect_result). */
int net_connect_start(const struct net_addr *a);
/* Ask the kernel to stamp every segment fd receives with its arrival time
 * (software receive timestamps, SO_TIMESTAMPING). True when it will: TCP
 * over IPv4 or IPv6; false for a Unix socket (stream Unix sockets carry no
 * timestamps) or when the kernel refuses. */
bool net_rx_timestamps(int fd, const struct net_addr *a);
/* read() that also gives the arrival time (CLOCK_REALTIME ns) of the last
 * segment the read consumed, in *rx_rt_ns, or 0 when the kernel gave none.
 * Bytes, 0 at the end of the stream, or -errno (EINTR retried). */
ssize_t net_recv_ts(int fd, void *buf, size_t cap, uint64_t *rx_rt_ns);
/* After writability: 0 if connected, else the negative errno of the failure. */
int net_connect_result(int fd);
/* Blocking connect with a timeout, to check that the target answers before
 * the run starts. 0 or a negative errno (-ETIMEDOUT on timeout). */
int net_probe(const struct net_addr *a, uint64_t timeout_ns);

/* Non-blocking listening socket bound to a (SO_REUSEADDR; SO_REUSEPORT when
 * reuseport). Returns the fd. */
int net_listen(const struct net_addr *a, int backlog, bool reuseport);
/* Local port a socket is bound to, or a negative errno. */
int net_local_port(int fd);
/* "127.0.0.1:8080" / "[::1]:8080" / "unix:/path". Returns out. */
char *net_addr_str(const struct net_addr *a, char *out, size_t cap);
/* Whether a connection to a stays on this machine: IPv4 127.0.0.0/8, IPv6
 * ::1, an IPv4-mapped 127.x address (::ffff:127.0.0.1), or a Unix socket. */
bool net_addr_is_loopback(const struct net_addr *a);

#endif
