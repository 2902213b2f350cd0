#!/usr/bin/env python3
"""Prints N distinct TCP ports on 127.0.0.1 (default 1) that are free now, one per line, for a process started
later to listen on.

They come from below the kernel's ephemeral range (net.ipv4.ip_local_port_range), not from bind(0): a port from
that range can be taken as the source port of any outgoing connection between the choice and the listen, and
two bind(0) calls made one after the other may return the same port. hack/test.sh once failed on that:
`kube-apiserver ... bind: address already in use`."""
import random
import socket
import sys


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    high = min(ephemeral_low(), 65536) - 1
    low = 10000 if high > 12000 else 1024
    chosen, held = [], []
    while len(chosen) < count:
        port = random.randint(low, high)
        if port in chosen:
            continue
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            s.close()
            continue
        held.append(s)
        chosen.append(port)
    for s in held:
        s.close()
    print("\n".join(map(str, chosen)))


main()
