"""A minimal PMI-1 client used as an MPI rank by the mpiexec tests.

Usage: pmi_rank.py MODE [ARG]; modes: exchange, abort CODE, nofinalize,
shm, exit CODE.
"""
import os
import re
import socket
import sys
import time

fd = int(os.environ["PMI_FD"])
rank = int(os.environ["PMI_RANK"])
size = int(os.environ["PMI_SIZE"])
sock = socket.socket(fileno=fd)
rfile = sock.makefile("r")


def call(line, expect):
    sock.sendall((line + "\n").encode())
    reply = rfile.readline()
    fields = dict(tok.split("=", 1) for tok in reply.split())
    assert fields.get("cmd") == expect, (line, reply)
    return fields


def init():
    r = call("cmd=init pmi_version=1 pmi_subversion=1", "response_to_init")
    assert r["rc"] == "0"
    call("cmd=get_maxes", "maxes")
    call("cmd=get_appnum", "appnum")
    kvs = call("cmd=get_my_kvsname", "my_kvsname")["kvsname"]
    assert call("cmd=get_universe_size", "universe_size")["size"] == str(size)
    return kvs


mode = sys.argv[1]
kvs = init()
if mode == "exchange":
    call(f"cmd=put kvsname={kvs} key=k{rank} value=v{rank * 11}", "put_result")
    call("cmd=barrier_in", "barrier_out")
    got = [call(f"cmd=get kvsname={kvs} key=k{p}", "get_result")["value"] for p in range(size)]
    assert got == [f"v{p * 11}" for p in range(size)], got
    miss = call(f"cmd=get kvsname={kvs} key=nope", "get_result")
    assert miss["rc"] != "0"
    mapping = call(f"cmd=get kvsname={kvs} key=PMI_process_mapping", "get_result")["value"]
    print(f"rank {rank} of {size} got {','.join(got)} map {mapping}", flush=True)
    call("cmd=finalize", "finalize_ack")
elif mode == "abort":
    sock.sendall(f"cmd=abort exitcode={sys.argv[2]}\n".encode())
    time.sleep(30)
elif mode == "nofinalize":
    call("cmd=barrier_in", "barrier_out")
    sys.exit(0)
elif mode == "shm":
    prefix = "oxmpi-" + re.sub(r"[^A-Za-z0-9_]", "_", kvs) + "-"
    path = f"/dev/shm/{prefix}seg{rank}"
    open(path, "w").close()
    print(path, flush=True)
    call("cmd=barrier_in", "barrier_out")
    call("cmd=finalize", "finalize_ack")
elif mode == "exit":
    call("cmd=finalize", "finalize_ack")
    sys.exit(int(sys.argv[2]))
else:
    sys.exit(f"unknown mode {mode}")
