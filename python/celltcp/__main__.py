"""``python -m celltcp`` is the ``celltcp`` command."""

from .cli import main

raise SystemExit(main())
