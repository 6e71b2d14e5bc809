"""What the answer's process may do once the answer's code has started: an
audit hook (PEP 578) and resource limits.

`sys.addaudithook` installs a hook that CPython calls, from C, before each
sensitive action; a hook cannot be removed, and raising in it stops the
action. `Hook` refuses, from the moment it is armed (just before the first
line of an answer runs) to the end of the process:

- opening a file outside the Python installation and packages (read only)
  and the process's own temporary directory (where it may also write), and
  listing, creating, renaming or removing anything outside that directory;
  so the course folder (`source/`, `release/`, `gradebook.db`) is closed;
- starting processes (subprocess, os.system, exec, spawn, fork), sockets,
  ctypes, mmap, signals, new threads, changed limits, environment
  variables, pickle's class lookup, other audit hooks, new code or function
  objects made by hand;
- reading the interpreter's state: gc.get_objects/get_referrers/get_referents,
  sys._current_frames, and, when the answer's own code asks, sys._getframe,
  settrace, setprofile, sys.monitoring, a traceback's or generator's frame,
  a function's `__code__`;
- compiling or running code, and marshal.loads, unless the caller is the
  grader itself, minitape's compiler (`mt.function(jit_compile=True)`) or
  `collections.namedtuple`, or a module is being imported (NumPy imports
  some modules on first use, and their code may compile): a library that
  evaluates a string it was given (typing's string annotations, say) would
  run it outside the other layer.

"The answer's code" is code compiled with a file name starting with
`ANSWER`: the frame that made the call tells. The hook keeps every refusal
in `problems`, so an answer that catches the error still fails. The
rewritten answer code cannot reach any of this (`minitape.grading.restricted`);
the hook holds also for whatever path to these actions that layer misses.
(CPython raises no audit event for `SomeClass.attr = x` or for reading a
closure: those are the other layer's.)
"""
import os
import resource
import sys

ANSWER = "<answer"
# Events refused outright once armed.
_REFUSED = (
    "subprocess.", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork",
    "os.forkpty", "os.kill", "os.killpg", "os.putenv", "os.unsetenv", "os.setuid",
    "os.chroot", "pty.", "socket.", "ctypes.", "mmap.", "_thread.start", "sys.addaudithook",
    "resource.setrlimit", "resource.prlimit", "pickle.find_class", "sys._current_frames",
    "gc.get_", "sys.setrecursionlimit", "cpython.PyInterpreterState", "cpython.run_",
    "code.__new__", "function.__new__", "builtins.input", "builtins.breakpoint",
    "webbrowser.", "urllib.", "http.", "ftplib.", "smtplib.", "imaplib.", "poplib.",
    "nntplib.", "telnetlib.", "winreg.", "signal.", "os.setsid", "os.nice", "sqlite3.",
    "os.chdir", "os.fchdir")
# Refused when the answer's own code is the caller.
_ANSWER_ONLY = ("sys._getframe", "sys._getframemodulename", "sys.settrace", "sys.setprofile",
                "sys.monitoring", "object.__getattr__", "object.__setattr__",
                "object.__delattr__")
# Allowed only when the caller is one of these files (or Python's import system).
_CODE_EVENTS = ("compile", "exec", "marshal.")
_IMPORT_SYSTEM = "<frozen importlib"
# Events that change or list files, and which argument holds the path.
_PATH_EVENTS = {"os.listdir": 0, "os.scandir": 0, "os.chmod": 0,
                "os.chown": 0, "os.mkdir": 0, "os.remove": 0, "os.rmdir": 0, "os.rename": 0,
                "os.link": 0, "os.symlink": 0, "os.truncate": 0, "os.utime": 0,
                "os.setxattr": 0, "os.removexattr": 0, "os.listxattr": 0, "glob.glob": 0,
                "shutil.copyfile": 1, "shutil.copymode": 1, "shutil.copystat": 1,
                "shutil.copytree": 1, "shutil.move": 1, "shutil.rmtree": 0,
                "shutil.make_archive": 0, "shutil.unpack_archive": 1}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# A directory outside the process's own opened as a file descriptor would let a relative
# path escape these checks (os.open(path, dir_fd=...) reports only the path).
_DIRECTORY_FLAGS = os.O_DIRECTORY | getattr(os, "O_PATH", 0)


def read_roots():
    """The folders whose files the answer's process may read: Python's own
    library and the folders of the packages the answer uses."""
    import numpy

    import minitape
    folders = {os.path.dirname(os.__file__), os.path.dirname(numpy.__file__),
               os.path.dirname(minitape.__file__)}
    dynload = os.path.join(os.path.dirname(os.__file__), "lib-dynload")
    folders.add(dynload)
    return sorted({os.path.realpath(f) for f in folders})


def _normal(path, cwd):
    """`path` made absolute and normalised with string operations only (no
    function an answer could have influenced); None for what is not a path."""
    if isinstance(path, bytes):
        try:
            path = path.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(path, str) or "\x00" in path:
        return None
    if not path.startswith("/"):
        path = cwd + "/" + path
    parts = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/" + "/".join(parts)


def _inside(path, roots):
    return path is not None and any(path == r or path.startswith(r + "/") for r in roots)


class Hook:
    """The audit hook. `writable` is the process's temporary directory
    (realpath); `readable` the folders of `read_roots()`; `compilers` the
    files whose code may compile and run code (the grader's own and
    minitape's compiler)."""

    def __init__(self, writable, readable, compilers=()):
        self.compilers = frozenset(compilers)
        self.writable = (writable,)
        self.readable = tuple(readable) + self.writable
        self.cwd = writable
        self.armed = False
        self.problems = []
        self._busy = False
        self._getframe = sys._getframe

    def _caller(self):
        """The file name of the code that made the audited call."""
        try:
            frame = self._getframe(3)  # 0: this method, 1: _check, 2: __call__, 3: the caller
        except ValueError:
            return ""
        return frame.f_code.co_filename

    def _importing(self):
        """Whether Python's import system is on the stack: a module being
        imported (NumPy loads some on first use) compiles what it needs."""
        frame = self._getframe(3)
        while frame is not None:
            if frame.f_code.co_filename.startswith(_IMPORT_SYSTEM):
                return True
            frame = frame.f_back
        return False

    def _refuse(self, what):
        self.problems.append(what)
        raise PermissionError(f"not allowed while grading: {what}")

    def __call__(self, event, args):
        if not self.armed or self._busy:
            return
        self._busy = True
        try:
            self._check(event, args)
        finally:
            self._busy = False

    def _check(self, event, args):
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int):  # an open file descriptor
                if path > 2:
                    self._refuse(f"open(fd {path})")
                return
            full = _normal(path, self.cwd)
            if isinstance(flags, int) and flags & _DIRECTORY_FLAGS and not _inside(
                    full, self.writable):
                self._refuse(f"open({path!r}) as a directory")
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS)
            if not _inside(full, self.writable if writes else self.readable):
                self._refuse(f"open({path!r}, {'write' if writes else 'read'})")
        elif event in _PATH_EVENTS:
            where = args[_PATH_EVENTS[event]] if len(args) > _PATH_EVENTS[event] else None
            paths = [where] + ([args[1]] if event in ("os.rename", "os.link", "os.symlink")
                               and len(args) > 1 else [])
            lists = event in ("os.listdir", "os.scandir", "os.listxattr", "glob.glob")
            if where is None and lists:
                paths = [self.cwd]
            for path in paths:
                if isinstance(path, int):  # a descriptor: it came through the open check
                    continue
                if not _inside(_normal(path, self.cwd), self.readable if lists else self.writable):
                    self._refuse(f"{event}({path!r})")
        elif event.startswith(_REFUSED):
            self._refuse(event)
        elif event.startswith(_ANSWER_ONLY) and self._caller().startswith(ANSWER):
            self._refuse(event)
        elif event.startswith(_CODE_EVENTS):
            caller = self._caller()
            if caller not in self.compilers and not self._importing():
                self._refuse(f"{event} (called from {caller})")
        elif event == "object.__setattr__" and args[1] == "__class__":
            self._refuse("changing an object's __class__")
        elif event == "import" and args[0].split(".")[0] in (
                "ctypes", "subprocess", "socket", "multiprocessing", "pty", "mmap"):
            self._refuse(f"import {args[0]}")


def limit_resources(cpu_seconds, memory_bytes, file_bytes=64 * 2**20):
    """CPU time, address space and file size limits for this process (the
    parent also kills it after a wall-clock timeout). Past the CPU limit the
    process gets SIGXCPU, and SIGKILL two seconds later."""
    for which, soft, hard in ((resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 2),
                              (resource.RLIMIT_AS, memory_bytes, memory_bytes),
                              (resource.RLIMIT_FSIZE, file_bytes, file_bytes),
                              (resource.RLIMIT_CORE, 0, 0)):
        current = resource.getrlimit(which)[1]
        if current != resource.RLIM_INFINITY:
            soft, hard = min(soft, current), min(hard, current)
        resource.setrlimit(which, (soft, hard))
