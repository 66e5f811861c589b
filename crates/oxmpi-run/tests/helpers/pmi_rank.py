"""A minimal PMI-1 client used as an MPI rank by the mpiexec tests.

Usage: pmi_rank.py MODE [ARG]; modes: exchange, abort CODE, nofinalize,
shm, exit CODE, multihost, sleep.

Connects through PMI_FD or, when only PMI_PORT is set (remote ranks), over
TCP with the initack handshake, presenting OXMPI_PMI_TOKEN as secret=.
"""
import hashlib
import os
import re
import socket
import subprocess
import sys
import time

rank = int(os.environ["PMI_RANK"])
size = int(os.environ["PMI_SIZE"])
if "PMI_FD" in os.environ:
    sock = socket.socket(fileno=int(os.environ["PMI_FD"]))
    rfile = sock.makefile("r")
else:
    host, port = os.environ["PMI_PORT"].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    rfile = sock.makefile("r")
    line = f"cmd=initack pmiid={os.environ['PMI_ID']}"
    if "OXMPI_PMI_TOKEN" in os.environ:
        line += f" secret={os.environ['OXMPI_PMI_TOKEN']}"
    sock.sendall((line + "\n").encode())
    got = {}
    for expect in ["initack", "set", "set", "set"]:
        reply = rfile.readline()
        fields = dict(tok.split("=", 1) for tok in reply.split())
        assert fields.get("cmd") == expect, (expect, reply)
        got.update(fields)
    assert got["rank"] == str(rank) and got["size"] == str(size), got


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
elif mode == "multihost":
    secret = os.environ.get("OXMPI_JOB_SECRET")
    source = "env"
    if secret is None:
        source = "kvs"
        secret = call(f"cmd=get kvsname={kvs} key=oxmpi-job-secret", "get_result")["value"]
    assert re.fullmatch(r"[0-9a-f]{64}", secret), secret
    digest = hashlib.sha256(secret.encode()).hexdigest()[:16]
    call(f"cmd=put kvsname={kvs} key=k{rank} value={digest}", "put_result")
    call("cmd=barrier_in", "barrier_out")
    got = [call(f"cmd=get kvsname={kvs} key=k{p}", "get_result")["value"] for p in range(size)]
    assert got == [digest] * size, got
    mapping = call(f"cmd=get kvsname={kvs} key=PMI_process_mapping", "get_result")["value"]
    ns = subprocess.run(["ip", "netns", "identify"], capture_output=True, text=True).stdout.strip()
    print(f"rank {rank} of {size} in {ns or 'root'} secret from {source} agreed map {mapping}",
          flush=True)
    print(f"stderr from {rank}", file=sys.stderr, flush=True)
    call("cmd=finalize", "finalize_ack")
elif mode == "sleep":
    print(os.getpid(), flush=True)
    call("cmd=barrier_in", "barrier_out")
    if rank == int(sys.argv[2]):
        time.sleep(0.5)
        os.kill(os.getpid(), 9)
    time.sleep(60)
elif mode == "rogue":
    # Tries to join the job again: with a wrong secret (refused quietly),
    # then with this rank's real credential (which must end the job).
    host, port = os.environ["PMI_PORT"].rsplit(":", 1)
    for secret in ["0" * 32, os.environ["OXMPI_PMI_TOKEN"]]:
        s2 = socket.create_connection((host, int(port)))
        s2.sendall(f"cmd=initack pmiid={rank} secret={secret}\n".encode())
        s2.settimeout(5)
        assert s2.recv(100) == b"", "rogue connection was answered"
        s2.close()
        print(f"closed after secret {secret[:4]}", flush=True)
    time.sleep(30)
elif mode == "exit":
    call("cmd=finalize", "finalize_ack")
    sys.exit(int(sys.argv[2]))
else:
    sys.exit(f"unknown mode {mode}")
