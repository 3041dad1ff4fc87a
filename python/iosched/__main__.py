"""``python -m iosched``: see :mod:`iosched.cli`."""

from iosched.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
