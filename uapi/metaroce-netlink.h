/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * soft-MetaRoCE administration over generic netlink: the ABI between
 * metaroce.ko and the `metaroce` tool (userspace/cli/). Its machine-readable
 * description is Documentation/netlink/specs/metaroce.yaml; the two must
 * agree (userspace/cli/tests/spec_check.py checks it).
 *
 * Family "metaroce", version METAROCE_GENL_VERSION, one multicast group,
 * "events". The family is network-namespace aware: a request sees the
 * metaroce devices whose netdev lives in the namespace of the requesting
 * socket, dumps list only those, and events go to the namespace of the
 * device they concern. A device of another namespace is "no such device".
 *
 * Commands (the reply to a request carries the request's command):
 *   DEV_GET   do: one device, named by METAROCE_A_DEV_INDEX or _NAME.
 *             dump: every device of the namespace.
 *   DEV_SET   do: change a device's settings. Needs CAP_NET_ADMIN in the
 *             user namespace that owns the device's network namespace
 *             (GENL_UNS_ADMIN_PERM); replies with an ACK only, and sends
 *             DEV_CHANGE_NTF.
 *   QP_GET    do: one QP (device and METAROCE_A_QP_NUM required).
 *             dump: the QPs of one device, or of every device if none is
 *             named, in QPN order; with METAROCE_A_QP_NUM only that QP.
 *   PATH_GET  dump: the paths of one QP (device and METAROCE_A_PATH_QPN
 *             required), in path id order; with METAROCE_A_PATH_ID only
 *             that path. A QP without paths (UD, GSI, or before RTR)
 *             yields an empty dump.
 *   PLANE_GET dump: the planes of one device, or of every device if none
 *             is named, in plane id order.
 *   PLANE_ADD do: make a netdev (METAROCE_A_PLANE_NETDEV_NAME) of the
 *             device's namespace a plane of the device; CAP_NET_ADMIN.
 *   PLANE_DEL do: the netdev is no longer one of its planes;
 *             CAP_NET_ADMIN. -EBUSY while the plane serves and the device
 *             has QPs besides its GSI QP: set its netdev down first.
 *   *_NTF     events, multicast to the "events" group, never requested.
 * Only DEV_SET, PLANE_ADD and PLANE_DEL need a capability; gets, dumps
 * and the events group are open to every user of the namespace.
 *
 * Message layout: every message is a genlmsghdr (cmd, version =
 * METAROCE_GENL_VERSION) followed by the attributes of one attribute set:
 * DEV_* commands use enum metaroce_a_dev, QP_GET enum metaroce_a_qp,
 * PATH_GET enum metaroce_a_path, events enum metaroce_a_event. Nests
 * hold the attributes their comment names. Every reply and event starts
 * with the device's index and name, so that a message stands alone.
 *
 * Types and ranges are fixed per attribute (see each enum). The kernel
 * validates requests strictly: an unknown attribute, a wrong length or a
 * value out of range is refused with -EINVAL or -ERANGE and an extended
 * ACK naming the attribute (NLMSGERR_ATTR_OFFS, and NLMSGERR_ATTR_POLICY
 * with the accepted range), and every other refusal carries an extack
 * message too (NLMSGERR_ATTR_MSG). Errors of a dump come back in the
 * NLMSG_ERROR answering the request (for a bad selector) or in NLMSG_DONE.
 *   -ENODEV  no such device in the caller's namespace
 *   -ENOENT  no such QP or path
 *   -EINVAL  selector missing or inconsistent (index and name of two
 *            devices), read-only attribute in DEV_SET, values that do not
 *            fit together (an initial window above the maximum ...)
 *   -ERANGE  value out of range
 *   -EBUSY   DEV_SET udp-port while the device has QPs
 *   -EPERM   DEV_SET without CAP_NET_ADMIN
 *   -EOPNOTSUPP  an attribute this module knows but does not implement
 *            yet (METAROCE_A_DEV_KEY until connection security lands)
 *
 * Replies may omit any attribute the kernel has no value for (a path with
 * no RTT sample yet may omit SRTT; a UD QP has no peer) and userspace must
 * ignore attributes it does not know. New attributes, commands and enum
 * values are added at the end without a version change;
 * METAROCE_GENL_VERSION changes only if a meaning changes incompatibly.
 *
 * What kernel/netlink.c of this module does within the ABI: a device
 * starts on the module's UDP port (parameter udp_port); DEV_SET UDP_PORT
 * of another value is -EBUSY while the device has QPs besides its GSI QP,
 * and -EADDRINUSE when something else in the namespace holds the port.
 * Devices on one port in a namespace share its sockets. The initial
 * and maximum windows are whole packets (multiples of 1024), AI at most
 * 16384 and MIN_WINDOW at most 1024: other values in the ranges
 * below get -EINVAL with a message. The QP STATS nest has no RX_*,
 * DUPLICATES (not counted per QP yet) and the path STATS nest no
 * CE_MARKS (the connection's are in the QP's).
 *
 * Units, the same everywhere:
 *   times    u64 nanoseconds (attribute names end in _NS)
 *   rates    u32 kbit/s (1000 bit/s; names end in _KBPS), which reach
 *            4.29 Tbit/s
 *   windows  u32 in 1/1024 packet (METAROCE_WINDOW_UNIT): a window may
 *            shrink below one packet, pacing then spaces the packets
 *   alpha    u32 in 1/65536 (METAROCE_ALPHA_UNIT): DCTCP's estimate of
 *            the fraction of packets marked CE, 0 to 65536
 *   packets  u32 counts of packets in flight; counters are u64
 *   addresses  binary, network byte order, 4 bytes (IPV4) or 16 (IPV6)
 * u64 attributes are aligned with the set's PAD attribute
 * (nla_put_u64_64bit()); readers must not assume 8-byte alignment.
 */
#ifndef METAROCE_NETLINK_H
#define METAROCE_NETLINK_H

#define METAROCE_GENL_NAME "metaroce"
#define METAROCE_GENL_VERSION 1
#define METAROCE_GENL_MCGRP_EVENTS "events"

/* Window attributes count 1/1024 packet: 1024 is one packet. */
#define METAROCE_WINDOW_UNIT 1024U
/* Alpha attributes count 1/65536: 65536 is alpha = 1.0. */
#define METAROCE_ALPHA_UNIT 65536U

/* Ranges the kernel accepts in DEV_SET (inclusive). */
#define METAROCE_PATHS_MIN 1
#define METAROCE_PATHS_MAX 64
#define METAROCE_FAIL_AFTER_MIN 1
#define METAROCE_FAIL_AFTER_MAX 16
#define METAROCE_CC_GAIN_SHIFT_MIN 1
#define METAROCE_CC_GAIN_SHIFT_MAX 10
/*
 * Initial and maximum windows: at least one packet; a path's at most its
 * SACK scoreboard, a connection's at most 64 of them.
 */
#define METAROCE_CC_WINDOW_MIN METAROCE_WINDOW_UNIT
#define METAROCE_CC_PATH_WINDOW_MAX (256 * METAROCE_WINDOW_UNIT)
#define METAROCE_CC_CONN_WINDOW_MAX (16384 * METAROCE_WINDOW_UNIT)
#define METAROCE_CC_MIN_WINDOW_MIN 1
#define METAROCE_CC_MIN_WINDOW_MAX (16 * METAROCE_WINDOW_UNIT)
#define METAROCE_CC_AI_MIN 1
#define METAROCE_CC_AI_MAX (64 * METAROCE_WINDOW_UNIT)
#define METAROCE_CC_TARGET_DELAY_MIN_NS 1000ULL
#define METAROCE_CC_TARGET_DELAY_MAX_NS 1000000000ULL
#define METAROCE_CC_LOSS_BURST_MIN 1
#define METAROCE_CC_LOSS_BURST_MAX 256
/* AES-128-GCM or AES-256-GCM */
#define METAROCE_KEY_LEN_MIN 16
#define METAROCE_KEY_LEN_MAX 32

enum metaroce_cmd {
	METAROCE_CMD_UNSPEC,
	METAROCE_CMD_DEV_GET,		/* do, dump */
	METAROCE_CMD_DEV_SET,		/* do; CAP_NET_ADMIN */
	METAROCE_CMD_QP_GET,		/* do, dump */
	METAROCE_CMD_PATH_GET,		/* dump */
	/* events, in the "events" group */
	METAROCE_CMD_DEV_CHANGE_NTF,	/* enum metaroce_a_dev, as DEV_GET */
	METAROCE_CMD_PATH_FAILOVER_NTF,	/* enum metaroce_a_event */
	METAROCE_CMD_QP_ERROR_NTF,	/* enum metaroce_a_event */
	METAROCE_CMD_PLANE_DOWN_NTF,	/* enum metaroce_a_event */
	METAROCE_CMD_PLANE_UP_NTF,	/* enum metaroce_a_event */
	METAROCE_CMD_PLANE_GET,		/* dump */
	METAROCE_CMD_PLANE_ADD,		/* do; CAP_NET_ADMIN */
	METAROCE_CMD_PLANE_DEL,		/* do; CAP_NET_ADMIN */

	__METAROCE_CMD_MAX,
	METAROCE_CMD_MAX = __METAROCE_CMD_MAX - 1
};

/*
 * A device: DEV_GET request (INDEX or NAME) and reply, DEV_SET request
 * (INDEX or NAME, then the settings marked "set"), DEV_CHANGE_NTF.
 * Settings apply to QPs created afterwards (existing QPs keep theirs),
 * except INGRESS_KBPS, which applies at once.
 */
enum metaroce_a_dev {
	METAROCE_A_DEV_UNSPEC,
	METAROCE_A_DEV_PAD,
	METAROCE_A_DEV_INDEX,		/* u32: the RDMA device index (`rdma dev`) */
	METAROCE_A_DEV_NAME,		/* string, NUL-terminated, at most 63 chars */
	METAROCE_A_DEV_NETDEV_IFINDEX,	/* u32, read-only */
	METAROCE_A_DEV_NETDEV_NAME,	/* string, at most 15 chars, read-only */
	METAROCE_A_DEV_UDP_PORT,	/* u16 1-65535, set; EBUSY while QPs but GSI exist */
	METAROCE_A_DEV_PATHS,		/* u32 1-64, set: paths per connection */
	METAROCE_A_DEV_FAIL_AFTER,	/* u32 1-16, set: RTOs in a row that fail a path */
	METAROCE_A_DEV_NUM_QPS,		/* u32, read-only: QPs of the device */
	METAROCE_A_DEV_CC,		/* nest, enum metaroce_a_cc; set */
	/* u32, set: the capacity rate hints share out; 0: the link speed */
	METAROCE_A_DEV_INGRESS_KBPS,
	/* u32, read-only: the capacity in use; 0: unknown (no link speed) */
	METAROCE_A_DEV_INGRESS_ACTIVE_KBPS,
	METAROCE_A_DEV_STATS,		/* nest, enum metaroce_a_stats, read-only */
	/* nest, enum metaroce_a_key; write-only: never in a reply or event */
	METAROCE_A_DEV_KEY,
	METAROCE_A_DEV_NUM_KEYS,	/* u32, read-only: keys installed */

	__METAROCE_A_DEV_MAX,
	METAROCE_A_DEV_MAX = __METAROCE_A_DEV_MAX - 1
};

/* Congestion control of the device's connections (nest METAROCE_A_DEV_CC). */
enum metaroce_a_cc {
	METAROCE_A_CC_UNSPEC,
	METAROCE_A_CC_PAD,
	METAROCE_A_CC_ENABLED,		/* u8 0-1: 0, fixed windows and no pacing */
	METAROCE_A_CC_ECN,		/* u8 0-1: react to CE marks */
	METAROCE_A_CC_DELAY,		/* u8 0-1: react to delay above the target */
	METAROCE_A_CC_LOSS,		/* u8 0-1: react to loss bursts */
	METAROCE_A_CC_GAIN_SHIFT,	/* u8 1-10: DCTCP gain g = 2^-shift */
	METAROCE_A_CC_AI,		/* u32 1-65536: increase per RTT, window units */
	METAROCE_A_CC_INIT_PATH_WINDOW,	/* u32 1024-262144, window units */
	METAROCE_A_CC_INIT_CONN_WINDOW,	/* u32 1024-16777216, window units */
	METAROCE_A_CC_MAX_PATH_WINDOW,	/* u32 1024-262144, window units */
	METAROCE_A_CC_MAX_CONN_WINDOW,	/* u32 1024-16777216, window units */
	METAROCE_A_CC_MIN_WINDOW,	/* u32 1-16384, window units */
	METAROCE_A_CC_TARGET_DELAY_NS,	/* u64 1000-1000000000: above the base RTT */
	METAROCE_A_CC_LOSS_BURST,	/* u32 1-256: losses in an RTT = congestion */

	__METAROCE_A_CC_MAX,
	METAROCE_A_CC_MAX = __METAROCE_A_CC_MAX - 1
};

/*
 * Device counters (nest METAROCE_A_DEV_STATS): one ENTRY per counter, in
 * the order and with the names of `rdma statistic show link` (see the
 * admin guide), so that new counters need no new attribute.
 */
enum metaroce_a_stats {
	METAROCE_A_STATS_UNSPEC,
	METAROCE_A_STATS_ENTRY,		/* nest, enum metaroce_a_stats_entry; repeated */

	__METAROCE_A_STATS_MAX,
	METAROCE_A_STATS_MAX = __METAROCE_A_STATS_MAX - 1
};

enum metaroce_a_stats_entry {
	METAROCE_A_STATS_ENTRY_UNSPEC,
	METAROCE_A_STATS_ENTRY_PAD,
	METAROCE_A_STATS_ENTRY_NAME,	/* string, at most 63 chars */
	METAROCE_A_STATS_ENTRY_VALUE,	/* u64 */

	__METAROCE_A_STATS_ENTRY_MAX,
	METAROCE_A_STATS_ENTRY_MAX = __METAROCE_A_STATS_ENTRY_MAX - 1
};

/*
 * A pre-shared key for the AES-GCM protection of the traffic between this
 * device and one peer (nest METAROCE_A_DEV_KEY in DEV_SET). Reserved:
 * refused with -EOPNOTSUPP until connection security lands. A key is never
 * sent back; METAROCE_A_DEV_NUM_KEYS says how many are installed.
 */
enum metaroce_a_key {
	METAROCE_A_KEY_UNSPEC,
	METAROCE_A_KEY_PEER_IPV4,	/* binary, 4 bytes */
	METAROCE_A_KEY_PEER_IPV6,	/* binary, 16 bytes */
	METAROCE_A_KEY_SECRET,		/* binary, 16 or 32 bytes; absent: delete */

	__METAROCE_A_KEY_MAX,
	METAROCE_A_KEY_MAX = __METAROCE_A_KEY_MAX - 1
};

enum metaroce_qp_type {
	METAROCE_QP_TYPE_RC = 1,
	METAROCE_QP_TYPE_UC = 2,
	METAROCE_QP_TYPE_UD = 3,
	METAROCE_QP_TYPE_GSI = 4,
};

/* The same numbers as enum ib_qp_state. */
enum metaroce_qp_state {
	METAROCE_QP_STATE_RESET = 0,
	METAROCE_QP_STATE_INIT = 1,
	METAROCE_QP_STATE_RTR = 2,
	METAROCE_QP_STATE_RTS = 3,
	METAROCE_QP_STATE_SQD = 4,
	METAROCE_QP_STATE_SQE = 5,
	METAROCE_QP_STATE_ERR = 6,
};

/*
 * A QP: QP_GET request (DEV_INDEX or DEV_NAME; NUM) and reply. The
 * requester side's congestion state (window, inflight, rates) is that of
 * the connection; paths are in PATH_GET.
 */
enum metaroce_a_qp {
	METAROCE_A_QP_UNSPEC,
	METAROCE_A_QP_PAD,
	METAROCE_A_QP_DEV_INDEX,	/* u32 */
	METAROCE_A_QP_DEV_NAME,		/* string, at most 63 chars */
	METAROCE_A_QP_NUM,		/* u32 1-16777215: the QPN */
	METAROCE_A_QP_TYPE,		/* u8, enum metaroce_qp_type */
	METAROCE_A_QP_STATE,		/* u8, enum metaroce_qp_state */
	METAROCE_A_QP_PEER_NUM,		/* u32: the peer's QPN (RC, UC) */
	METAROCE_A_QP_LOCAL_IPV4,	/* binary, 4 bytes; or: */
	METAROCE_A_QP_LOCAL_IPV6,	/* binary, 16 bytes */
	METAROCE_A_QP_PEER_IPV4,	/* binary, 4 bytes; or: */
	METAROCE_A_QP_PEER_IPV6,	/* binary, 16 bytes */
	METAROCE_A_QP_PATHS,		/* u32 1-64: paths of the connection */
	METAROCE_A_QP_MTU,		/* u32: path MTU, payload bytes */
	METAROCE_A_QP_CONN_WINDOW,	/* u32, window units */
	METAROCE_A_QP_INFLIGHT,		/* u32: packets in flight, all paths */
	METAROCE_A_QP_PACING_KBPS,	/* u32: pacing rate; 0: not paced */
	METAROCE_A_QP_RATE_HINT_KBPS,	/* u32: the peer's last hint; 0: none */
	METAROCE_A_QP_ALPHA,		/* u32 0-65536: the connection's alpha */
	METAROCE_A_QP_SRTT_NS,		/* u64: smallest path SRTT */
	METAROCE_A_QP_STATS,		/* nest, enum metaroce_a_qp_stats */
	METAROCE_A_QP_HANDSHAKE,	/* u8, enum metaroce_qp_handshake */
	/*
	 * The connection tags, to CAP_NET_ADMIN only and from RTR on. Secrets
	 * of the connection: for tests and debugging, never for the wire.
	 */
	METAROCE_A_QP_LOCAL_TAG,	/* u64: the peer's packets must carry it */
	METAROCE_A_QP_PEER_TAG,		/* u64: the peer's (0: not yet known) */

	__METAROCE_A_QP_MAX,
	METAROCE_A_QP_MAX = __METAROCE_A_QP_MAX - 1
};

/* Where the connection tag handshake of an RC or UC QP is (RTR on). */
enum metaroce_qp_handshake {
	METAROCE_QP_HANDSHAKE_NONE,	/* no tag yet: before RTR */
	METAROCE_QP_HANDSHAKE_WAITING,	/* the peer's tag is not proven yet */
	METAROCE_QP_HANDSHAKE_PEER_KNOWN,	/* it is; ours not yet confirmed */
	METAROCE_QP_HANDSHAKE_DONE,	/* both ends hold both tags */
};

/* Counters of one QP since it was created (nest METAROCE_A_QP_STATS). */
enum metaroce_a_qp_stats {
	METAROCE_A_QP_STATS_UNSPEC,
	METAROCE_A_QP_STATS_PAD,
	METAROCE_A_QP_STATS_TX_PACKETS,		/* u64 */
	METAROCE_A_QP_STATS_TX_BYTES,		/* u64 */
	METAROCE_A_QP_STATS_RX_PACKETS,		/* u64 */
	METAROCE_A_QP_STATS_RX_BYTES,		/* u64 */
	METAROCE_A_QP_STATS_RETRANSMITS,	/* u64: packets sent again */
	METAROCE_A_QP_STATS_SACK_GAPS,		/* u64: holes the SACKs reported */
	METAROCE_A_QP_STATS_RTO_EVENTS,		/* u64: retransmission timeouts */
	METAROCE_A_QP_STATS_TAIL_PROBES,	/* u64 */
	METAROCE_A_QP_STATS_PATH_FAILOVERS,	/* u64: paths failed and restarted */
	METAROCE_A_QP_STATS_DUPLICATES,		/* u64: packets or ACKs that came twice */
	METAROCE_A_QP_STATS_RNR_NAKS,		/* u64: RNR NAKs sent */
	METAROCE_A_QP_STATS_CE_MARKS,		/* u64: CE marks the peer reported */
	METAROCE_A_QP_STATS_CC_DECREASES,	/* u64: window decreases */
	METAROCE_A_QP_STATS_HINT_LIMITED,	/* u64: times the hint capped the rate */

	__METAROCE_A_QP_STATS_MAX,
	METAROCE_A_QP_STATS_MAX = __METAROCE_A_QP_STATS_MAX - 1
};

/* The same numbers as enum mr_path_state. */
enum metaroce_path_state {
	METAROCE_PATH_STATE_ACTIVE = 0,
	METAROCE_PATH_STATE_FAILED = 1,	/* skipped until it restarts */
};

/*
 * A sending path of a QP: PATH_GET request (DEV_INDEX or DEV_NAME; QPN;
 * ID) and reply.
 */
enum metaroce_a_path {
	METAROCE_A_PATH_UNSPEC,
	METAROCE_A_PATH_PAD,
	METAROCE_A_PATH_DEV_INDEX,	/* u32 */
	METAROCE_A_PATH_DEV_NAME,	/* string, at most 63 chars */
	METAROCE_A_PATH_QPN,		/* u32 1-16777215 */
	METAROCE_A_PATH_ID,		/* u32 0-63 */
	METAROCE_A_PATH_SPORT,		/* u16: UDP source port */
	METAROCE_A_PATH_EPOCH,		/* u16 */
	METAROCE_A_PATH_STATE,		/* u8, enum metaroce_path_state */
	METAROCE_A_PATH_SRTT_NS,	/* u64; absent before the first sample */
	METAROCE_A_PATH_RTTVAR_NS,	/* u64; absent before the first sample */
	METAROCE_A_PATH_RTO_NS,		/* u64: the next timeout, backoff included */
	METAROCE_A_PATH_BASE_RTT_NS,	/* u64: lowest RTT seen; absent: none */
	METAROCE_A_PATH_WINDOW,		/* u32, window units */
	METAROCE_A_PATH_INFLIGHT,	/* u32: packets */
	METAROCE_A_PATH_ALPHA,		/* u32 0-65536 */
	METAROCE_A_PATH_CONSEC_RTOS,	/* u32: timeouts in a row; fails at FAIL_AFTER */
	METAROCE_A_PATH_STATS,		/* nest, enum metaroce_a_path_stats */

	__METAROCE_A_PATH_MAX,
	METAROCE_A_PATH_MAX = __METAROCE_A_PATH_MAX - 1
};

/* Counters of one path id over all its epochs (nest METAROCE_A_PATH_STATS). */
enum metaroce_a_path_stats {
	METAROCE_A_PATH_STATS_UNSPEC,
	METAROCE_A_PATH_STATS_PAD,
	METAROCE_A_PATH_STATS_TX_PACKETS,	/* u64 */
	METAROCE_A_PATH_STATS_RETRANSMITS,	/* u64 */
	METAROCE_A_PATH_STATS_SACK_GAPS,	/* u64 */
	METAROCE_A_PATH_STATS_RTO_EVENTS,	/* u64 */
	METAROCE_A_PATH_STATS_TAIL_PROBES,	/* u64 */
	METAROCE_A_PATH_STATS_CE_MARKS,		/* u64 */

	__METAROCE_A_PATH_STATS_MAX,
	METAROCE_A_PATH_STATS_MAX = __METAROCE_A_PATH_STATS_MAX - 1
};

/*
 * A device's planes (PLANE_GET, PLANE_ADD, PLANE_DEL): netdevs, each an
 * independent network, that its connections spray their paths over. A
 * device without planes sends through its own netdev.
 */
enum metaroce_a_plane {
	METAROCE_A_PLANE_UNSPEC,
	METAROCE_A_PLANE_PAD,
	METAROCE_A_PLANE_DEV_INDEX,	/* u32 */
	METAROCE_A_PLANE_DEV_NAME,	/* string, at most 63 chars */
	METAROCE_A_PLANE_ID,		/* u32 0-7, read-only: ids are dense */
	METAROCE_A_PLANE_NETDEV_IFINDEX,	/* u32, read-only */
	METAROCE_A_PLANE_NETDEV_NAME,	/* string, at most 15 chars */
	METAROCE_A_PLANE_STATE,		/* u8, enum metaroce_plane_state */
	METAROCE_A_PLANE_PATHS,		/* u32: of a connection's paths, on it */
	METAROCE_A_PLANE_RETRY_NS,	/* u64: timed out, tried again in this */
	METAROCE_A_PLANE_STATS,		/* nest, enum metaroce_a_stats */

	__METAROCE_A_PLANE_MAX,
	METAROCE_A_PLANE_MAX = __METAROCE_A_PLANE_MAX - 1
};

#define METAROCE_PLANES_MAX 8

enum metaroce_plane_state {
	METAROCE_PLANE_STATE_UP = 1,
	METAROCE_PLANE_STATE_NO_CARRIER = 2,	/* its netdev down or no carrier */
	METAROCE_PLANE_STATE_TIMED_OUT = 3,	/* its paths timed out */
};

/* Why a plane went out of service or came back (PLANE_REASON). */
enum metaroce_plane_reason {
	METAROCE_PLANE_REASON_CARRIER = 1,	/* its netdev's carrier or state */
	METAROCE_PLANE_REASON_TIMEOUT = 2,	/* every path on it timed out */
	METAROCE_PLANE_REASON_ANSWERED = 3,	/* tried again, a packet came */
	METAROCE_PLANE_REASON_REMOVED = 4,	/* deleted, or its netdev went */
};

/* Why a QP went to the error state (METAROCE_A_EVENT_REASON). */
enum metaroce_qp_error_reason {
	METAROCE_QP_ERROR_OTHER = 0,
	METAROCE_QP_ERROR_USER = 1,		/* modify_qp to ERR */
	METAROCE_QP_ERROR_RETRY_EXCEEDED = 2,	/* the peer stopped answering */
	METAROCE_QP_ERROR_RNR_RETRY_EXCEEDED = 3,
	METAROCE_QP_ERROR_REMOTE_ACCESS = 4,	/* the peer NAKed: rkey, bounds */
	METAROCE_QP_ERROR_REMOTE_OP = 5,	/* the peer NAKed: operation failed */
	METAROCE_QP_ERROR_REMOTE_INVALID = 6,	/* the peer NAKed: invalid request */
	METAROCE_QP_ERROR_LOCAL = 7,		/* a local WR failed (protection, length) */
	METAROCE_QP_ERROR_PEER_FATAL = 8,	/* we refused the peer's request fatally */
};

/*
 * An event. PATH_FAILOVER_NTF: DEV_INDEX, DEV_NAME, QPN, PATH_ID,
 * OLD_EPOCH, NEW_EPOCH, OLD_SPORT, NEW_SPORT, MOVED. QP_ERROR_NTF:
 * DEV_INDEX, DEV_NAME, QPN, REASON. PLANE_*_NTF (reserved): DEV_INDEX,
 * DEV_NAME, PLANE.
 */
enum metaroce_a_event {
	METAROCE_A_EVENT_UNSPEC,
	METAROCE_A_EVENT_PAD,
	METAROCE_A_EVENT_DEV_INDEX,	/* u32 */
	METAROCE_A_EVENT_DEV_NAME,	/* string, at most 63 chars */
	METAROCE_A_EVENT_QPN,		/* u32 */
	METAROCE_A_EVENT_PATH_ID,	/* u32 0-63 */
	METAROCE_A_EVENT_OLD_EPOCH,	/* u16 */
	METAROCE_A_EVENT_NEW_EPOCH,	/* u16 */
	METAROCE_A_EVENT_OLD_SPORT,	/* u16 */
	METAROCE_A_EVENT_NEW_SPORT,	/* u16 */
	METAROCE_A_EVENT_MOVED,		/* u32: packets moved to other paths */
	METAROCE_A_EVENT_REASON,	/* u8, enum metaroce_qp_error_reason */
	METAROCE_A_EVENT_PLANE,		/* u32 0-7: the plane's id */
	METAROCE_A_EVENT_PLANE_NETDEV,	/* string, at most 15 chars */
	METAROCE_A_EVENT_PLANE_REASON,	/* u8, enum metaroce_plane_reason */

	__METAROCE_A_EVENT_MAX,
	METAROCE_A_EVENT_MAX = __METAROCE_A_EVENT_MAX - 1
};

#endif /* METAROCE_NETLINK_H */
