import sys

from extract.cli import main

sys.exit(main())
