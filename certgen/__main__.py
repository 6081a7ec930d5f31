"""`python -m certgen` is the same as the `certgen` console script (`sys.exit(main())`)."""

import sys

from certgen.cli import main

if __name__ == "__main__":
    # main() returns the exit code of a command that ends with click's Exit (metrics, check).
    sys.exit(main())
