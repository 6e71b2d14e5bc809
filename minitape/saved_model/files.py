"""Reading a saved model's two files safely: regular files inside the model
directory only (never through a link, never a FIFO), within the size limits;
JSON with bounded item counts, integer lengths and nesting; the `.npz` zip
checked from its own directory before anything is decompressed, and each
`.npy` header checked against the declared spec. No pickle."""
import errno
import json
import os
import re
import stat
import struct
import zipfile
import zlib

import numpy as np

from .format import NPZ_NAME, LoadError, spec_text
from .limits import MAX_ARRAY_BYTES, MAX_INT_DIGITS, NPY_HEADER_BYTES, json_problem, nbytes


DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_NONBLOCK", 0)
OPEN_IN_DIRECTORY = os.open in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
    | getattr(os, "O_BINARY", 0)


def _open_file(directory, name, max_bytes):
    """Open `name` inside the open directory `directory`: only a regular file,
    never through a symbolic link, never blocking (a FIFO is refused, not
    waited on), at most `max_bytes` long. Returns (file object, size)."""
    try:
        if isinstance(directory, int):
            fd = os.open(name, _FILE_FLAGS, dir_fd=directory)
        elif os.path.islink(os.path.join(directory, name)):
            raise OSError(errno.ELOOP, "is a symbolic link")
        else:
            fd = os.open(os.path.join(directory, name), _FILE_FLAGS)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise LoadError("is a symbolic link; a saved model's files must be regular "
                            "files in its directory") from None
        raise LoadError(f"cannot open: {e.strerror}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
        os.close(fd)
        raise LoadError("is not a regular file" if not stat.S_ISREG(info.st_mode) else
                        f"is {info.st_size} bytes, more than the limit of {max_bytes}")
    return os.fdopen(fd, "rb"), info.st_size


def read_file(directory, name, max_bytes):
    f, _ = _open_file(directory, name, max_bytes)
    with f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise LoadError(f"is more than the limit of {max_bytes} bytes")
    return data


def parse_json(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LoadError(f"not UTF-8 text (byte {e.start})") from None
    problem = json_problem(text)
    if problem:
        raise LoadError(problem)
    try:
        return json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as e:
        raise LoadError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") \
            from None
    except _LongInteger as e:
        line, column = _line_column(text, text.find(e.args[0]))
        raise LoadError(f"line {line} column {column}: an integer of {len(e.args[0])} "
                        f"digits (at most {MAX_INT_DIGITS})") from None
    except RecursionError:
        line, column = _line_column(text, _too_deep(text))
        raise LoadError(f"line {line} column {column}: JSON nested too deeply") from None


class _LongInteger(Exception):
    pass


def _json_int(digits):
    """Integers as `json` reads them, refusing absurdly long ones early (Python
    would otherwise stop at 4300 digits with a message that names no place)."""
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _LongInteger(digits)
    return int(digits)


def _line_column(text, offset):
    offset = max(offset, 0)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _too_deep(text):
    """Where the brackets of `text` (outside strings) nest deeper than 100."""
    depth = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        if m.group() in "[{":
            depth += 1
            if depth > 100:
                return m.start()
        elif m.group() in "]}":
            depth -= 1
    return 0


def read_arrays(directory, expected):
    """The arrays of the `.npz` file (a zip of `.npy` files), each checked
    against `expected` (name -> TensorSpec) before its data is read. Sizes come
    from the declared specs, and the zip's own directory is checked before
    `zipfile` reads it, so nothing is decompressed or allocated beyond the
    declared sizes. No pickle."""
    slack = NPY_HEADER_BYTES * (len(expected) + 1)
    f, size = _open_file(directory, NPZ_NAME, MAX_ARRAY_BYTES + slack)
    with f:
        _check_zip_end(f, size, len(expected))
        try:
            z = zipfile.ZipFile(f)
        except _ZIP_ERRORS as e:
            raise LoadError(f"not a zip file: {e}") from None
        with z:
            infos = {i.filename: i for i in z.infolist()}
            names = {f"{n}.npy" for n in expected}
            if len(infos) != len(z.infolist()) or set(infos) != names:
                missing, extra = sorted(names - set(infos)), sorted(set(infos) - names)
                detail = f"missing array {missing[0][:-4]!r}" if missing else \
                    f"unexpected entry {extra[0]!r}" if extra else "duplicate entries"
                raise LoadError(f"{detail} (saved_model.json declares {len(expected)} "
                                "arrays)")
            arrays = {}
            for name in sorted(expected):
                info, spec = infos[f"{name}.npy"], expected[name]
                where = f"array {name}"
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or \
                        info.flag_bits & 0x41 or \
                        not nbytes(spec) <= info.file_size <= nbytes(spec) + NPY_HEADER_BYTES:
                    raise LoadError(f"{where}: its zip entry is not a stored or deflated, "
                                    f"unencrypted .npy of the declared {spec_text(spec)}")
                try:
                    with z.open(info) as npy:
                        arrays[name] = _read_npy(npy, spec, where)
                except _ZIP_ERRORS as e:
                    raise LoadError(f"{where}: cannot read: {type(e).__name__}: {e}") \
                        from None
    return arrays


# What zipfile and zlib raise for damaged or unsupported archives (versions,
# compression methods, encryption); anything else is a gap in the checks.
_ZIP_ERRORS = (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError,
               RuntimeError, zlib.error, struct.error)


def _check_zip_end(f, size, count):
    """Read the zip's end record (its last 22 bytes, before any comment): it
    must list `count` entries in a small central directory, without zip64
    records, so that `zipfile` has little to parse."""
    f.seek(max(0, size - 22 - 65535))
    tail = f.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise LoadError("not a zip file (no end record)")
    entries, directory_size = struct.unpack("<HI", tail[at + 10:at + 16])
    if tail[max(0, at - 20):at - 16] == b"PK\x06\x07" or entries != count or \
            directory_size > (count + 1) * 1024:
        raise LoadError(f"its zip directory lists {entries} entries in {directory_size} "
                        f"bytes (saved_model.json declares {count} arrays)")


def _read_npy(f, spec, where):
    """One `.npy` entry: header checked against the declared spec, then exactly
    that many bytes of data (never pickle)."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f"unsupported .npy version {version}")
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else \
            fmt.read_array_header_2_0
        shape, fortran, dtype = read_header(f)
    except Exception as e:
        raise LoadError(f"{where}: bad .npy header: {e}") from None
    if dtype.hasobject or dtype.newbyteorder("=") != spec.dtype.newbyteorder("="):
        raise LoadError(f"{where}: holds dtype {dtype}, saved_model.json declares "
                        f"{spec.dtype}")
    if tuple(shape) != spec.shape:
        raise LoadError(f"{where}: has shape {tuple(shape)}, saved_model.json declares "
                        f"{spec.shape}")
    n = nbytes(spec)
    data = f.read(n)
    if len(data) != n:
        raise LoadError(f"{where}: truncated ({len(data)} of {n} bytes)")
    if f.read(1):
        raise LoadError(f"{where}: has data after the array")
    array = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    return np.array(array, dtype=spec.dtype)
