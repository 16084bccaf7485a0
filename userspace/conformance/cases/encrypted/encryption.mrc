# Encrypted packets (protocol.rst, "Encryption"). Every file of this
# directory runs only with mr-conform --psk KEY, against a device created
# with that key: the runner seals what it sends with K(peer, qp) and opens
# what it receives with K(qp, peer), so a ">" matches only a packet that
# was encrypted and opens (wire_flags, wire_len and nonce_counter are the
# packet as it travelled).
section Encryption

# The QP's ACK: ENCRYPTED set in the clear base header, the ACK header
# encrypted, the 24-byte trailer after it.
case ack-encrypted
post_recv wr=1 off=0 len=1024
< SEND msn=0 rsn=0 payload=64 flags=ack_req
> ACK cum_psn=$rq+1 sack=none wire_flags=encrypted wire_len=24+48+24
cq wr=1 status=success opcode=recv len=64

# A sealed SEND of several packets is placed and ACKed.
case sealed-send-placed
post_recv wr=1 off=8192 len=4096
< SEND msn=0 rsn=0 length=3000 offset=0 payload=1024
< SEND msn=0 rsn=0 length=3000 offset=1024 payload=1024
< SEND msn=0 rsn=0 length=3000 offset=2048 payload=952 flags=ack_req
> ACK cum_psn=$rq+3 sack=none
cq wr=1 status=success opcode=recv len=3000
mem off=8192 len=3000 seed=1

# The QP's own SEND: payload encrypted, and the payload length excludes
# the trailer.
case qp-send-encrypted
post_send wr=7 op=send off=256 len=512
> SEND msn=0 length=512 offset=0 payload=512 src=256 path=?p psn=?n wire_flags=encrypted wire_len=24+16+512+24
< ACK path=$p psn=$n cum_psn=$n+1 msn_done=1
cq wr=7 status=success opcode=send len=512

# The HELLO handshake, encrypted both ways.
case hello-encrypted
qp rc no_handshake
> HELLO tag=0 src_tag=?tag wire_flags=encrypted wire_len=24+16+24
< HELLO tag=$tag src_tag=$ptag hflags=0
> HELLO tag=$ptag src_tag=$tag hflags=reply|known wire_flags=encrypted
counter hello_rx 1
counter rx_decrypted 1

# Every packet sent is counted encrypted, every one that opens decrypted.
case counted
post_recv wr=1 off=0 len=1024
< SEND msn=0 rsn=0 payload=100 flags=ack_req
> ACK cum_psn=$rq+1
cq wr=1 status=success opcode=recv len=100
counter rx_decrypted 1
counter tx_encrypted >=1
counter rx_drop_auth 0
counter rx_drop_not_encrypted 0

# Datagrams too: a sealed UD_SEND completes a receive, the QP's is sealed.
case ud-encrypted
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=$peer_qpn qkey=$qkey payload=200
cq wr=1 status=success opcode=recv len=40+200 src_qp=$peer_qpn
post_send wr=2 op=send off=4096 len=100
> UD_SEND src_qpn=$qpn qkey=$qkey payload=100 src=4096 wire_flags=encrypted
cq wr=2 status=success opcode=send
counter rx_decrypted 1
