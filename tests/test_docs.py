"""Generated documentation stays in sync with the code."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_error_table_is_up_to_date():
    """docs/errors.md is produced by running every bad-input case of test_validation.py and
    test_adapter_validation.py."""
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "error_table.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr + "\nrun: python scripts/error_table.py"
