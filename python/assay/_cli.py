"""The `assay` command installed with the wheel: the same command line as
the Rust binary, run in-process by the extension."""

import signal
import sys

from assay import _assay


def main() -> None:
    # As the native binary: Ctrl-C ends a command that does not handle it;
    # `assay eval` installs its own handler (exit 130, what is done kept).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_assay.cli_main(["assay", *sys.argv[1:]]))
