# The QP as sender (protocol.rst, "Sender", "Paths").
section Sender

# A WRITE goes as one packet per MTU; every packet repeats rkey, VA and length.
case write-one-packet-per-mtu
post_send wr=1 op=write off=0 len=3072 rkey=0x99 va=0x5000
> WRITE msn=0 rkey=0x99 va=0x5000 length=3072 offset=0 payload=1024 src=0 path=?p0 psn=?n0
> WRITE msn=0 rkey=0x99 va=0x5000 length=3072 offset=1024 payload=1024 src=0 path=?p1 psn=?n1
< ACK path=$p0 psn=$n0 cum_psn=$n0+1 msn_done=0
< ACK path=$p1 psn=$n1 cum_psn=$n1+1 msn_done=0
> WRITE msn=0 rkey=0x99 va=0x5000 length=3072 offset=2048 payload=1024 src=0 path=?p2 psn=?n2
< ACK path=$p2 psn=$n2 cum_psn=$n2+1 msn_done=1
cq wr=1 status=success opcode=rdma_write len=3072

# A SEND's last slice carries the rest; every slice has MSN, RSN and length.
case send-last-slice-short
post_send wr=1 op=send off=100 len=1500
> SEND msn=0 rsn=0 length=1500 offset=0 payload=1024 src=100 path=?p0 psn=?n0
> SEND msn=0 rsn=0 length=1500 offset=1024 payload=476 src=100 path=?p1 psn=?n1
< ACK path=$p0 psn=$n0 cum_psn=$n0+1 msn_done=0
< ACK path=$p1 psn=$n1 cum_psn=$n1+1 msn_done=1
cq wr=1 status=success opcode=send len=1500

# In epoch 0 a path's PSN space starts at the connection's initial PSN.
case first-psn-is-initial
post_send wr=1 op=write off=0 len=64
> WRITE epoch=0 psn=$sq payload=64

# Messages and their RSNs count in posting order.
case msn-rsn-in-posting-order
post_send wr=1 op=send off=0 len=64
post_send wr=2 op=write off=0 len=64
post_send wr=3 op=send_imm off=0 len=64 imm=5
> SEND msn=0 rsn=0 payload=64 path=?a psn=?x
> WRITE msn=1 payload=64 path=?b psn=?y
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=1
< ACK path=$b psn=$y cum_psn=$y+1 msn_done=2
> SEND_IMM msn=2 rsn=1 imm=5 payload=64

# The requester completes its work requests in MSN order as MSN done advances.
case completes-as-msn-done-advances
post_send wr=1 op=write off=0 len=64
post_send wr=2 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
> WRITE msn=1 path=$a psn=$x+1
< ACK path=$a psn=$x+1 cum_psn=$x+2 msn_done=0
cq none for=5
< ACK path=$a psn=$x+1 cum_psn=$x+2 msn_done=1
cq wr=1 status=success within=1
cq none for=5
< ACK path=$a psn=$x+1 cum_psn=$x+2 msn_done=2
cq wr=2 status=success within=1

# A path-level ACK alone completes nothing: MSN done must pass the message.
case path-ack-without-msn-done
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=0
cq none for=20

# A SACK hole is a loss: resent at once, on the same path, with the same PSN.
# (Fewer packets in flight than paths: the second goes on the first's path.)
case sack-hole-resent-same-path-psn
needs instant
post_send wr=1 op=write off=0 len=49152 rkey=0x99 va=0x5000
> WRITE offset=0 path=0 psn=$sq
> WRITE offset=1024 path=0 psn=$sq+1 within=1
counter retransmits 0
< ACK path=0 psn=$sq+1 cum_psn=$sq sack=$sq+1 msn_done=0
> WRITE path=0 psn=$sq offset=0 payload=1024 src=0 within=0.1
counter retransmits 1
counter sack_gaps 1

# Each loss is reported once: a second ACK with the same hole resends nothing.
case sack-hole-reported-once
needs instant
post_send wr=1 op=write off=0 len=49152 rkey=0x99 va=0x5000
> WRITE offset=0 path=0 psn=$sq
> WRITE path=0 psn=$sq+1 within=1
< ACK path=0 psn=$sq+1 cum_psn=$sq sack=$sq+1 msn_done=0
> WRITE path=0 psn=$sq offset=0 within=0.1
< ACK path=0 psn=$sq+1 cum_psn=$sq sack=$sq+1 msn_done=0
wait 0.5
counter retransmits 1

# An ACK whose cum is before una is stale: ignored.
case stale-ack-ignored
post_send wr=1 op=write off=0 len=64
post_send wr=2 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
> WRITE msn=1 path=?b psn=?y
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=1
cq wr=1 status=success within=1
< ACK path=$a psn=$x-1 cum_psn=$x msn_done=2
cq none for=5
counter duplicate_packets 1

# An ACK that acknowledges a PSN at or after nxt is rejected.
case ack-beyond-nxt-rejected
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
< ACK path=$a psn=$x+1 cum_psn=$x+2 msn_done=1
cq none for=5
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=1
cq wr=1 status=success within=1
counter rx_drop_malformed 1

# A SACK bit for a PSN never sent is rejected too.
case sack-beyond-nxt-rejected
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
< ACK path=$a psn=$x+3 cum_psn=$x sack=$x+3 msn_done=1
cq none for=5
counter rx_drop_malformed 1

# An ACK whose PSN it does not itself report as arrived is malformed.
case ack-psn-not-reported-malformed
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
< ACK path=$a psn=$x+1 cum_psn=$x+1 msn_done=1
cq none for=5
counter rx_drop_malformed 1

# With no ACK, the tail probe or the RTO resends on the same path and PSN.
case no-ack-resent-same-path-psn
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
> WRITE msn=0 path=$a psn=$x payload=64 src=0 within=100
counter retransmits >=1

# When the RTO fires, everything in flight and not reported is lost.
case rto-event-counted
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
wait 200
counter rto_events >=1

# The resend completes the message once acknowledged.
case resend-then-ack-completes
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
> WRITE msn=0 path=$a psn=$x within=100
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=1
cq wr=1 status=success within=1

# Retries exhausted: the work request fails with a retry error, QP to error.
case retry-exhausted
qp rc retry_cnt=1
post_send wr=1 op=write off=0 len=64
cq wr=1 status=retry_exc_err within=600000
state err
