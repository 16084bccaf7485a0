# Sequence numbers: PSN, MSN, RSN.
section Sequence numbers

# "PSN counts the packets a sender sends on one path in one epoch": the
# first packet of each path in epoch 0 carries the initial PSN, the next
# on that path one more. 17 packets of one SEND, acknowledged as they come:
# with fewer in flight than paths, each path takes a run of 4.
case psn-per-path-increments
qp rc mtu=256
post_send wr=1 op=send off=0 len=4352
> SEND path=0 psn=$sq epoch=0 msn=0 offset=0
< ACK path=0 psn=$sq cum_psn=$sq+1 msn_done=0
> SEND path=0 psn=$sq+1 epoch=0 msn=0 offset=256
< ACK path=0 psn=$sq+1 cum_psn=$sq+2 msn_done=0
> SEND path=0 psn=$sq+2 epoch=0 msn=0 offset=512
< ACK path=0 psn=$sq+2 cum_psn=$sq+3 msn_done=0
> SEND path=0 psn=$sq+3 epoch=0 msn=0 offset=768
< ACK path=0 psn=$sq+3 cum_psn=$sq+4 msn_done=0
> SEND path=1 psn=$sq epoch=0 msn=0 offset=1024
< ACK path=1 psn=$sq cum_psn=$sq+1 msn_done=0
> SEND path=1 psn=$sq+1 epoch=0 msn=0 offset=1280
< ACK path=1 psn=$sq+1 cum_psn=$sq+2 msn_done=0
> SEND path=1 psn=$sq+2 epoch=0 msn=0 offset=1536
< ACK path=1 psn=$sq+2 cum_psn=$sq+3 msn_done=0
> SEND path=1 psn=$sq+3 epoch=0 msn=0 offset=1792
< ACK path=1 psn=$sq+3 cum_psn=$sq+4 msn_done=0
> SEND path=2 psn=$sq epoch=0 msn=0 offset=2048
< ACK path=2 psn=$sq cum_psn=$sq+1 msn_done=0
> SEND path=2 psn=$sq+1 epoch=0 msn=0 offset=2304
< ACK path=2 psn=$sq+1 cum_psn=$sq+2 msn_done=0
> SEND path=2 psn=$sq+2 epoch=0 msn=0 offset=2560
< ACK path=2 psn=$sq+2 cum_psn=$sq+3 msn_done=0
> SEND path=2 psn=$sq+3 epoch=0 msn=0 offset=2816
< ACK path=2 psn=$sq+3 cum_psn=$sq+4 msn_done=0
> SEND path=3 psn=$sq epoch=0 msn=0 offset=3072
< ACK path=3 psn=$sq cum_psn=$sq+1 msn_done=0
> SEND path=3 psn=$sq+1 epoch=0 msn=0 offset=3328
< ACK path=3 psn=$sq+1 cum_psn=$sq+2 msn_done=0
> SEND path=3 psn=$sq+2 epoch=0 msn=0 offset=3584
< ACK path=3 psn=$sq+2 cum_psn=$sq+3 msn_done=0
> SEND path=3 psn=$sq+3 epoch=0 msn=0 offset=3840
< ACK path=3 psn=$sq+3 cum_psn=$sq+4 msn_done=0
> SEND path=4 psn=$sq epoch=0 msn=0 offset=4096

# "... including resends, which reuse their PSN": an unanswered packet is
# sent again on its path with its PSN.
case resend-reuses-psn
post_send wr=1 op=send off=0 len=16
> SEND path=?p psn=?n msn=0
> SEND path=$p psn=$n msn=0 within=1000
counter retransmits >=1

# "ACK and NAK do not consume PSNs": after acknowledging our SEND, the
# QP's first data packet still carries its initial PSN.
case ack-consumes-no-psn
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req path=0
> ACK path=0
post_send wr=2 op=send off=0 len=8
> SEND psn=$sq epoch=0

# An ACK names in its PSN the arrival that triggered it.
case ack-psn-names-arrival
post_recv wr=1 off=0 len=256
post_recv wr=2 off=256 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req
> ACK psn=$rq cum_psn=$rq+1
< SEND msn=1 rsn=1 payload=8 flags=ack_req
> ACK psn=$rq+1 cum_psn=$rq+2

# "MSN counts the request messages ... in posting order".
case msn-in-posting-order
post_send wr=1 op=send off=0 len=8
post_send wr=2 op=write off=0 len=8 rkey=1 va=0
post_send wr=3 op=read off=0 len=8 rkey=1 va=0
> SEND msn=0 path=?p0 psn=?n0
< ACK path=$p0 psn=$n0 cum_psn=$n0+1 msn_done=0
> WRITE msn=1 path=?p1 psn=?n1
< ACK path=$p1 psn=$n1 cum_psn=$n1+1 msn_done=0
> READ_REQ msn=2

# "All packets of a message carry its MSN".
case msn-same-in-all-packets
post_send wr=1 op=send off=0 len=8
post_send wr=2 op=send off=0 len=2048
> SEND msn=0 length=8 path=?p0 psn=?n0
< ACK path=$p0 psn=$n0 cum_psn=$n0+1 msn_done=0
> SEND msn=1 offset=0 length=2048 path=?p1 psn=?n1
< ACK path=$p1 psn=$n1 cum_psn=$n1+1 msn_done=0
> SEND msn=1 offset=1024 length=2048

# "RSN counts the messages that consume a posted receive": SEND, WRITE,
# SEND_IMM carry RSNs 0, none, 1.
case rsn-skips-write
post_send wr=1 op=send off=0 len=8
post_send wr=2 op=write off=0 len=8 rkey=1 va=0
post_send wr=3 op=send_imm off=0 len=8 imm=1
> SEND msn=0 rsn=0 path=?p0 psn=?n0
< ACK path=$p0 psn=$n0 cum_psn=$n0+1 msn_done=0
> WRITE msn=1 path=?p1 psn=?n1
< ACK path=$p1 psn=$n1 cum_psn=$n1+1 msn_done=0
> SEND_IMM msn=2 rsn=1

# WRITE_IMM consumes one: SEND, WRITE_IMM, SEND_INV carry RSNs 0, 1, 2.
case rsn-counts-write-imm
post_send wr=1 op=send off=0 len=8
post_send wr=2 op=write_imm off=0 len=8 rkey=1 va=0 imm=1
post_send wr=3 op=send_inv off=0 len=8 inv_rkey=7
> SEND msn=0 rsn=0 path=?p0 psn=?n0
< ACK path=$p0 psn=$n0 cum_psn=$n0+1 msn_done=0
> WRITE_IMM msn=1 rsn=1 path=?p1 psn=?n1
< ACK path=$p1 psn=$n1 cum_psn=$n1+1 msn_done=0
> SEND_INV msn=2 rsn=2

# READ and atomics consume no receive.
case rsn-skips-read-atomic
post_send wr=1 op=read off=0 len=8 rkey=1 va=0
post_send wr=2 op=faa off=0 len=8 rkey=1 va=0 add=1
post_send wr=3 op=send off=0 len=8
> READ_REQ msn=0 path=?p0 psn=?n0
< ACK path=$p0 psn=$n0 cum_psn=$n0+1 msn_done=0
> FETCH_ADD msn=1 path=?p1 psn=?n1
< ACK path=$p1 psn=$n1 cum_psn=$n1+1 msn_done=0
> SEND msn=2 rsn=0

# "The message with RSN n lands in the n-th receive posted": RSN 1
# arriving first still fills the second receive.
case rsn-picks-receive
post_recv wr=1 off=0 len=256
post_recv wr=2 off=4096 len=256
< SEND msn=1 rsn=1 payload=16 seed=2 flags=ack_req psn=$rq+1
< SEND msn=0 rsn=0 payload=16 seed=3 flags=ack_req psn=$rq
cq wr=1 status=success len=16
cq wr=2 status=success len=16
mem off=0 len=16 seed=3
mem off=4096 len=16 seed=2

# "A PSN space that starts, in every later epoch at 0": a packet of epoch
# 1 with PSN 0 is acknowledged as the first of that epoch.
case later-epoch-starts-at-zero
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req path=2 epoch=1 psn=0
> ACK path=2 epoch=1 cum_psn=1 psn=0
cq wr=1 status=success
