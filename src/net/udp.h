/* pacer — UDP datagrams, for QUIC: a connected non-blocking socket, batched
 * receives (recvmmsg: several datagrams a call, each with the kernel's
 * arrival stamp and, where the kernel coalesces datagrams (UDP_GRO), their
 * segment size) and batched sends (one sendmsg with UDP_SEGMENT for a run of
 * equal-size datagrams where the kernel has UDP GSO, else sendmmsg).
 *
 * The buffers are the caller's, made once (udp_rx_init): nothing is
 * allocated per datagram. Return a count, or a negative errno. */
#ifndef PACER_NET_UDP_H
#define PACER_NET_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "net/sock.h"

#define UDP_RX_SLOTS 16          /* datagrams (or GRO runs) one receive takes at most */
#define UDP_RX_SLOT_CAP 65536    /* bytes of each: a GRO run, or the largest datagram */
#define UDP_TX_MAX 64            /* datagrams one send takes at most */

struct mmsghdr;

/* What the socket can do. */
struct udp_caps {
	bool gso; /* UDP_SEGMENT: a run of equal datagrams in one send */
	bool gro; /* UDP_GRO: the kernel hands over runs of datagrams at once */
};

/* A receive batch: UDP_RX_SLOTS slots of UDP_RX_SLOT_CAP bytes (one
 * allocation, udp_rx_init) and, after udp_recv, what each slot holds. */
struct udp_rx {
	uint8_t *buf;
	struct mmsghdr *msgs;
	struct iovec *iov;
	char (*ctl)[128];
	unsigned n;             /* slots filled by the last udp_recv */
	size_t len[UDP_RX_SLOTS];
	size_t seg[UDP_RX_SLOTS];      /* GRO: the size of each datagram of the run (the
	                                * last may be shorter); 0: one datagram */
	uint64_t rx_rt[UDP_RX_SLOTS];  /* the kernel's arrival stamp (CLOCK_REALTIME), 0: none */
	bool trunc[UDP_RX_SLOTS];      /* larger than a slot: cut (the caller drops it) */
};

/* A non-blocking UDP socket connected to a, with GRO turned on where the
 * kernel has it (receive stamps: net_rx_timestamps). The fd, or a negative
 * errno. */
int net_udp_connect(const struct net_addr *a);
/* A non-blocking UDP socket bound to a, for a server (the embedded
 * target's HTTP/3): its datagrams' sources come with each receive. With
 * reuseport, SO_REUSEPORT: several sockets on one port, the kernel handing
 * each client's datagrams (by its address and port) to one of them. The
 * fd, or a negative errno. */
int net_udp_bind(const struct net_addr *a, bool reuseport);
/* What fd can do (GSO, GRO on). */
void net_udp_caps(int fd, struct udp_caps *caps);

/* The slots of a receive batch. 0 or -ENOMEM. */
int udp_rx_init(struct udp_rx *r);
void udp_rx_free(struct udp_rx *r);

/* Take what is queued on fd, up to UDP_RX_SLOTS slots: the slots filled
 * (r->n; 0 when nothing waits), or a negative errno (a connected socket
 * reports an ICMP error here: -ECONNREFUSED). */
int udp_recv(int fd, struct udp_rx *r);

/* The data of slot i. */
static inline const uint8_t *udp_rx_data(const struct udp_rx *r, unsigned i)
{
	return r->buf + (size_t)i * UDP_RX_SLOT_CAP;
}

/* Send n datagrams laid end to end in buf, of lens[i] bytes each: runs of
 * equal size (each run's last may be shorter) as one GSO send where caps
 * allow, all in one sendmmsg (a kernel that refuses GSO with EIO turns
 * caps->gso off and the datagrams go one by one). The datagrams sent (the rest did not fit
 * the socket's buffer: -EAGAIN when none did), or a negative errno. */
int udp_send(int fd, struct udp_caps *caps, const uint8_t *buf, const size_t *lens, size_t n);

#endif
