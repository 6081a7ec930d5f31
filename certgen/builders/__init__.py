"""The builders: gather inputs into records, render them in memory, write through the Writer.

One module per kind of output, in the shape static-site generators use:
- certgen.builders.report: before/after reports (`certgen compare`);
- certgen.builders.certificate: certificates (`certgen build`), with the cache and the process pool;
- certgen.builders.site: the publishable site (`certgen site`, `certgen demo`).
Only builders call the Writer; commands/ parse options, call a builder and print.
"""
