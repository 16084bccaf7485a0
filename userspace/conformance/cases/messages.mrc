# The message layer (protocol.rst, "Message layer").
section Placement

# Each slice is placed on its own: three WRITE slices in order 2, 0, 1.
case write-slices-out-of-order
< WRITE msn=0 rkey=$rkey va=$va+4096 length=3072 offset=2048 payload=1024 psn=$rq+2
< WRITE msn=0 rkey=$rkey va=$va+4096 length=3072 offset=0 payload=1024 psn=$rq
< WRITE msn=0 rkey=$rkey va=$va+4096 length=3072 offset=1024 payload=1024 psn=$rq+1 flags=ack_req
> ACK cum_psn=$rq+3 msn_done=1 within=1
mem off=4096 len=3072 seed=1

# SEND slices land in the receive at their offset, in any order.
case send-slices-out-of-order
post_recv wr=1 off=8192 len=4096
< SEND msn=0 rsn=0 length=3072 offset=2048 payload=1024 psn=$rq+2
< SEND msn=0 rsn=0 length=3072 offset=0 payload=1024 psn=$rq
< SEND msn=0 rsn=0 length=3072 offset=1024 payload=1024 psn=$rq+1
cq wr=1 status=success opcode=recv len=3072
mem off=8192 len=3072 seed=1

# A slice lands before the message completes.
case slice-placed-on-arrival
< WRITE msn=0 rkey=$rkey va=$va length=3072 offset=1024 payload=1024 flags=ack_req
> ACK msn_done=0
mem off=1024 len=1024 seed=1 at=1024
mem off=0 len=1024

# The RSN picks the receive: RSN 1 lands in the second receive posted.
case rsn-picks-receive
post_recv wr=1 off=0 len=1024
post_recv wr=2 off=4096 len=1024
< SEND msn=1 rsn=1 payload=64 psn=$rq+1 seed=2
< SEND msn=0 rsn=0 payload=32 psn=$rq seed=3
cq wr=1 status=success opcode=recv len=32
cq wr=2 status=success opcode=recv len=64
mem off=0 len=32 seed=3
mem off=4096 len=64 seed=2

# WRITE_IMM's RSN picks the receive its completion consumes.
case write-imm-consumes-receive
post_recv wr=1 off=0 len=16
< WRITE_IMM msn=0 rsn=0 rkey=$rkey va=$va+2048 imm=0x77 payload=100
cq wr=1 status=success opcode=recv_rdma_imm len=100 imm=0x77
mem off=2048 len=100 seed=1

section Completion

# A message completes only when all its slices have arrived.
case completes-when-all-slices
post_recv wr=1 off=0 len=4096
< SEND msn=0 rsn=0 length=3072 offset=0 payload=1024
< SEND msn=0 rsn=0 length=3072 offset=2048 payload=1024 psn=$rq+2
cq none for=20
< SEND msn=0 rsn=0 length=3072 offset=1024 payload=1024 psn=$rq+1
cq wr=1 status=success len=3072

# Messages complete in MSN order: MSN 1, complete first, waits for MSN 0.
case completes-in-msn-order
post_recv wr=1 off=0 len=4096
post_recv wr=2 off=8192 len=4096
< SEND msn=1 rsn=1 payload=64 psn=$rq+2
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 psn=$rq
cq none for=20
< SEND msn=0 rsn=0 length=2048 offset=1024 payload=1024 psn=$rq+1
cq wr=1 status=success len=2048
cq wr=2 status=success len=64

# MSN done is the oldest request not yet complete.
case msn-done-oldest-incomplete
< WRITE msn=1 rkey=$rkey va=$va payload=64 psn=$rq+1 flags=ack_req
> ACK cum_psn=$rq sack=$rq+1 msn_done=0
< WRITE msn=0 rkey=$rkey va=$va payload=64 psn=$rq flags=ack_req
> ACK cum_psn=$rq+2 msn_done=2

# A completion acknowledges the path's last packets at once (no ACK_REQ).
case completion-acks-at-once
< WRITE msn=0 rkey=$rkey va=$va length=2048 offset=0 payload=1024
> ACK cum_psn=$rq+1 msn_done=0 within=1
< WRITE msn=0 rkey=$rkey va=$va length=2048 offset=1024 payload=1024
> ACK cum_psn=$rq+2 msn_done=1 within=0.1

# A zero-length WRITE is one packet and completes at once.
case zero-length-write-completes
< WRITE msn=0 rkey=$rkey va=$va length=0 flags=ack_req
> ACK cum_psn=$rq+1 msn_done=1

section Duplicates

# A duplicate slice (moved to another path) counts once; the message completes once.
case duplicate-slice-other-path
post_recv wr=1 off=0 len=4096
post_recv wr=2 off=8192 len=4096
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 path=0
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 path=1
cq none for=20
< SEND msn=0 rsn=0 length=2048 offset=1024 payload=1024 path=2
cq wr=1 status=success len=2048
cq none for=20

# A whole message seen twice (on another path) is not completed twice.
case duplicate-message-not-completed-twice
post_recv wr=1 off=0 len=1024
post_recv wr=2 off=4096 len=1024
< SEND msn=0 rsn=0 payload=64 path=0
cq wr=1 status=success len=64
< SEND msn=0 rsn=0 payload=64 path=1 flags=ack_req
> ACK path=1 cum_psn=$rq+1 msn_done=1
cq none for=20

# A request whose MSN is complete is acknowledged again, not executed again.
case duplicate-write-not-reexecuted
< WRITE msn=0 rkey=$rkey va=$va payload=64 path=0 flags=ack_req
> ACK path=0 msn_done=1
< WRITE msn=0 rkey=$rkey va=$va payload=64 path=1 seed=5 flags=ack_req
> ACK path=1 cum_psn=$rq+1 msn_done=1
mem off=0 len=64 seed=1

# A READ whose MSN is complete is answered or acknowledged again.
case duplicate-read-acknowledged
< READ_REQ msn=0 rkey=$rkey va=$va length=64 path=0
> READ_RESP msn=0 length=64 payload=64 src=0 path=?a psn=?x
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=0
< READ_REQ msn=0 rkey=$rkey va=$va length=64 path=1 flags=ack_req
> ACK path=1 cum_psn=$rq+1 msn_done=1 within=5

section Completion

# "A message is complete at the responder when all its bytes have been
# placed": half a SEND completes nothing, and MSN done stays.
case completion-waits-for-last-slice
post_recv wr=1 off=0 len=4096
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 flags=ack_req
> ACK cum_psn=$rq+1 msn_done=0
cq none for=50
< SEND msn=0 rsn=0 length=2048 offset=1024 payload=1024 flags=ack_req
> ACK cum_psn=$rq+2 msn_done=1
cq wr=1 status=success len=2048

# "the requester completes ... in MSN order", and so does the responder:
# MSN 1 whole while MSN 0 is half there completes neither, until MSN 0's
# last slice.
case msn-order-behind-half-message
post_recv wr=1 off=0 len=4096
post_recv wr=2 off=4096 len=4096
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 flags=ack_req
< SEND msn=1 rsn=1 length=512 offset=0 payload=512 flags=ack_req seed=2
> ACK cum_psn=$rq+2 msn_done=0
cq none for=50
< SEND msn=0 rsn=0 length=2048 offset=1024 payload=1024 flags=ack_req
> ACK cum_psn=$rq+3 msn_done=2
cq wr=1 status=success len=2048
cq wr=2 status=success len=512
mem off=4096 len=512 seed=2
