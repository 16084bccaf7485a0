section WRITE, WRITE_IMM

case write-one-packet
< WRITE msn=0 rkey=$rkey va=$va+1000 payload=512 flags=ack_req
> ACK cum_psn=$rq+1 msn_done=1
mem off=1000 len=512 seed=1
mem off=1512 len=64

case write-bad-rkey-nak
< WRITE msn=0 rkey=$rkey+1 va=$va payload=64 flags=ack_req
> NAK msn=0 code=remote_access rnr_delay=0
mem off=0 len=64
