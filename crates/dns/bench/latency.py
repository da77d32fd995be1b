#!/usr/bin/env python3
"""Latency of one query at a time, median and p99 over N queries (default 20,000), for each
LABEL,PORT,NAME given: a UDP query of type A for NAME sent to 127.0.0.1:PORT and its answer
awaited before the next. `crates/dns/bench/latency` runs it against unbound and `phishbloom dns`.
A script, not a test: it prints figures and asserts nothing."""
import socket, struct, time, sys, random
def q(name, qid):
    hdr = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    body = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\x00" + struct.pack(">HH", 1, 1)
    return hdr + body
def run(port, name, n=int(__import__('os').environ.get('N', '20000'))):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)
    lat = []
    for i in range(n):
        pkt = q(name, i & 0xffff)
        t = time.perf_counter(); s.sendto(pkt, ("127.0.0.1", port)); s.recv(4096); lat.append(time.perf_counter() - t)
    lat.sort()
    return lat[len(lat)//2]*1e6, lat[int(len(lat)*0.99)]*1e6
for label, port, name in [(a, int(b), c) for a, b, c in (x.split(",") for x in sys.argv[1:])]:
    m, p99 = run(port, name)
    print(f"{label}: median {m:.0f} us, p99 {p99:.0f} us")
