# Malformed packets: dropped silently, counted.
section Malformed packets

case version-1
< SEND msn=0 rsn=0 payload=8 version=1 flags=ack_req
> none for=100
counter rx_drop_version 1

case unknown-opcode
< 0x0b
> none for=100
counter rx_drop_malformed 1

case truncated-base
< SEND msn=0 rsn=0 payload=8 trunc=20
> none for=100
counter rx_drop_short 1

case zero-tag
< SEND msn=0 rsn=0 payload=8 tag=0 flags=ack_req
> none for=100
counter rx_drop_malformed 1
