# Who may speak for a connection, and connection tags.
section Who may speak for a connection

# "it comes from the IP address of the connection's peer": a SEND from
# another address is dropped, unanswered.
case foreign-send-dropped
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req foreign
> none for=100
counter rx_drop_not_peer 1
cq none

# "before the packet can move a window": the same SEND from the peer is
# then taken as new.
case foreign-send-moves-no-window
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req psn=$rq foreign
> none for=50
< SEND msn=0 rsn=0 payload=8 flags=ack_req psn=$rq
> ACK cum_psn=$rq+1 psn=$rq
cq wr=1 status=success len=8
counter duplicate_packets 0

# "... complete a message": a foreign ACK does not complete a WR.
case foreign-ack-completes-nothing
post_send wr=1 op=write off=0 len=16 rkey=1 va=0
> WRITE msn=0 path=?p psn=?n
< ACK path=$p psn=$n cum_psn=$n+1 msn_done=1 foreign
cq none for=5
< ACK path=$p psn=$n cum_psn=$n+1 msn_done=1
cq wr=1 status=success opcode=rdma_write
counter rx_drop_not_peer 1

# A foreign HELLO draws no answer, even one the peer would get.
case foreign-hello-unanswered
< HELLO tag=0 src_tag=$ptag foreign
> none for=100
counter rx_drop_not_peer 1

# "its tag is the receiving QP's own connection tag": a wrong tag drops.
case wrong-tag-dropped
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req tag=$tag+1 psn=$rq
> none for=100
counter rx_drop_bad_tag 1
cq none
< SEND msn=0 rsn=0 payload=8 flags=ack_req psn=$rq
> ACK cum_psn=$rq+1
cq wr=1 status=success len=8

# A NAK with a wrong tag fails nothing.
case wrong-tag-nak-ignored
post_send wr=1 op=write off=0 len=16 rkey=1 va=0
> WRITE msn=0 path=?p psn=?n
< NAK path=$p psn=$n msn=0 code=remote_access tag=0x1234
cq none for=5
counter rx_drop_bad_tag 1
state rts

section Connection tags

# "Each end ... draws a random 64-bit tag, never zero": the HELLO's source.
case own-tag-nonzero
qp rc no_handshake
> HELLO src_tag=!0

# One tag per connection: every HELLO of the QP names the same own tag.
case own-tag-same-in-every-hello
qp rc no_handshake
> HELLO src_tag=?tag
> HELLO src_tag=$tag within=50
> HELLO src_tag=$tag within=100

# "A sender puts the receiver's tag in every packet": ACKs carry ours.
case sender-puts-receivers-tag
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req
> ACK tag=$ptag

# Our tag before the QP holds the peer's: dropped as early, and an
# unproven HELLO{source: own tag, tag 0} asks again at once.
case early-packet-asks-again
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req psn=$rq
> HELLO tag=0 src_tag=$tag hflags=0 within=1
counter rx_drop_early 1
cq none

# "... at most one per 100 us": two early packets, one HELLO.
case early-asks-rate-limited
needs instant
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
< SEND msn=0 rsn=0 payload=8 flags=ack_req psn=$rq
< SEND msn=0 rsn=0 payload=8 flags=ack_req psn=$rq+1
> HELLO tag=0 src_tag=$tag within=1
> none HELLO for=2
counter rx_drop_early 2

# "the packet is dropped, to be resent": after the handshake the same
# packet is new to the window and completes.
case early-packet-moves-no-window
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req psn=$rq
> HELLO tag=0 src_tag=$tag within=1
< HELLO tag=$tag src_tag=$ptag hflags=reply|known
< SEND msn=0 rsn=0 payload=8 flags=ack_req psn=$rq
> ACK cum_psn=$rq+1 tag=$ptag
cq wr=1 status=success len=8
mem off=0 len=8 seed=1

# "A sender sends nothing but HELLOs before it holds the peer's tag".
case nothing-but-hello-before-tag
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
post_send wr=1 op=send off=0 len=16
> none SEND for=50
< HELLO tag=$tag src_tag=$ptag hflags=reply|known
> SEND tag=$ptag payload=16
