"""What the command-line tests share."""

from collections.abc import Callable

import pytest

from rsutils.cli import main


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[[list[str]], tuple[int, str]]:
    """``run_cli(argv)``: the exit status and stderr of ``python -m rsutils argv`` run by
    its main function in this process (argparse's exits included); a user's mistake
    never shows a traceback."""

    def run(argv: list[str]) -> tuple[int, str]:
        try:
            status = main(argv)
        except SystemExit as stop:
            status = int(stop.code or 0)
        err = capsys.readouterr().err
        assert "Traceback" not in err
        return status, err

    return run
