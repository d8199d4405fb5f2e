"""The small tree of errors encbench raises; each message says what to do about it.

`BadInput` is the user's to fix (exit 2, one line).  `ToolError` means an external program
failed; it carries the command, phase and the tail of its output (`ServerError`: a server
died or hung, with the tail of its error log).  `ProofError` means a variant is not what it
claims to be (encrypted when it should be plain, or the reverse).  `Interrupted` is no
error at all: a stop, which nothing but the CLI's top may catch.
"""

from __future__ import annotations


class EncbenchError(Exception):
    """Base of every error encbench reports without a traceback."""

    exit_code = 1


class BadInput(EncbenchError):
    """The user asked for something impossible; the message names the problem and the fix."""

    exit_code = 2


class ToolError(EncbenchError):
    """An external program failed or timed out."""

    def __init__(
        self,
        message: str,
        *,
        argv: list[str] | None = None,
        returncode: int | None = None,
        phase: str = "",
        tail: str = "",
        hint: str = "",
    ) -> None:
        self.argv = argv or []
        self.returncode = returncode
        self.phase = phase
        self.tail = tail
        self.hint = hint
        parts = [f"{phase}: {message}" if phase else message]
        if returncode is not None:
            parts.append(f"(exit {returncode})")
        if hint:
            parts.append(f"— {hint}")
        super().__init__(" ".join(parts))

    def details(self) -> str:
        """Multi-line detail for logs: the command and the tail of what it printed."""
        lines = [str(self)]
        if self.argv:
            lines.append("command: " + " ".join(self.argv))
        if self.tail:
            lines.append("last output:\n" + self.tail)
        return "\n".join(lines)


class ServerError(ToolError):
    """A server encbench talks to died, stopped answering, or refused a statement.  The message
    names the server and the cause in one line; details() adds the tail of its error log."""


class ProofError(EncbenchError):
    """A variant failed the proof that it is (or is not) encrypted; measuring it would lie."""


class Interrupted(BaseException):
    """A stop was asked for (Ctrl-C, SIGTERM, a closed terminal: encbench/stopping.py);
    raised in the main thread so every context manager unwinds.  Like KeyboardInterrupt, not
    an Exception, let alone an EncbenchError: no handler of failures (a retry, a fallback, a
    tool whose failure only costs a detail) may take a stop for one and carry on."""

    exit_code = 130
