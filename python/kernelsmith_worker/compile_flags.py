"""Which extra compiler flags a candidate may pass to cpu_ext.

extra_cflags are candidate input like the source: a flag can bring in code the source does not
show (an input file or static archive linked in with its symbols made local, a linker script,
a compiler plugin, a header forced in with -include). Only code-generation flags and links
against the C/C++ runtime are allowed:

- -O<level>, -m<target option> (-march=, -mtune=, -mavx2, ...), -f<option> (-fopenmp,
  -ffast-math, ...; not plugins or another linker), -D<macro>/-U<macro>, -std=<standard>,
  -W<warning> (not -Wl, -Wa, -Wp, which pass options to other tools), -w, -g<level>,
  -pthread;
- -l<name> for a runtime library (library_reach.runtime_name: libm, libmvec, libpthread,
  libgomp, ...);
- -I<dir> for a system header folder (/usr/include, /usr/local/include).

Everything else (input files, -Wl,/-Xlinker, -B, -L, -specs, -include, -x, @file, -static,
-o, ...) is refused with the flag and the rule in the message.
"""

from __future__ import annotations

import os
import re

from kernelsmith_worker import library_reach

_CODEGEN_RE = re.compile(
    r"^(?:-O(?:[0-3sgz]|fast)?|-m(?!llvm$)[A-Za-z0-9][\w.,=+-]*|-f[a-z][\w.,=+-]*|"
    r"-[DU][A-Za-z_]\w*(?:=.*)?|-std=[\w+]+|-W(?![lap],)[a-z][\w=+-]*|-w|-g[\w=-]*|-pthread)$")
# -f options that load code into the compiler or choose the tools that link
_TOOL_F_RE = re.compile(r"^-f(?:plugin|pass-plugin|load|use-ld|ld-path|rtlib|gnu-tm)")
_SYSTEM_INCLUDES = ("/usr/include", "/usr/local/include")

ALLOWED = ("-O<level>, -m<target option>, -f<option> (no plugins, no -fuse-ld), -D/-U<macro>, "
           "-std=<standard>, -W<warning> (not -Wl,/-Wa,/-Wp,), -w, -g, -pthread, -l<runtime "
           "library> (m, mvec, pthread, gomp, ...), -I<system header folder>")


def refused_flag(flag: object) -> str | None:
    """Why `flag` may not be passed to the compiler, or None when it is allowed."""
    if not isinstance(flag, str):
        return f"{flag!r} is not a string"
    if _CODEGEN_RE.match(flag):
        if _TOOL_F_RE.match(flag):
            return f"{flag!r} loads a plugin or chooses the linker"
        return None
    if flag.startswith("-l") and len(flag) > 2 and not flag.startswith("-l:"):
        if library_reach.runtime_name(f"lib{flag[2:]}.so"):
            return None
        return f"{flag!r} links a library outside the C/C++ runtime"
    if flag.startswith("-I") and len(flag) > 2:
        where = os.path.realpath(flag[2:])
        if any(where == d or where.startswith(d + os.sep) for d in _SYSTEM_INCLUDES):
            return None
        return f"{flag!r} adds a header folder outside the system's"
    if not flag.startswith("-") or flag.startswith("@"):
        return f"{flag!r} is an input file for the compiler or linker"
    return f"{flag!r} is not a code-generation flag"


def flag_findings(flags: list[str] | tuple[str, ...] | None) -> list[str]:
    """One 'why' per refused flag, in order."""
    if flags is None:
        return []
    if isinstance(flags, str) or not isinstance(flags, (list, tuple)):
        return [f"extra_cflags must be a list of strings, got {type(flags).__name__}"]
    return [why for f in flags if (why := refused_flag(f)) is not None]
