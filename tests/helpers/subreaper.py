"""Runs its arguments as a child of a child subreaper (see SUBREAPER in sockets.ts)."""
import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("subreaper.py: prctl(PR_SET_CHILD_SUBREAPER) failed")
child = os.fork()
if child == 0:
    # Should this process be killed, the command hears of it (SIGTERM) rather than running on.
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    os.execvp(sys.argv[1], sys.argv[1:])
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, lambda number, _frame: os.kill(child, number))
while True:
    try:
        pid, status = os.wait()
    except ChildProcessError:
        sys.exit(1)
    except InterruptedError:
        continue
    if pid == child:
        code = os.waitstatus_to_exitcode(status)
        sys.exit(code if code >= 0 else 128 - code)
