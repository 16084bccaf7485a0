# Encapsulation, Base header, Opcodes, Flags: what the QP puts on the wire.
section Encapsulation

# "UDP source: the path's port, from the dynamic range 49152-65535": data.
case data-sport-dynamic-range
post_send wr=1 op=send off=0 len=64
> SEND sport=49152..65535 payload=64

# The same for the QP's HELLOs, on every path they try.
case hello-sport-dynamic-range
qp rc no_handshake
> HELLO sport=49152..65535 src_tag=?tag
> HELLO sport=49152..65535 src_tag=$tag within=50

# The same for the ACKs it sends.
case ack-sport-dynamic-range
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=64 flags=ack_req sport=60001
> ACK sport=49152..65535

# "Data packets are sent ECT(0)".
case data-sent-ect0
post_send wr=1 op=write off=0 len=64 rkey=0x5 va=0x1000
> WRITE ect=1 payload=64

# ECT(0) on a READ response too: it is a data packet.
case read-resp-sent-ect0
< READ_REQ msn=0 rkey=$rkey va=$va length=128 flags=ack_req
> READ_RESP ect=1 msn=0 length=128 offset=0 payload=128 src=0

# "Receivers accept any source port": a SEND from port 1234 is taken.
case any-source-port-accepted
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=32 flags=ack_req sport=1234
> ACK cum_psn=$rq+1
cq wr=1 status=success opcode=recv len=32

# "receivers drop a datagram with a zero checksum".
case zero-checksum-dropped
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=32 flags=ack_req nocsum
> none for=100
counter rx_drop_no_csum 1
cq none

# "The payload length is the UDP length minus the MetaRoCE headers": a
# 1024-byte SEND at MTU 1024 carries 1024 bytes after 40 of headers.
case payload-is-datagram-minus-headers
qp rc mtu=1024
post_send wr=1 op=send off=0 len=1024
> SEND length=1024 offset=0 payload=1024 src=0

# An ACK goes from the port of the path it acknowledges (the source port of
# the data it answers), so that ECMP hashes it as that path's packets.
case ack-from-the-path-port
post_recv wr=1 off=0 len=64
< SEND msn=0 rsn=0 payload=8 flags=ack_req sport=50123
> ACK cum_psn=$rq+1 sport=50123

# ... and a NAK likewise.
case nak-from-the-path-port
< WRITE msn=0 rkey=$rkey+1 va=$va payload=64 sport=61234
> NAK code=remote_access sport=61234
