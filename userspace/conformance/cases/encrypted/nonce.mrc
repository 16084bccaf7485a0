# The nonce counter (protocol.rst, "Nonce"). Runs only with --psk.
section Nonce

# A sender advances its counter with every packet (by one, or more: every
# packet to that peer draws from the key's counter), a resend included: no
# two packets share a nonce.
case counter-increases
post_send wr=1 op=send off=0 len=2048
> SEND offset=0 path=?p0 psn=?n0 nonce_counter=?c0
> SEND offset=1024 path=?p1 psn=?n1 nonce_counter=>$c0 nonce_counter=?c1
# Unacknowledged, the first packet is sent again: a new counter.
> SEND offset=0 path=$p0 psn=$n0 nonce_counter=>$c1 within=3000
< ACK path=$p0 psn=$n0 cum_psn=$n0+1 msn_done=0
< ACK path=$p1 psn=$n1 cum_psn=$n1+1 msn_done=1
cq wr=1 status=success opcode=send len=2048

# A receiver takes each counter of a key once (protocol.rst, "Replay"): a
# packet sent again is dropped, and so is one more than the window (1024)
# below the highest counter taken; within the window, a counter not taken
# yet is new. The counters are the case's own ($ctr, set aside by the
# runner), so the runner's stream goes on above them.
case receiver-takes-each-counter-once
post_recv wr=1 off=0 len=1024
post_recv wr=2 off=1024 len=1024
post_recv wr=3 off=2048 len=1024
< SEND msn=0 rsn=0 payload=10 flags=ack_req psn=$rq counter=$ctr+3000
> ACK cum_psn=$rq+1
< SEND msn=0 rsn=0 payload=10 flags=ack_req psn=$rq counter=$ctr+3000
> none for=100
counter rx_drop_replay 1
< SEND msn=1 rsn=1 payload=20 flags=ack_req psn=$rq+1 counter=$ctr+1000
> none for=100
counter rx_drop_replay 2
< SEND msn=1 rsn=1 payload=20 flags=ack_req psn=$rq+1 counter=$ctr+2500
> ACK cum_psn=$rq+2
< SEND msn=2 rsn=2 payload=30 flags=ack_req psn=$rq+2 counter=$ctr+2999
> ACK cum_psn=$rq+3
cq wr=1 status=success len=10
cq wr=2 status=success len=20
cq wr=3 status=success len=30
counter rx_decrypted 3
counter rx_drop_replay 2
