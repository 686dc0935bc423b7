/* delayline: a fixed one-way latency on a network namespace's outgoing packets, for kernels
 * without tc's netem (scripts/cluster.sh; docs/testbed.md).
 *
 * Usage: delayline QUEUE DELAY_US   (run as root inside the namespace, after a netfilter
 * rule that queues the packets to delay to QUEUE, e.g. nft `oifname "eth0" queue num 0
 * bypass`). Prints "ready" on stdout once bound, then runs until killed.
 *
 * The kernel queues each packet and tells this process its id (metadata only: no payload
 * is copied; GSO packets stay whole). A packet is accepted DELAY_US after it was read here,
 * in arrival order, by one batch verdict for the newest packet that is due: packet ids rise
 * with arrival, and a batch verdict accepts every queued packet up to its id. If this
 * process is not running, `bypass` lets packets through undelayed; if its socket
 * overflows, the packets it was not told about leave with the next batch verdict.
 *
 * Accuracy: a packet leaves no earlier than DELAY_US after the kernel queued it, and later
 * by this process's wake-up latency (timer slack is set to 1 ns and SCHED_FIFO is asked for,
 * so that is small on an idle machine; on a loaded one it is not). */
#define _GNU_SOURCE /* ppoll */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { RING = 1 << 16, MSG = 256, RCVBUF = 16 << 20 };

typedef struct {
    int fd;
    uint16_t queue;
    int64_t delay_ns;
    uint32_t id[RING]; /* packets read and not yet accepted, oldest at head */
    int64_t t[RING];
    size_t head, n;
} Line;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* msg_start BUF TYPE FLAGS: a queue-subsystem message header; returns the header */
static struct nlmsghdr *msg_start(char *buf, int type, int flags, uint16_t queue)
{
    memset(buf, 0, MSG);
    struct nlmsghdr *h = (struct nlmsghdr *)buf;
    h->nlmsg_len = NLMSG_LENGTH(sizeof(struct nfgenmsg));
    h->nlmsg_type = (uint16_t)((NFNL_SUBSYS_QUEUE << 8) | type);
    h->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
    struct nfgenmsg *g = NLMSG_DATA(h);
    g->nfgen_family = AF_UNSPEC;
    g->version = NFNETLINK_V0;
    g->res_id = htons(queue);
    return h;
}

static void attr(struct nlmsghdr *h, int type, const void *data, size_t len)
{
    struct nlattr *a = (struct nlattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));
    a->nla_type = (uint16_t)type;
    a->nla_len = (uint16_t)(NLA_HDRLEN + len);
    memcpy((char *)a + NLA_HDRLEN, data, len);
    h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* talk: send a request that asks for an acknowledgement; 0 or the kernel's errno */
static int talk(Line *l, struct nlmsghdr *h)
{
    char ack[MSG];
    if (send(l->fd, h, h->nlmsg_len, 0) < 0) return errno;
    ssize_t got = recv(l->fd, ack, sizeof ack, 0);
    if (got < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr))) return got < 0 ? errno : EPROTO;
    struct nlmsghdr *r = (struct nlmsghdr *)ack;
    if (r->nlmsg_type != NLMSG_ERROR) return EPROTO;
    return -((struct nlmsgerr *)NLMSG_DATA(r))->error;
}

/* bind_queue: take the queue; metadata only, GSO packets whole, accept when full */
static int bind_queue(Line *l)
{
    char buf[MSG];
    struct nlmsghdr *h = msg_start(buf, NFQNL_MSG_CONFIG, NLM_F_ACK, l->queue);
    struct nfqnl_msg_config_cmd cmd = {.command = NFQNL_CFG_CMD_BIND, .pf = htons(AF_INET)};
    attr(h, NFQA_CFG_CMD, &cmd, sizeof cmd);
    int err = talk(l, h);
    if (err) return err;
    h = msg_start(buf, NFQNL_MSG_CONFIG, NLM_F_ACK, l->queue);
    struct nfqnl_msg_config_params p = {.copy_range = 0, .copy_mode = NFQNL_COPY_META};
    attr(h, NFQA_CFG_PARAMS, &p, sizeof p);
    uint32_t maxlen = htonl(RING);
    attr(h, NFQA_CFG_QUEUE_MAXLEN, &maxlen, sizeof maxlen);
    uint32_t flags = htonl(NFQA_CFG_F_GSO | NFQA_CFG_F_FAIL_OPEN);
    attr(h, NFQA_CFG_MASK, &flags, sizeof flags);
    attr(h, NFQA_CFG_FLAGS, &flags, sizeof flags);
    return talk(l, h);
}

/* accept_upto: one batch verdict: every queued packet up to ID goes on */
static void accept_upto(Line *l, uint32_t id)
{
    char buf[MSG];
    struct nlmsghdr *h = msg_start(buf, NFQNL_MSG_VERDICT_BATCH, 0, l->queue);
    struct nfqnl_msg_verdict_hdr v = {.verdict = htonl(NF_ACCEPT), .id = htonl(id)};
    attr(h, NFQA_VERDICT_HDR, &v, sizeof v);
    if (send(l->fd, h, h->nlmsg_len, 0) < 0 && errno != ENOBUFS) {
        perror("delayline: verdict");
        exit(1);
    }
}

/* release: accept what is due at NOW; returns ns until the next is due (-1: none) */
static int64_t release(Line *l, int64_t now)
{
    uint32_t last = 0;
    int any = 0;
    while (l->n > 0 && l->t[l->head] + l->delay_ns <= now) {
        last = l->id[l->head];
        any = 1;
        l->head = (l->head + 1) % RING;
        l->n--;
    }
    if (any) accept_upto(l, last);
    return l->n > 0 ? l->t[l->head] + l->delay_ns - now : -1;
}

/* take: note the packets of one datagram read at NOW */
static void take(Line *l, const char *buf, size_t len, int64_t now)
{
    for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; NLMSG_OK(h, len);
         h = NLMSG_NEXT(h, len)) {
        if ((h->nlmsg_type & 0xff) != NFQNL_MSG_PACKET) continue;
        const char *p = (const char *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct nfgenmsg));
        const char *end = (const char *)h + h->nlmsg_len;
        while (p + NLA_HDRLEN <= end) {
            const struct nlattr *a = (const struct nlattr *)p;
            if (a->nla_len < NLA_HDRLEN) break;
            if ((a->nla_type & NLA_TYPE_MASK) == NFQA_PACKET_HDR) {
                struct nfqnl_msg_packet_hdr ph;
                memcpy(&ph, p + NLA_HDRLEN, sizeof ph);
                if (l->n == RING) release(l, INT64_MAX); /* full: the oldest go now */
                size_t at = (l->head + l->n) % RING;
                l->id[at] = ntohl(ph.packet_id);
                l->t[at] = now;
                l->n++;
                break;
            }
            p += NLA_ALIGN(a->nla_len);
        }
    }
}

int main(int argc, char **argv)
{
    static Line l;
    static char buf[1 << 16];
    char *end = NULL;
    long q = argc == 3 ? strtol(argv[1], &end, 10) : -1;
    double us = argc == 3 && end && !*end ? strtod(argv[2], &end) : -1;
    if (q < 0 || q > 65535 || us < 0 || !end || *end) {
        fprintf(stderr, "usage: delayline QUEUE DELAY_US\n");
        return 2;
    }
    l.queue = (uint16_t)q;
    l.delay_ns = (int64_t)(us * 1000);
    prctl(PR_SET_TIMERSLACK, 1UL);
    struct sched_param sp = {.sched_priority = 1};
    sched_setscheduler(0, SCHED_FIFO, &sp); /* best effort: wake-ups on time */
    l.fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
    int rcv = RCVBUF, one = 1;
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    if (l.fd < 0 || bind(l.fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        perror("delayline: netlink socket");
        return 1;
    }
    if (setsockopt(l.fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof rcv) != 0)
        setsockopt(l.fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    setsockopt(l.fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);
    int err = bind_queue(&l);
    if (err) {
        fprintf(stderr, "delayline: cannot bind queue %ld: %s\n", q, strerror(err));
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        int64_t wait = release(&l, now_ns());
        struct timespec ts = {.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
        struct pollfd pfd = {.fd = l.fd, .events = POLLIN};
        if (ppoll(&pfd, 1, wait < 0 ? NULL : &ts, NULL) < 0 && errno != EINTR) {
            perror("delayline: poll");
            return 1;
        }
        if (!(pfd.revents & POLLIN)) continue;
        for (;;) {
            ssize_t got = recv(l.fd, buf, sizeof buf, MSG_DONTWAIT);
            if (got < 0 && errno == ENOBUFS) continue;
            if (got <= 0) break;
            take(&l, buf, (size_t)got, now_ns());
        }
    }
}
