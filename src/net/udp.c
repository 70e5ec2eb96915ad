/* pacer — UDP datagrams for QUIC (net/udp.h): a connected socket, batched
 * receives with stamps and GRO, batched sends with GSO. */
#include "net/udp.h"

#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

int net_udp_connect(const struct net_addr *a)
{
	sa_family_t f = a->ss.ss_family;
	if (f != AF_INET && f != AF_INET6)
		return -EAFNOSUPPORT;
	int fd = socket(f, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&a->ss, a->len) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	int one = 1;
	(void)setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof one);
	return fd;
}

int net_udp_bind(const struct net_addr *a, bool reuseport)
{
	sa_family_t f = a->ss.ss_family;
	if (f != AF_INET && f != AF_INET6)
		return -EAFNOSUPPORT;
	int fd = socket(f, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return -errno;
	int one = 1;
	if ((reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0) ||
	    bind(fd, (const struct sockaddr *)&a->ss, a->len) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

void net_udp_caps(int fd, struct udp_caps *caps)
{
	int v = 0;
	socklen_t len = sizeof v;
	caps->gro = getsockopt(fd, IPPROTO_UDP, UDP_GRO, &v, &len) == 0 && v;
	/* GSO: the option exists on kernels that have it (each send sets its size) */
	len = sizeof v;
	caps->gso = getsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &v, &len) == 0;
}

int udp_rx_init(struct udp_rx *r)
{
	memset(r, 0, sizeof *r);
	r->buf = malloc((size_t)UDP_RX_SLOTS * UDP_RX_SLOT_CAP);
	r->msgs = calloc(UDP_RX_SLOTS, sizeof *r->msgs);
	r->iov = calloc(UDP_RX_SLOTS, sizeof *r->iov);
	r->ctl = calloc(UDP_RX_SLOTS, sizeof *r->ctl);
	if (!r->buf || !r->msgs || !r->iov || !r->ctl) {
		udp_rx_free(r);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < UDP_RX_SLOTS; i++) {
		r->iov[i] = (struct iovec){.iov_base = r->buf + (size_t)i * UDP_RX_SLOT_CAP,
					   .iov_len = UDP_RX_SLOT_CAP};
		r->msgs[i].msg_hdr.msg_iov = &r->iov[i];
		r->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	return 0;
}

void udp_rx_free(struct udp_rx *r)
{
	free(r->buf);
	free(r->msgs);
	free(r->iov);
	free(r->ctl);
	memset(r, 0, sizeof *r);
}

int udp_recv(int fd, struct udp_rx *r)
{
	r->n = 0;
	for (unsigned i = 0; i < UDP_RX_SLOTS; i++) {
		r->msgs[i].msg_hdr.msg_control = r->ctl[i];
		r->msgs[i].msg_hdr.msg_controllen = sizeof r->ctl[i];
		r->msgs[i].msg_hdr.msg_flags = 0;
	}
	int n;
	do {
		n = recvmmsg(fd, r->msgs, UDP_RX_SLOTS, MSG_DONTWAIT, NULL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		struct msghdr *m = &r->msgs[i].msg_hdr;
		r->len[i] = r->msgs[i].msg_len;
		r->trunc[i] = (m->msg_flags & MSG_TRUNC) != 0;
		r->seg[i] = 0;
		r->rx_rt[i] = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING) {
				struct scm_timestamping ts;
				memcpy(&ts, CMSG_DATA(c), sizeof ts);
				r->rx_rt[i] = (uint64_t)ts.ts[0].tv_sec * 1000000000u +
					      (uint64_t)ts.ts[0].tv_nsec;
			} else if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
				int seg;
				memcpy(&seg, CMSG_DATA(c), sizeof seg);
				r->seg[i] = seg > 0 && (size_t)seg < r->len[i] ? (size_t)seg : 0;
			}
		}
	}
	r->n = (unsigned)n;
	return n;
}

/* Most bytes one GSO send carries (the kernel's limit is 64 KiB of
 * payload, and at most 64 segments). */
#define GSO_BYTES_MAX 65000
#define GSO_SEGS_MAX 64

int udp_send(int fd, struct udp_caps *caps, const uint8_t *buf, const size_t *lens, size_t n)
{
	if (n > UDP_TX_MAX)
		n = UDP_TX_MAX;
	struct mmsghdr msgs[UDP_TX_MAX];
	struct iovec iov[UDP_TX_MAX];
	_Alignas(struct cmsghdr) char ctl[UDP_TX_MAX][CMSG_SPACE(sizeof(uint16_t))];
	size_t per[UDP_TX_MAX]; /* datagrams in each message */
	for (;;) {
		size_t m = 0, off = 0;
		for (size_t i = 0; i < n;) {
			size_t seg = lens[i], total = seg, j = i + 1;
			if (caps->gso) {
				while (j < n && lens[j] == seg && total + seg <= GSO_BYTES_MAX &&
				       j - i < GSO_SEGS_MAX) {
					total += seg;
					j++;
				}
				if (j < n && lens[j] < seg && total + lens[j] <= GSO_BYTES_MAX &&
				    j - i < GSO_SEGS_MAX) { /* a shorter last one ends the run */
					total += lens[j];
					j++;
				}
			}
			memset(&msgs[m], 0, sizeof msgs[m]);
			iov[m] = (struct iovec){.iov_base = (void *)(buf + off), .iov_len = total};
			msgs[m].msg_hdr.msg_iov = &iov[m];
			msgs[m].msg_hdr.msg_iovlen = 1;
			if (j - i > 1) {
				struct msghdr *h = &msgs[m].msg_hdr;
				/* zeroed: the padding after the data goes to the kernel too */
				memset(ctl[m], 0, sizeof ctl[m]);
				h->msg_control = ctl[m];
				h->msg_controllen = sizeof ctl[m];
				struct cmsghdr *c = CMSG_FIRSTHDR(h);
				c->cmsg_level = IPPROTO_UDP;
				c->cmsg_type = UDP_SEGMENT;
				c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
				uint16_t s16 = (uint16_t)seg;
				memcpy(CMSG_DATA(c), &s16, sizeof s16);
			}
			per[m++] = j - i;
			off += total;
			i = j;
		}
		int k;
		do {
			k = sendmmsg(fd, msgs, (unsigned)m, MSG_DONTWAIT);
		} while (k < 0 && errno == EINTR);
		if (k < 0 && errno == EIO && caps->gso) {
			caps->gso = false; /* the device refused the segmentation: one by one */
			continue;
		}
		if (k < 0)
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		int sent = 0;
		for (int i = 0; i < k; i++)
			sent += (int)per[i];
		return sent;
	}
}
