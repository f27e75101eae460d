"""``python -m benchmarks``: time scatterops against its peers (see ``run.py``)."""
import sys

from .run import main

sys.exit(main())
