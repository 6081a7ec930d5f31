"""`python -m certgen` is the same as the `certgen` console script."""

from certgen.cli import main

if __name__ == "__main__":
    main()
